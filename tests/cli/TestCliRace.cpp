// ironlearn-cli race, end to end: the real executable, run with QProcess in a temporary
// directory on a small generated picture. Two presets race for a second with three checkpoints;
// the table, the JSON, the reconstructions and the CSV must agree, and bad inputs must give one
// line and a non-zero exit, writing nothing.
#include "CliPictures.h"
#include "CliRunner.h"

#include <QBuffer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

namespace {

using clitest::gradientPicture;
using clitest::isOneLine;
using clitest::writeBytes;

// The table row of preset: its whitespace-separated fields (empty if there is none).
QStringList tableRow(const QString& table, const QString& preset)
{
    for (const QString& line : table.split('\n')) {
        const QStringList fields = line.split(' ', Qt::SkipEmptyParts);
        if (!fields.isEmpty() && fields.first() == preset) return fields;
    }
    return {};
}

} // namespace

class TestCliRace : public CliTestCase {
    Q_OBJECT

public:
    TestCliRace() { m_timeoutMs = 120000; }

private:
    RunResult m_race; // hashgrid and classic, 1 s each, checkpoints 0.25, 0.5, 1
    QJsonObject m_json;

private slots:
    void initTestCase();
    void tableHasEveryPresetAndCheckpoint();
    void jsonAgreesWithTheTable();
    void outDirHasReconstructionsAndCsv();
    void defaultsRaceEveryPreset();
    void help();
    void badInput_data();
    void badInput();
    void measuringKeepsToTheBudget();
    void outputsAreChecked_data();
    void outputsAreChecked();
};

void TestCliRace::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFileInfo(IRONLEARN_CLI).isExecutable(), IRONLEARN_CLI);
    const QImage picture = gradientPicture();
    QVERIFY(picture.save(path("picture.png")));
    m_race = run({"race", "picture.png", "--seconds", "1", "--presets", "hashgrid,classic",
                  "--checkpoints", "0.25,0.5,1", "--threads", "1", "--out-dir", "out", "--json",
                  "race.json"});
    QVERIFY2(m_race.code == 0, qPrintable(m_race.err));
    QFile f(path("race.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    m_json = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(!m_json.isEmpty());
}

void TestCliRace::tableHasEveryPresetAndCheckpoint()
{
    const QString& out = m_race.out;
    QVERIFY2(out.startsWith("Race on picture.png at 48x32 (RGB), 1 s per preset:"),
             qPrintable(out));
    QVERIFY2(QRegularExpression(R"(preset +steps +steps/s +0\.25 s +0\.5 s +1 s +final dB +SSIM)")
                 .match(out)
                 .hasMatch(),
             qPrintable(out));
    QStringList finals;
    int winners = 0;
    double best = -1;
    QString bestPreset, winnerPreset;
    for (const QString preset : {"hashgrid", "classic"}) {
        const QStringList row = tableRow(out, preset);
        // preset, steps, steps/s, three checkpoints, final dB, SSIM [, <-, winner]
        QVERIFY2(row.size() == 8 || row.size() == 10, qPrintable(row.join('|')));
        for (int i = 1; i < 8; ++i) {
            bool ok = false;
            row[i].toDouble(&ok);
            QVERIFY2(ok, qPrintable(row.join('|')));
        }
        QVERIFY(row[1].toInt() > 0);
        QCOMPARE(row[5], row[6]); // the last checkpoint is the budget: the final weights
        const double ssim = row[7].toDouble();
        QVERIFY(ssim > 0 && ssim <= 1);
        if (row[6].toDouble() > best) best = row[6].toDouble(), bestPreset = preset;
        if (row.size() == 10) {
            QCOMPARE(row[8] + " " + row[9], QString("<- winner"));
            ++winners, winnerPreset = preset;
        }
    }
    QCOMPARE(winners, 1);
    QCOMPARE(winnerPreset, bestPreset);
    QVERIFY(tableRow(out, "siren").isEmpty()); // only the presets asked for
    QVERIFY2(m_race.err.contains("hashgrid: ") && m_race.err.contains("classic: "),
             qPrintable(m_race.err));
}

void TestCliRace::jsonAgreesWithTheTable()
{
    QCOMPARE(m_json["checkpoints"].toArray(), QJsonArray({0.25, 0.5, 1.0}));
    QCOMPARE(m_json["width"].toInt(), 48);
    QCOMPARE(m_json["height"].toInt(), 32);
    const QJsonArray presets = m_json["presets"].toArray();
    QCOMPARE(presets.size(), 2);
    QCOMPARE(presets[0]["preset"].toString(), "hashgrid");
    QCOMPARE(presets[1]["preset"].toString(), "classic");
    for (const QJsonValue& v : presets) {
        const QJsonObject e = v.toObject();
        const QString name = e["preset"].toString();
        const QStringList row = tableRow(m_race.out, name);
        QCOMPARE(row.value(1).toLongLong(), e["steps"].toInteger());
        // The budget was used in full, and each checkpoint holds a later state than the last.
        QCOMPARE(e["stop_reason"].toString(), "time budget reached");
        QVERIFY(e["seconds"].toDouble() >= 1.0);
        const QJsonArray psnr = e["psnr_db_at"].toArray(), steps = e["steps_at"].toArray();
        const QJsonArray seconds = e["seconds_at"].toArray(), ssim = e["ssim_at"].toArray();
        QCOMPARE(psnr.size(), 3);
        QCOMPARE(ssim.size(), 3);
        QCOMPARE(steps.size(), 3);
        QCOMPARE(seconds.size(), 3);
        for (int i = 0; i < 3; ++i) {
            // Copied at the first step boundary at or past the checkpoint (steps here take
            // milliseconds; the slack is for a busy machine).
            const double checkpoint = m_json["checkpoints"][i].toDouble();
            QVERIFY(seconds[i].toDouble() >= checkpoint);
            QVERIFY2(seconds[i].toDouble() < checkpoint + 0.5, qPrintable(name));
            QCOMPARE(row.value(3 + i), QString::number(psnr[i].toDouble(), 'f', 2));
            QVERIFY(steps[i].toInteger() > 0);
            QVERIFY(ssim[i].toDouble() > 0 && ssim[i].toDouble() <= 1);
            if (i > 0) QVERIFY(steps[i].toInteger() > steps[i - 1].toInteger());
        }
        QCOMPARE(steps[2].toInteger(), e["steps"].toInteger());
        QCOMPARE(ssim[2].toDouble(), e["ssim"].toDouble());
        // Measured on the weights of each checkpoint: the earliest is not the final picture.
        QVERIFY2(ssim[0].toDouble() != e["ssim"].toDouble(), qPrintable(name));
        QCOMPARE(psnr[2].toDouble(), e["psnr_db"].toDouble());
        QVERIFY(e["checkpoint_copy_seconds"].toDouble() < 0.1);
    }
    // The hash grid learns this picture within the second; its PSNR at a quarter second was
    // measured on the weights of then, not on the final ones.
    const QJsonObject hashgrid = presets[0].toObject();
    const QJsonArray psnr = hashgrid["psnr_db_at"].toArray();
    QVERIFY2(hashgrid["psnr_db"].toDouble() > 25, qPrintable(m_race.out));
    QVERIFY2(psnr[0].toDouble() < hashgrid["psnr_db"].toDouble(), qPrintable(m_race.out));
    QCOMPARE(m_json["winner"].toString(),
             presets[0]["psnr_db"].toDouble() > presets[1]["psnr_db"].toDouble() ? "hashgrid"
                                                                                 : "classic");
}

void TestCliRace::outDirHasReconstructionsAndCsv()
{
    for (const QString name : {"target", "hashgrid", "classic"}) {
        const QImage image(path("out/" + name + ".png"));
        QVERIFY2(!image.isNull(), qPrintable(name));
        QCOMPARE(image.size(), QSize(48, 32));
    }
    QCOMPARE(QDir(path("out")).entryList(QDir::Files).size(), 4);
    QFile f(path("out/psnr.csv"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split('\n');
    QCOMPARE(lines.size(), 4);
    QCOMPARE(lines[0], "seconds,hashgrid,classic");
    const QJsonArray presets = m_json["presets"].toArray();
    const QStringList times{"0.25", "0.5", "1"};
    for (int i = 0; i < 3; ++i) {
        const QStringList cells = lines[i + 1].split(',');
        QCOMPARE(cells.size(), 3);
        QCOMPARE(cells[0], times[i]);
        for (int p = 0; p < 2; ++p)
            QVERIFY(std::fabs(cells[p + 1].toDouble() -
                              presets[p]["psnr_db_at"].toArray()[i].toDouble()) < 1e-4);
    }
    // The last reconstruction is the final weights: its PSNR against the target is the final one.
    const QImage target(path("out/target.png")), hashgrid(path("out/hashgrid.png"));
    double mse = 0;
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 48; ++x) {
            const QRgb a = target.pixel(x, y), b = hashgrid.pixel(x, y);
            for (const int d : {qRed(a) - qRed(b), qGreen(a) - qGreen(b), qBlue(a) - qBlue(b)})
                mse += d * d / (255.0 * 255.0);
        }
    const double psnr = 10 * std::log10(48 * 32 * 3 / std::max(mse, 1e-12));
    // 8-bit rounding of the reconstruction costs a little at high PSNR.
    QVERIFY2(std::fabs(psnr - presets[0]["psnr_db"].toDouble()) < 3 ||
                 (psnr > 45 && presets[0]["psnr_db"].toDouble() > 45),
             qPrintable(QString::number(psnr)));
}

void TestCliRace::defaultsRaceEveryPreset()
{
    const RunResult r = run({"race", "picture.png", "--seconds", "0.2", "--threads", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    for (const QString preset : {"hashgrid", "siren", "fourier-relu", "classic"})
        QVERIFY2(tableRow(r.out, preset).size() >= 9, qPrintable(r.out));
    // The default checkpoints: up to three of the 1-2-5 series below the budget, then it.
    QVERIFY2(QRegularExpression(R"(steps/s +0\.02 s +0\.05 s +0\.1 s +0\.2 s +final dB)")
                 .match(r.out)
                 .hasMatch(),
             qPrintable(r.out));
    QCOMPARE(r.out.count("<- winner"), 1);
}

void TestCliRace::help()
{
    const RunResult r = run({"race", "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.startsWith("Usage: ironlearn-cli race IMAGE"), qPrintable(r.out));
    for (const char* option :
         {"--seconds", "--presets", "--checkpoints", "--image-size", "--threads", "--out-dir",
          "--json", "the weights are copied", "fourier-relu"})
        QVERIFY2(r.out.contains(option), option);
    QVERIFY(run({"--help"}).out.contains("race IMAGE"));
}

void TestCliRace::badInput_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mention");
    const QStringList pic{"picture.png"};
    QTest::newRow("unknown preset") << pic + QStringList{"--presets", "hashgrid,nope"} << 2
                                    << "\"nope\" (hashgrid, siren, fourier-relu, classic)";
    QTest::newRow("preset twice") << pic + QStringList{"--presets", "siren,siren"} << 2 << "twice";
    QTest::newRow("seconds text") << pic + QStringList{"--seconds", "ten"} << 2 << "--seconds";
    QTest::newRow("seconds 0") << pic + QStringList{"--seconds", "0"} << 2 << "--seconds";
    QTest::newRow("checkpoint past")
        << pic + QStringList{"--seconds", "1", "--checkpoints", "2"} << 2 << "outside the race";
    QTest::newRow("checkpoints down")
        << pic + QStringList{"--checkpoints", "5,2"} << 2 << "must increase";
    QTest::newRow("checkpoint text")
        << pic + QStringList{"--checkpoints", "1,x"} << 2 << "\"x\" is not a number";
    QTest::newRow("image size") << pic + QStringList{"--image-size", "2"} << 2 << "--image-size";
    QTest::newRow("threads") << pic + QStringList{"--threads", "many"} << 2 << "--threads";
    QTest::newRow("no image") << QStringList{} << 2 << "race IMAGE";
    QTest::newRow("missing file") << QStringList{"missing.png"} << 1 << "missing.png: no such file";
    QTest::newRow("table") << QStringList{"table.csv"} << 1
                           << "table.csv: not an image (race reads png";
    QTest::newRow("garbage") << QStringList{"garbage.png"} << 1 << "garbage.png: not an image";
    QTest::newRow("truncated") << QStringList{"cut.png"} << 1 << "cut.png: truncated PNG";
}

void TestCliRace::badInput()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, mention);
    QVERIFY(writeBytes(path("table.csv"), "a,b\n1,2\n3,4\n"));
    QVERIFY(writeBytes(path("garbage.png"), QByteArray(3000, '\x01')));
    QFile png(path("picture.png"));
    QVERIFY(png.open(QIODevice::ReadOnly));
    QVERIFY(writeBytes(path("cut.png"), png.readAll().left(80)));
    const RunResult r =
        run(QStringList{"race"} + args + QStringList{"--out-dir", "bad-out", "--json", "bad.json"});
    QCOMPARE(r.code, code);
    QVERIFY2(isOneLine(r.err) && r.err.contains(mention), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
    QVERIFY(!QFileInfo::exists(path("bad-out")) && !QFileInfo::exists(path("bad.json")));
}

// Measuring is bounded too: on a picture where one pass of the network over it takes longer
// than the budget, the final weights are measured once (the reconstruction drawn in the same
// pass) and no checkpoint pass runs past the budget again. The race used to measure every
// checkpoint and then draw the reconstruction, a pass each: --seconds 0.05 on a 2048x2048
// picture took 107 s.
void TestCliRace::measuringKeepsToTheBudget()
{
    QImage big(512, 512, QImage::Format_Grayscale8);
    for (int y = 0; y < 512; ++y)
        for (int x = 0; x < 512; ++x)
            big.scanLine(y)[x] = static_cast<uchar>((x * 7 + y * 3) & 255);
    QVERIFY(big.save(path("big.png")));
    QElapsedTimer timer;
    timer.start();
    const RunResult r = run({"race", "big.png", "--presets", "siren", "--seconds", "0.3",
                             "--checkpoints", "0.03,0.06,0.09,0.12,0.15,0.18,0.21,0.24,0.27,0.3",
                             "--threads", "1", "--out-dir", "big-out", "--json", "big.json"});
    const double wall = timer.elapsed() / 1000.0;
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile f(path("big.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject siren =
        QJsonDocument::fromJson(f.readAll()).object()["presets"].toArray()[0].toObject();
    QVERIFY2(siren.contains("measure_pass_seconds"), "no measure_pass_seconds");
    const double pass = siren["measure_pass_seconds"].toDouble();
    const double measuring = siren["measure_seconds"].toDouble();
    const QString figures = QString("wall %1 s, pass %2 s, measuring %3 s, unmeasured %4")
                                .arg(wall)
                                .arg(pass)
                                .arg(measuring)
                                .arg(siren["unmeasured_checkpoints"].toInt());
    // Training 0.3 s, then one pass, then checkpoint passes within 0.3 s; 2 s for the rest
    // (starting, reading the picture, building the network, writing the files).
    QVERIFY2(pass > 0 && measuring <= pass + 0.3 + 0.05, qPrintable(figures));
    QVERIFY2(wall <= 0.3 + pass + 0.3 + 2.0, qPrintable(figures));
    // A checkpoint of an earlier step than the last needs a pass of its own; one of the last
    // step is the final weights, measured already. On a loaded machine the 0.3 s may hold so
    // few steps that every checkpoint is of the last (seen under ctest -j2 beside
    // testBackendOps: a 2.5 s pass, every checkpoint measured, none skipped).
    bool earlier = false;
    for (const QJsonValue& step : siren["steps_at"].toArray())
        earlier = earlier || (step.isDouble() && step.toInteger() < siren["steps"].toInteger());
    if (pass > 0.3 && earlier) { // as on any machine so far (about 1 s)
        QVERIFY2(siren["unmeasured_checkpoints"].toInt() > 0, qPrintable(figures));
        QVERIFY2(r.out.contains("not measured (-)"), qPrintable(r.out));
    }
    QCOMPARE(QImage(path("big-out/siren.png")).size(), QSize(512, 512));
}

// Race outputs go through train's output checks before any work: the picture raced on, or two
// outputs naming one file, are refused in one line (exit 2) and nothing is written. (The race
// used to replace DIR/target.png or DIR/PRESET.png when raced on, and let --json and psnr.csv
// overwrite each other.)
void TestCliRace::outputsAreChecked_data()
{
    QTest::addColumn<QString>("picture"); // copied from picture.png, raced on
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("says");
    QTest::newRow("input is DIR/target.png")
        << "dir1/target.png" << QStringList{"--out-dir", "dir1"}
        << "--out-dir dir1/target.png: is the input file dir1/target.png";
    QTest::newRow("input is DIR/PRESET.png")
        << "dir2/classic.png" << QStringList{"--out-dir", "dir2"}
        << "--out-dir dir2/classic.png: is the input file";
    QTest::newRow("input by another path")
        << "dir3/target.png" << QStringList{"--out-dir", "./dir3/../dir3"} << "is the input file";
    QTest::newRow("--json is DIR/psnr.csv")
        << "pic4.png" << QStringList{"--out-dir", "dir4", "--json", "dir4/psnr.csv"}
        << "--json and --out-dir name the same file, dir4/psnr.csv; each output needs its own";
    QTest::newRow("--json is the input")
        << "pic5.png" << QStringList{"--json", "pic5.png"} << "--json pic5.png: is the input file";
    QTest::newRow("--out-dir is a file")
        << "pic6.png" << QStringList{"--out-dir", "pic6.png"} << "is a file, not a folder";
}

void TestCliRace::outputsAreChecked()
{
    QFETCH(QString, picture);
    QFETCH(QStringList, args);
    QFETCH(QString, says);
    for (const char* dir : {"dir1", "dir2", "dir3", "dir4"})
        QVERIFY(QDir(m_dir.path()).mkpath(dir));
    QFile::remove(path(picture));
    QVERIFY(QFile::copy(path("picture.png"), path(picture)));
    QVERIFY(writeBytes(path("dir4/psnr.csv"), "an existing table\n"));
    const QByteArray before = clitest::readBytes(path(picture));
    const RunResult r = run(QStringList{"race", picture, "--seconds", "0.05", "--presets",
                                        "classic", "--threads", "1"} +
                            args);
    QCOMPARE(r.code, 2);
    QVERIFY2(isOneLine(r.err) && r.err.contains(says), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
    QCOMPARE(clitest::readBytes(path(picture)), before);
    QCOMPARE(clitest::readBytes(path("dir4/psnr.csv")), QByteArray("an existing table\n"));
    // Nothing written next to the picture, no temporary file left.
    if (picture.contains('/'))
        QCOMPARE(QFileInfo(path(picture)).dir().entryList(QDir::Files | QDir::Hidden),
                 QStringList{QFileInfo(picture).fileName()});
    QCOMPARE(QDir(path("dir4")).entryList(QDir::Files | QDir::Hidden), QStringList{"psnr.csv"});
}

QTEST_GUILESS_MAIN(TestCliRace)
#include "TestCliRace.moc"
