// ironlearn-cli on hostile or damaged inputs: a model file is trusted no more than
// the options it stands in for, text from a file cannot break a message's line or drive the
// terminal, and each refusal has the exit code of what is at fault (1 a file, 2 the options)
// and names the file.
#include "CliRunner.h"

#include "SafeTensors.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <limits>

namespace {

using clitest::readBytes;
using clitest::writeBytes;

using Change = std::function<void(il::io::SafeTensorsFile&)>;

// One line, and none of the characters a file could use to break it or drive the terminal.
bool isCleanLine(const QString& text)
{
    const QString t = text.trimmed();
    return !t.isEmpty() && !t.contains('\n') && !t.contains('\r') && !t.contains(QChar(0x1b)) &&
           !t.contains(QChar(0x202e));
}

QJsonObject metadataObject(const il::io::SafeTensorsFile& f, const QString& key)
{
    return QJsonDocument::fromJson(f.metadata.value(key).toUtf8()).object();
}

void setMetadataObject(il::io::SafeTensorsFile& f, const QString& key, const QJsonObject& o)
{
    f.metadata[key] = QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

// Sets key in the metadata object `object`; group: a nested object ("" for none).
Change setField(const QString& object, const QString& group, const QString& key,
                const QJsonValue& v)
{
    return [=](il::io::SafeTensorsFile& f) {
        QJsonObject o = metadataObject(f, object);
        if (group.isEmpty()) {
            o[key] = v;
        } else {
            QJsonObject g = o[group].toObject();
            g[key] = v;
            o[group] = g;
        }
        setMetadataObject(f, object, o);
    };
}

} // namespace

class TestCliHostile : public CliTestCase {
    Q_OBJECT

public:
    // The models these tests tamper with trained on a validation split (cross-validation may
    // keep the linear model untrained: no steps to tamper with).
    TestCliHostile()
    {
        m_oneThread = true;
        m_validationSplit = true;
    }

private:
    // Copies model to name, changed by change.
    void craft(const QString& model, const QString& name, const Change& change)
    {
        il::io::SafeTensorsFile f;
        const il::io::IoResult r = il::io::readSafeTensors(path(model), f);
        QVERIFY2(r.ok, qPrintable(r.error));
        change(f);
        QVERIFY(il::io::writeSafeTensors(path(name), f).ok);
    }

private slots:
    void initTestCase();
    void resumeChecksTheModel_data();
    void resumeChecksTheModel();
    void lossFromTheModelNamesIt();
    void splitsTogether();
    void stepInEpochPastTheData();
    void rangesPrintPlainly();
    void usageErrorMakesNoSnapshotFolder();
    void renderChecksTheOutputFirst();
    void taskWithResume();
    void cellTextIsEscaped();
    void namesRefuseBidiOverrides();
    void vocabularyRefusesControls();
    void hugeOrOddDataFilesAreRefused();
};

void TestCliHostile::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QByteArray reg = "x1,x2,y\n", cls = "x1,x2,label\n";
    for (int i = 0; i < 24; ++i) {
        const double a = (i % 7) / 7.0, b = (i % 5) / 5.0;
        reg += QByteArray::number(a) + "," + QByteArray::number(b) + "," +
               QByteArray::number(a - 2 * b) + "\n";
        cls += QByteArray::number(a) + "," + QByteArray::number(b) + "," + (a > b ? "up" : "down") +
               "\n";
    }
    QVERIFY(writeBytes(path("data.csv"), reg));
    QVERIFY(writeBytes(path("cls.csv"), cls));
    for (const auto& [data, model] :
         {std::pair{"data.csv", "reg.safetensors"}, std::pair{"cls.csv", "cls.safetensors"}}) {
        const RunResult r = run({"train", data, "--epochs", "3", "--quiet", "--out", model});
        QVERIFY2(r.code == 0, qPrintable(r.err));
    }
}

void TestCliHostile::resumeChecksTheModel_data()
{
    QTest::addColumn<Change>("change");
    QTest::addColumn<QString>("says");
    const float nan = std::numeric_limits<float>::quiet_NaN();
    QTest::newRow("NaN weight") << Change([=](il::io::SafeTensorsFile& f) {
        f.tensors.front().data[0] = nan;
    }) << "holds nan";
    QTest::newRow("negative optimizer.v") << Change([](il::io::SafeTensorsFile& f) {
        for (auto& t : f.tensors)
            if (t.name == "optimizer.v") t.data[2] = -1.f;
    }) << "\"optimizer.v\" holds -1";
    QTest::newRow("lr_max -1") << setField("hyperparameters", "schedule", "lr_max", -1)
                               << "\"lr_max\" must be a learning rate";
    QTest::newRow("lr_max Infinity")
        << setField("hyperparameters", "schedule", "lr_max", "Infinity") << "\"lr_max\"";
    QTest::newRow("label_smoothing 2")
        << setField("hyperparameters", "", "label_smoothing", 2) << "\"label_smoothing\"";
    QTest::newRow("eps 0") << setField("hyperparameters", "optimizer", "eps", 0) << "\"eps\"";
    QTest::newRow("beta1 2") << setField("hyperparameters", "optimizer", "beta1", 2) << "\"beta1\"";
    QTest::newRow("val_split -1") << setField("task", "", "val_split", -1) << "val_split -1";
    QString huge = "dense:8,";
    for (int i = 0; i < 16; ++i) // 512 KB
        huge += huge;
    QTest::newRow("512 KB architecture")
        << setField("architecture", "", "spec", huge + "tanh,dense") << "…";
}

void TestCliHostile::resumeChecksTheModel()
{
    // Refused on resume and by evaluate, naming the file, and the file is left as it was: a
    // model that holds what no option could set is not trained on and saved again.
    QFETCH(Change, change);
    QFETCH(QString, says);
    craft("reg.safetensors", "bad.safetensors", change);
    const QByteArray before = readBytes(path("bad.safetensors"));
    for (const QStringList& args :
         {QStringList{"train", "data.csv", "--resume", "bad.safetensors", "--epochs", "6"},
          QStringList{"evaluate", "bad.safetensors", "data.csv"}}) {
        const RunResult r = run(args);
        QVERIFY2(r.code == 1, qPrintable(args.first() + ": " + r.err.left(600)));
        QVERIFY2(isCleanLine(r.err) && r.err.size() < 800, qPrintable(r.err.left(800)));
        QVERIFY2(r.err.startsWith("error: bad.safetensors: "), qPrintable(r.err));
        QVERIFY2(r.err.contains(says), qPrintable(r.err));
    }
    QCOMPARE(readBytes(path("bad.safetensors")), before);
}

void TestCliHostile::lossFromTheModelNamesIt()
{
    // A classifier's file without hyperparameters has the default loss (mse): the refusal names
    // the file and its field (exit 1), not a --loss that was never given (exit 2).
    craft("cls.safetensors", "nohyper.safetensors",
          [](il::io::SafeTensorsFile& f) { f.metadata.remove("hyperparameters"); });
    const RunResult r =
        run({"train", "cls.csv", "--resume", "nohyper.safetensors", "--epochs", "6"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isCleanLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.startsWith("error: nohyper.safetensors: its loss mse (hyperparameters.loss"),
             qPrintable(r.err));
    // Asked for with --loss, the same misfit is a usage error.
    const RunResult asked =
        run({"train", "cls.csv", "--loss", "mse", "--epochs", "1", "--out", "x.safetensors"});
    QCOMPARE(asked.code, 2);
    QVERIFY2(asked.err.contains("--loss mse does not fit"), qPrintable(asked.err));
}

void TestCliHostile::splitsTogether()
{
    const RunResult r = run({"train", "data.csv", "--val-split", "0.5", "--test-split", "0.5"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--val-split and --test-split must add up to less than 1 (got 1)"),
             qPrintable(r.err));
}

void TestCliHostile::stepInEpochPastTheData()
{
    // A training state past the end of this data's epoch (saved with more rows, or written by
    // hand) starts the next epoch instead of gathering rows beyond the last one.
    craft("reg.safetensors", "late.safetensors", [](il::io::SafeTensorsFile& f) {
        QJsonObject t = metadataObject(f, "training");
        t["step_in_epoch"] = t["step"].toInteger() - 1;
        setMetadataObject(f, "training", t);
    });
    const RunResult r =
        run({"train", "data.csv", "--resume", "late.safetensors", "--epochs", "8", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // A step_in_epoch beyond the steps done is refused when the file is read.
    craft("reg.safetensors", "later.safetensors",
          setField("training", "", "step_in_epoch", 9007199254740992.0));
    const RunResult bad = run({"info", "later.safetensors"});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.contains("later.safetensors: training: \"step_in_epoch\" (9007199254740992)"),
             qPrintable(bad.err));
}

void TestCliHostile::rangesPrintPlainly()
{
    // Bounds as people write them, not printf's %f ("between 0.100000 and 3.000000").
    const RunResult t = run({"generate", "x.safetensors", "--temperature", "5"});
    QCOMPARE(t.code, 2);
    QVERIFY2(t.err.contains("--temperature must be between 0.1 and 3, got 5"), qPrintable(t.err));
    const RunResult g = run({"train", "data.csv", "--gamma", "2"});
    QCOMPARE(g.code, 2);
    QVERIFY2(g.err.contains("--gamma must be a decay factor from 0 to 1, got 2"),
             qPrintable(g.err));
    const RunResult e = run({"train", "data.csv", "--eps", "0"});
    QCOMPARE(e.code, 2);
    QVERIFY2(e.err.contains("--eps must be between 1e-30 and 1"), qPrintable(e.err));
}

void TestCliHostile::usageErrorMakesNoSnapshotFolder()
{
    QImage picture(16, 16, QImage::Format_RGB32);
    picture.fill(Qt::darkCyan);
    QVERIFY(picture.save(path("picture.png")));
    const RunResult r = run(
        {"train", "picture.png", "--steps", "5", "--snapshots", "snaps", "--snapshot-every", "0"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--snapshot-every"), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(path("snaps")));
}

void TestCliHostile::renderChecksTheOutputFirst()
{
    // An output in a missing folder is refused before the picture is drawn (exit 2).
    const RunResult trained =
        run({"train", "picture.png", "--steps", "5", "--quiet", "--out", "picture.safetensors"});
    QVERIFY2(trained.code == 0, qPrintable(trained.err));
    const RunResult r = run({"render", "picture.safetensors", "--size", "4096x4096", "--out",
                             "no/such/folder/big.png"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--out no/such/folder/big.png: the folder") &&
                 r.err.contains("does not exist"),
             qPrintable(r.err));
}

void TestCliHostile::taskWithResume()
{
    const RunResult other = run({"train", "data.csv", "--resume", "reg.safetensors", "--task",
                                 "image", "--epochs", "4", "--out", "t.safetensors"});
    QCOMPARE(other.code, 2);
    QVERIFY2(other.err.contains("--task image: reg.safetensors is a tabular model"),
             qPrintable(other.err));
    QVERIFY(!QFileInfo::exists(path("t.safetensors")));
    const RunResult same = run({"train", "data.csv", "--resume", "reg.safetensors", "--task",
                                "tabular", "--epochs", "4", "--out", "t.safetensors", "--quiet"});
    QVERIFY2(same.code == 0, qPrintable(same.err));
}

void TestCliHostile::cellTextIsEscaped()
{
    // A quoted cell with an escape sequence and a line break, in a column of numbers.
    QByteArray csv = "x1,x2,y\n";
    for (int i = 0; i < 30; ++i)
        csv += i == 17 ? "\"\x1b[2J\nboom\x1b]0;pwned\x07\",1,2\n" : "1,2,3\n";
    QVERIFY(writeBytes(path("evil.csv"), csv));
    const RunResult r = run({"train", "evil.csv", "--epochs", "1"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isCleanLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.contains("\"\\x1b[2J\\nboom\\x1b]0;pwned\\x07\""), qPrintable(r.err));
}

void TestCliHostile::namesRefuseBidiOverrides()
{
    QVERIFY(writeBytes(path("rtl.txt"), "anna\nbob\nca\xe2\x80\xaetlin\n"));
    const RunResult r = run({"train", "rtl.txt", "--epochs", "1"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isCleanLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.contains("rtl.txt:3: bidirectional control U+202E at character 3"),
             qPrintable(r.err));
}

void TestCliHostile::vocabularyRefusesControls()
{
    // A names model whose vocabulary holds a line feed would print names across lines.
    const QList<QByteArray> lines = readBytes(IRONLEARN_SAMPLES "/names-ssa2018.txt").split('\n');
    QVERIFY(writeBytes(path("names.txt"), lines.mid(0, 60).join('\n') + '\n'));
    const RunResult trained =
        run({"train", "names.txt", "--steps", "5", "--quiet", "--out", "names.safetensors"});
    QVERIFY2(trained.code == 0, qPrintable(trained.err));
    const RunResult fine = run({"generate", "names.safetensors", "--count", "3"});
    QVERIFY2(fine.code == 0, qPrintable(fine.err));
    craft("names.safetensors", "lf.safetensors", [](il::io::SafeTensorsFile& f) {
        QJsonObject task = metadataObject(f, "task");
        QJsonArray vocabulary = task["vocabulary"].toArray();
        vocabulary[1] = "\n"; // below every letter: still sorted
        task["vocabulary"] = vocabulary;
        setMetadataObject(f, "task", task);
    });
    const RunResult r = run({"generate", "lf.safetensors", "--count", "3"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isCleanLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.contains("vocabulary entry 1 is U+000A"), qPrintable(r.err));
}

// A data file over 4 GiB (sparse: no disk is used) is refused before any of it is read, and a
// folder named as data says so; every command that reads data reads it the same way
// (io::readDataFile, which the studio uses too).
void TestCliHostile::hugeOrOddDataFilesAreRefused()
{
    QFile huge(path("huge.csv"));
    QVERIFY(huge.open(QIODevice::WriteOnly));
    QVERIFY(huge.write("x,y\n1,2\n") > 0);
    if (!huge.resize((qint64(4) << 30) + 1))
        QSKIP("this file system cannot hold a sparse 4 GiB file");
    huge.close();
    for (const QStringList& args : {QStringList{"train", "huge.csv", "--steps", "1"},
                                    QStringList{"evaluate", "reg.safetensors", "huge.csv"}}) {
        const RunResult r = run(args);
        QCOMPARE(r.code, 1);
        QVERIFY2(isCleanLine(r.err), qPrintable(r.err));
        QVERIFY2(r.err.contains("huge.csv: 4") && r.err.contains("larger than 4 GiB"),
                 qPrintable(r.err));
    }
    QVERIFY(QDir(m_dir.path()).mkdir("folder.csv"));
    const RunResult r = run({"train", "folder.csv", "--steps", "1"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("folder.csv: is a"), qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TestCliHostile)
#include "TestCliHostile.moc"
