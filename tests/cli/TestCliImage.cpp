// ironlearn-cli on images, end to end: the real executable, run with QProcess in a temporary
// directory. Train a small generated picture with snapshots, render it at two sizes, evaluate
// it (PSNR and SSIM), and refuse bad sizes and broken images with one line and no output.
#include "CliPictures.h"
#include "CliRunner.h"
#include "ImageBytes.h"
#include "LineDrawing.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <cmath>

namespace {

using clitest::gradientPicture;
using clitest::isOneLine;
using clitest::writeBytes;

} // namespace

class TestCliImage : public CliTestCase {
    Q_OBJECT

private:
    QString m_model; // picture.png trained briefly, shared by the tests that only read it

    QJsonObject readJson(const QString& name) const
    {
        QFile f(path(name));
        if (!f.open(QIODevice::ReadOnly)) return {};
        return QJsonDocument::fromJson(f.readAll()).object();
    }

private slots:
    void initTestCase();
    void trainWritesMetricsAndSnapshots();
    void renderTwoSizes();
    void hashGridSavesAndRendersTheSame();
    void renderHelp();
    void renderBadSize_data();
    void renderBadSize();
    void renderNotAnImageModel();
    void evaluatePrintsPsnrAndSsim();
    void evaluateRefusesAHugeImageClaim();
    void imageSizeAndGrayscale();
    void brokenImage_data();
    void brokenImage();
    void bundledSampleWithDefaults();
    void stallIsNotedAndRecovered();
    void gridLrIsSavedAndResumed();
};

void TestCliImage::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFileInfo(IRONLEARN_CLI).isExecutable(), IRONLEARN_CLI);
    const QImage picture = gradientPicture();
    QVERIFY(writeBytes(path("picture.png"), testsupport::encodeImage(picture)));
    // The default preset (hash grid, then 2 x 64 ReLU) on 1536 pixels: full batches, a second.
    m_model = path("picture.safetensors");
    const RunResult r =
        run({"train", "picture.png", "--steps", "150", "--threads", "1", "--snapshots", "snaps",
             "--snapshot-every", "50", "--metrics-json", "m.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFileInfo(m_model).size() > 0);
    QVERIFY2(r.out.contains("PSNR") && r.out.contains("SSIM"), qPrintable(r.out));
    QVERIFY2(r.err.contains("picture.png: 48x32 RGB image"), qPrintable(r.err));
}

void TestCliImage::trainWritesMetricsAndSnapshots()
{
    const QJsonObject m = readJson("m.json");
    QCOMPARE(m["task"].toString(), "image");
    QVERIFY2(m["psnr_db"].toDouble() > 30, qPrintable(QString::number(m["psnr_db"].toDouble())));
    QVERIFY(m["ssim"].toDouble() > 0.9 && m["ssim"].toDouble() <= 1.0);
    QCOMPARE(m["steps"].toInt(), 150);
    const QStringList frames = QDir(path("snaps")).entryList(QDir::Files, QDir::Name);
    QCOMPARE(frames, QStringList({"step-000050.png", "step-000100.png", "step-000150.png"}));
    QCOMPARE(QImage(path("snaps/step-000150.png")).size(), QSize(48, 32));
}

void TestCliImage::renderTwoSizes()
{
    for (const QSize size : {QSize(64, 64), QSize(300, 200)}) {
        const QString name = QString("r%1.png").arg(size.width());
        const RunResult r =
            run({"render", m_model, "--size", QString("%1x%2").arg(size.width()).arg(size.height()),
                 "--out", name, "--threads", "1"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains(name));
        const QImage img(path(name));
        QCOMPARE(img.size(), size);
        QVERIFY(!img.isGrayscale());
        QCOMPARE(img.depth(), 32); // 8 bits a channel
    }
    // Without --size: the training size, raised to the 64-pixel minimum, aspect kept.
    const RunResult r = run({"render", m_model, "--threads", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(QImage(path("picture-96x64.png")).size(), QSize(96, 64));
}

// The hash-grid preset learns the picture, and the saved model, reopened by `render`, draws
// exactly the pixels the training run drew from memory at its last step (its snapshot).
void TestCliImage::hashGridSavesAndRendersTheSame()
{
    QImage stripes(96, 64, QImage::Format_RGB32); // hard edges, at a size render accepts
    for (int y = 0; y < 64; ++y)
        for (int x = 0; x < 96; ++x)
            stripes.setPixel(x, y, (x / 6 + y / 8) % 2 ? qRgb(250, 240, 10) : qRgb(20, 30, 200));
    QVERIFY(writeBytes(path("stripes.png"), testsupport::encodeImage(stripes)));
    RunResult r = run({"train", "stripes.png", "--preset", "hashgrid", "--steps", "200",
                       "--threads", "1", "--snapshots", "hg-snaps", "--snapshot-every", "200",
                       "--metrics-json", "hg.json", "--out", "hg.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // The finest grid matches the 96 px picture: 16 * 1.1269^15 = 96.
    QVERIFY2(r.err.contains("hashgrid:16:2:15:16:1.1268"), qPrintable(r.err));
    const double psnr = readJson("hg.json")["psnr_db"].toDouble();
    // Predicting the mean colour would give 7.7 dB on these two colours.
    QVERIFY2(psnr > 30, qPrintable(QString::number(psnr)));
    r = run({"render", "hg.safetensors", "--size", "96x64", "--out", "hg-render.png", "--threads",
             "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QImage fromFile(path("hg-render.png")), fromMemory(path("hg-snaps/step-000200.png"));
    QCOMPARE(fromFile.size(), QSize(96, 64));
    QCOMPARE(fromFile.convertToFormat(QImage::Format_RGB32),
             fromMemory.convertToFormat(QImage::Format_RGB32));
    // The honest zoom: the network left, a bicubic upscale of the training picture right.
    r = run({"render", "hg.safetensors", "--size", "288x192", "--compare-bicubic", "stripes.png",
             "--out", "hg-zoom.png", "--threads", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("right: stripes.png at 96x64, upscaled bicubically"),
             qPrintable(r.out));
    const QImage zoom(path("hg-zoom.png"));
    QCOMPARE(zoom.size(), QSize(288 + 8 + 288, 192));
    QCOMPARE(zoom.pixel(288 + 4, 100), qRgb(255, 255, 255));
    // The right half is a smooth upscale: the stripes' middles keep their colours.
    QCOMPARE(zoom.pixel(288 + 8 + 9, 12), stripes.pixel(3, 4));
    r = run({"render", "hg.safetensors", "--compare-bicubic", "hg.json", "--out", "bad.png"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err) && r.err.contains("--compare-bicubic"), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(path("bad.png")));
    // Any size: the grid is continuous.
    r = run(
        {"render", "hg.safetensors", "--size", "400x300", "--out", "hg-big.png", "--threads", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(QImage(path("hg-big.png")).size(), QSize(400, 300));
}

void TestCliImage::renderHelp()
{
    const RunResult r = run({"render", "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.startsWith("Usage: ironlearn-cli render MODEL"));
    QVERIFY(r.out.contains("--size") && r.out.contains("--out"));
    // Without --size a picture under 64 pixels a side is enlarged to the minimum render size
    // (renderTwoSizes: 48x32 draws at 96x64); the help says so (it said "the training size").
    QVERIFY2(r.out.simplified().contains(
                 "default: the training size, enlarged to at least 64 on each side keeping its "
                 "aspect ratio"),
             qPrintable(r.out));
    // And it states what memory a render takes (TestCliMemory checks it at 8192x8192).
    QVERIFY2(r.out.simplified().contains("about the output's pixels (W x H bytes gray, 4 W x H "
                                         "colour; 4 (2W + 8) x H with --compare-bicubic"),
             qPrintable(r.out));
    QVERIFY(run({"--help"}).out.contains("render MODEL"));
}

void TestCliImage::renderBadSize_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mention");
    for (const char* s : {"abc", "64", "64x", "0x64", "10x10", "9000x64", "64x8193", "64x64x3"})
        QTest::newRow(s) << QStringList{"--size", s} << "--size";
    QTest::newRow("--out jpg") << QStringList{"--size", "64x64", "--out", "bad.jpg"} << ".png";
    QTest::newRow("no model") << QStringList{} << "MODEL";
}

void TestCliImage::renderBadSize()
{
    QFETCH(QStringList, args);
    QFETCH(QString, mention);
    if (!args.isEmpty() || mention != "MODEL") args.prepend(m_model);
    if (!args.contains("--out"))
        args << "--out"
             << "bad.png";
    const RunResult r = run(QStringList{"render"} + args);
    QCOMPARE(r.code, 2);
    QVERIFY2(isOneLine(r.err) && r.err.contains(mention), qPrintable(r.err));
    QVERIFY(!QFile::exists(path("bad.png")) && !QFile::exists(path("bad.jpg")));
}

void TestCliImage::renderNotAnImageModel()
{
    const QString table = path("xor.safetensors");
    QVERIFY(run({"train", ":sample/xor.csv", "--out", table, "--quiet"}).code == 0);
    RunResult r = run({"render", table, "--size", "64x64", "--out", "x.png"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err) && r.err.contains("xor.safetensors: task: this model was not "
                                                "trained on an image"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(path("x.png")));
    r = run({"render", "missing.safetensors", "--out", "x.png"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err) && r.err.contains("missing.safetensors"), qPrintable(r.err));
    QVERIFY(!QFile::exists(path("x.png")));
}

void TestCliImage::evaluatePrintsPsnrAndSsim()
{
    const RunResult r =
        run({"evaluate", m_model, "picture.png", "--metrics-json", "e.json", "--threads", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("PSNR") && r.out.contains(" dB") && r.out.contains("SSIM"),
             qPrintable(r.out));
    QVERIFY(r.out.contains("picture.png"));
    const QJsonObject e = readJson("e.json"), m = readJson("m.json");
    QVERIFY(std::fabs(e["psnr_db"].toDouble() - m["psnr_db"].toDouble()) < 1e-6);
    QVERIFY(std::fabs(e["ssim"].toDouble() - m["ssim"].toDouble()) < 1e-6);
    // Another image (gray, another size) is resized to the model's training size.
    QImage gray(100, 80, QImage::Format_Grayscale8);
    gray.fill(90);
    QVERIFY(writeBytes(path("gray.png"), testsupport::encodeImage(gray)));
    const RunResult g = run({"evaluate", m_model, "gray.png", "--threads", "1"});
    QVERIFY2(g.code == 0, qPrintable(g.err));
    QVERIFY(g.out.contains("at 48x32"));
    // A smaller picture is not enlarged: compared at its own size where it is smaller (it was
    // enlarged to the training size, and so sized by whatever size the model claims).
    QImage small(20, 40, QImage::Format_Grayscale8);
    small.fill(90);
    QVERIFY(writeBytes(path("small.png"), testsupport::encodeImage(small)));
    const RunResult s = run({"evaluate", m_model, "small.png", "--threads", "1"});
    QVERIFY2(s.code == 0, qPrintable(s.err));
    QVERIFY2(s.out.contains("against small.png at 20x32"), qPrintable(s.out));
    const RunResult help = run({"evaluate", "--help"});
    QVERIFY2(help.out.simplified().contains("A side where the picture is smaller is not enlarged"),
             qPrintable(help.out));
    // A broken image: exit 1, one line naming it.
    QVERIFY(writeBytes(path("cut.png"), testsupport::encodeImage(gray).left(60)));
    const RunResult c = run({"evaluate", m_model, "cut.png"});
    QCOMPARE(c.code, 1);
    QVERIFY2(isOneLine(c.err) && c.err.contains("cut.png: truncated PNG"), qPrintable(c.err));
}

// A small model file whose task claims a 65536x65536 picture: refused in one line naming the
// file and the field before anything is sized by it (evaluate used to allocate 4.1 GB).
void TestCliImage::evaluateRefusesAHugeImageClaim()
{
    QVERIFY(clitest::withTaskValue(m_model, path("huge.safetensors"), {{"width", 65536}}));
    // The rewrite itself is sound: the same width opens.
    QVERIFY(clitest::withTaskValue(m_model, path("same.safetensors"), {{"width", 48}}));
    QVERIFY2(run({"evaluate", "same.safetensors", "picture.png", "--threads", "1"}).code == 0,
             "the rewritten model does not open");
    const QString refusal = "huge.safetensors: task: invalid image size: \"width\" 65536 is "
                            "outside 1 to 8192 pixels";
    const RunResult r = run({"evaluate", "huge.safetensors", "picture.png", "--threads", "1"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err) && r.err.contains(refusal), qPrintable(r.err));
    const RunResult render = run({"render", "huge.safetensors", "--out", "huge.png"});
    QCOMPARE(render.code, 1);
    QVERIFY2(isOneLine(render.err) && render.err.contains(refusal), qPrintable(render.err));
    QVERIFY(!QFile::exists(path("huge.png")));
}

void TestCliImage::imageSizeAndGrayscale()
{
    const RunResult r =
        run({"train", "picture.png", "--image-size", "16", "--grayscale", "--steps", "2",
             "--threads", "1", "--out", "small.safetensors", "--metrics-json", "s.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("downscaled from 48x32 to 16x11"), qPrintable(r.err));
    QVERIFY(r.err.contains("grayscale"));
    const QJsonObject s = readJson("s.json");
    QCOMPARE(s["width"].toInt(), 16);
    QCOMPARE(s["height"].toInt(), 11);
    QCOMPARE(s["channels"].toInt(), 1);
    const RunResult bad = run({"train", "picture.png", "--image-size", "4"});
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("--image-size"));
}

void TestCliImage::brokenImage_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("reason");
    const QByteArray png = testsupport::encodeImage(QImage(64, 64, QImage::Format_RGB32));
    QByteArray huge = png; // IHDR claiming 30000x30000, checksum left stale
    huge[18] = 0x75, huge[19] = 0x30, huge[22] = 0x75, huge[23] = 0x30;
    QTest::newRow("empty") << "empty.png" << QByteArray() << "empty";
    QTest::newRow("garbage") << "garbage.png" << QByteArray(3000, '\x01') << "not an image";
    QTest::newRow("truncated") << "cut.png" << png.left(png.size() / 2) << "truncated PNG";
    QTest::newRow("huge") << "huge.png" << huge << "30000x30000";
    QTest::newRow("jpeg cut")
        << "cut.jpg"
        << testsupport::encodeImage(QImage(64, 64, QImage::Format_RGB32), "jpeg").left(300)
        << "truncated JPEG";
}

void TestCliImage::brokenImage()
{
    QFETCH(QString, file);
    QFETCH(QByteArray, content);
    QFETCH(QString, reason);
    QVERIFY(writeBytes(path(file), content));
    const QString out = path("broken.safetensors");
    const RunResult r = run({"train", file, "--out", out, "--quiet", "--snapshots", "bsnaps"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err.left(300)));
    QVERIFY2(r.err.contains(file + ": ") && r.err.contains(reason), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
    QVERIFY(!QFile::exists(out));
    QVERIFY(!QFile::exists(path("bsnaps")));
}

void TestCliImage::bundledSampleWithDefaults()
{
    const RunResult r = run({"train", ":sample/camera.png", "--steps", "3", "--threads", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(":sample/camera.png: 512x512 gray image, trained at 512x512"),
             qPrintable(r.err));
    // The default preset, its finest grid at the 512 px training size: 16 * 1.26^15 = 512.
    QVERIFY2(r.err.contains("hashgrid:16:2:15:16:1.2599211,dense:64,relu"), qPrintable(r.err));
    QVERIFY(QFileInfo(path("camera.safetensors")).size() > 0);
}

// A line drawing at too high a rate for SIREN: the loss sits at the picture's variance. The CLI
// prints the trainer's line about it as a note (even with --quiet), the task recovers, and the
// model is saved with the lowered rate, so a resumed run goes on with it.
void TestCliImage::stallIsNotedAndRecovered()
{
    QVERIFY(testsupport::lineDrawing().save(path("drawing.png")));
    const RunResult r =
        run({"train", "drawing.png", "--layers",
             "dense:64,sine:30,dense:64,sine:30,dense:64,sine:30,dense", "--lr", "0.03", "--steps",
             "400", "--threads", "1", "--quiet", "--out", "drawing.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QStringList notes = r.err.split('\n').filter("note: ");
    QCOMPARE(notes.size(), 1);
    QCOMPARE(notes[0], "note: step 300: the loss has stayed at the data's variance 0.111 for 200 "
                       "steps: the network predicts the mean; recovering (1 of 3) from the weights "
                       "of step 0 at learning rate 0.0075");
    QVERIFY2(r.out.startsWith("finished 400 steps (400 epochs); recovered 1 time from a stall or "
                              "divergence; the learning rate is now 0.0075\n"),
             qPrintable(r.out));
    const RunResult info = run({"info", "drawing.safetensors"});
    QVERIFY2(info.out.contains("optimizer  adam, lr 0.0075, cosine schedule"),
             qPrintable(info.out));
}

// --grid-lr: the tables' own rate, shown by info, kept by a resume that does not set it, changed
// by one that does; a bad value is refused in one line.
void TestCliImage::gridLrIsSavedAndResumed()
{
    RunResult r = run({"train", "picture.png", "--steps", "5", "--threads", "1", "--grid-lr",
                       "0.004", "--out", "grid.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = run({"info", "grid.safetensors"});
    QVERIFY2(r.out.contains("Hash-grid tables: lr 0.004, beta1 0.9, beta2 0.99, eps 1e-15"),
             qPrintable(r.out));
    r = run({"train", "picture.png", "--resume", "grid.safetensors", "--steps", "10", "--threads",
             "1", "--out", "grid.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = run({"info", "grid.safetensors"});
    QVERIFY2(r.out.contains("Hash-grid tables: lr 0.004,") && r.out.contains("10 steps"),
             qPrintable(r.out));
    r = run({"train", "picture.png", "--resume", "grid.safetensors", "--steps", "15", "--threads",
             "1", "--grid-lr", "0.02", "--out", "grid.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = run({"info", "grid.safetensors"});
    QVERIFY2(r.out.contains("Hash-grid tables: lr 0.02,"), qPrintable(r.out));
    r = run({"train", "picture.png", "--grid-lr", "-1", "--out", "never.safetensors"});
    QCOMPARE(r.code, 2);
    QVERIFY2(isOneLine(r.err) && r.err.contains("--grid-lr must be a learning rate from 0"),
             qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(path("never.safetensors")));
    r = run({"train", "--help"});
    QVERIFY2(r.out.contains("--grid-lr <RATE>"), qPrintable(r.out));
}

QTEST_GUILESS_MAIN(TestCliImage)
#include "TestCliImage.moc"
