// Peak memory of render and evaluate at 8192x8192, against the formulas their help states:
// memory follows the picture written or read, never a size a small file claims, and the work is
// done a band of rows at a time. Each command runs as a child process; its own peak resident
// set (wait4's rusage) is compared with the same command's at a tiny size (the baseline: the
// program, Qt, the model), so the figures hold on any machine.
//
//   render:                    peak <= baseline + W x H x (1 gray, 4 colour) + one band
//   render --compare-bicubic:  peak <= baseline + 4 (2W + 8) x H + the compared picture + one band
//   evaluate (an image):       peak <= baseline + 2 x the decoded picture + one band + SSIM rows
//   race (training size N px): peak <= baseline + (2 + channels) x 4 N (the rows on the backend)
//                                     + 4 N (the trainer's shuffled order) + 2 x the picture
//                                     + the preset's network, optimizer and one band
//   (one band: at most 65,536 pixels, its activations at most 256 MiB; 32 MiB of slack covers
//   it for the tiny network here; the PNG is encoded straight into the file.)
#include "CliPictures.h"

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct Peak {
    int code = -1;
    double mib = 0;     // peak resident set of the child
    double seconds = 0; // wall clock
    QString err;
};

// Runs the CLI in dir with args; stdout and stderr go to files there. Killed after timeoutS.
Peak runMeasured(const QString& dir, const QStringList& args, double timeoutS = 120)
{
    Peak p;
    QByteArrayList storage{QByteArray(IRONLEARN_CLI)};
    for (const QString& a : args)
        storage << a.toUtf8();
    std::vector<char*> argv;
    for (QByteArray& a : storage)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const QByteArray where = QFile::encodeName(dir);
    const QByteArray errPath = QFile::encodeName(dir + "/stderr.txt");
    const QByteArray outPath = QFile::encodeName(dir + "/stdout.txt");
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::chdir(where.constData()) != 0) ::_exit(126);
        const int out = ::open(outPath.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int err = ::open(errPath.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(out, 1);
        ::dup2(err, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    if (pid < 0) return p;
    int status = 0;
    rusage usage{};
    for (;;) {
        const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
        p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (done == pid) break;
        if (p.seconds > timeoutS) {
            ::kill(pid, SIGKILL);
            ::wait4(pid, &status, 0, &usage);
            p.err = "timed out";
            return p;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    p.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    p.mib = static_cast<double>(usage.ru_maxrss) * 1024.0 / kMiB; // Linux: kilobytes
    p.err = QString::fromUtf8(clitest::readBytes(dir + "/stderr.txt"));
    return p;
}

QString figures(const Peak& p, const Peak& base, double allowed)
{
    return QString("peak %1 MiB, baseline %2 MiB: %3 MiB over it, allowed %4 MiB (%5 s); %6")
        .arg(p.mib, 0, 'f', 1)
        .arg(base.mib, 0, 'f', 1)
        .arg(p.mib - base.mib, 0, 'f', 1)
        .arg(allowed, 0, 'f', 1)
        .arg(p.seconds, 0, 'f', 2)
        .arg(p.err.trimmed());
}

} // namespace

class TestCliMemory : public CliTestCase {
    Q_OBJECT

private:
    Peak m_base; // render at 64x64: the program, Qt and the model

private slots:
    void initTestCase();
    void render();
    void renderCompareBicubic();
    void evaluateSmallPictureHugeClaim();
    void evaluateAt8192();
    void raceAt8192();
};

void TestCliMemory::initTestCase()
{
    QVERIFY(m_dir.isValid());
    // Under AddressSanitizer the peak counts its shadow memory and the quarantine of freed
    // blocks (256 MiB), not what the program keeps: the release suite measures these bounds.
    if (IRONLEARN_SANITIZED) QSKIP("peak memory under ASan is ASan's; the release suite checks it");
    // A gray 48x32 picture and a tiny network: the work is the pixels, not the model.
    QImage picture = clitest::gradientPicture().convertToFormat(QImage::Format_Grayscale8);
    QVERIFY(picture.save(path("small.png")));
    const RunResult r =
        runCli(m_dir.path(), {"train", "small.png", "--layers", "dense:8,relu,dense", "--steps",
                              "5", "--threads", "1", "--out", "tiny.safetensors", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // The same model claiming an 8192x8192 training picture.
    QVERIFY(clitest::withTaskValue(path("tiny.safetensors"), path("claim.safetensors"),
                                   {{"width", 8192}, {"height", 8192}}));
    QImage one(1, 1, QImage::Format_Grayscale8);
    one.fill(90);
    QVERIFY(one.save(path("one.png")));
    QVERIFY(QFileInfo(path("one.png")).size() < 100);
    {
        QImage big(8192, 8192, QImage::Format_Grayscale8); // 64 MiB here, a smooth PNG on disk
        for (int y = 0; y < big.height(); ++y) {
            uchar* row = big.scanLine(y);
            for (int x = 0; x < big.width(); ++x)
                row[x] = static_cast<uchar>((x / 64 + y / 64) & 255);
        }
        QVERIFY(big.save(path("big.png")));
    }
    m_base = runMeasured(m_dir.path(), {"render", "tiny.safetensors", "--size", "64x64", "--out",
                                        "base.png", "--threads", "2"});
    QVERIFY2(m_base.code == 0, qPrintable(m_base.err));
    QVERIFY(m_base.mib > 1);
}

void TestCliMemory::render()
{
    const Peak p = runMeasured(m_dir.path(), {"render", "tiny.safetensors", "--size", "8192x8192",
                                              "--out", "r.png", "--threads", "2"});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    const double allowed = 8192.0 * 8192 / kMiB + 32; // gray: a byte a pixel
    QVERIFY2(p.mib - m_base.mib <= allowed, qPrintable(figures(p, m_base, allowed)));
    QCOMPARE(QImageReader(path("r.png")).size(), QSize(8192, 8192));
    qInfo("%s", qPrintable(figures(p, m_base, allowed)));
}

void TestCliMemory::renderCompareBicubic()
{
    // It used to hold the network's picture, the bicubic one, and the bicubic one in floats
    // twice: 1.2 GB here.
    const Peak p =
        runMeasured(m_dir.path(), {"render", "tiny.safetensors", "--size", "8192x8192", "--out",
                                   "c.png", "--threads", "2", "--compare-bicubic", "small.png"});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    const double allowed = 4.0 * (2 * 8192 + 8) * 8192 / kMiB + 32;
    QVERIFY2(p.mib - m_base.mib <= allowed, qPrintable(figures(p, m_base, allowed)));
    QCOMPARE(QImageReader(path("c.png")).size(), QSize(2 * 8192 + 8, 8192));
    qInfo("%s", qPrintable(figures(p, m_base, allowed)));
}

void TestCliMemory::evaluateSmallPictureHugeClaim()
{
    // A 67-byte picture against a model that claims 8192x8192: compared at the picture's size,
    // nothing sized by the claim (it took 1.9 GB and 12 s).
    const Peak p =
        runMeasured(m_dir.path(), {"evaluate", "claim.safetensors", "one.png", "--threads", "2"});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    const double allowed = 16;
    QVERIFY2(p.mib - m_base.mib <= allowed, qPrintable(figures(p, m_base, allowed)));
    QVERIFY2(p.seconds < 10, qPrintable(figures(p, m_base, allowed)));
    const QString out = QString::fromUtf8(clitest::readBytes(path("stdout.txt")));
    QVERIFY2(out.contains("against one.png at 1x1"), qPrintable(out));
}

void TestCliMemory::evaluateAt8192()
{
    // A real 8192x8192 comparison: the picture as decoded and as ours, then bands.
    const Peak p =
        runMeasured(m_dir.path(), {"evaluate", "claim.safetensors", "big.png", "--threads", "2"});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    const double allowed = 2 * 8192.0 * 8192 / kMiB + 32;
    QVERIFY2(p.mib - m_base.mib <= allowed, qPrintable(figures(p, m_base, allowed)));
    const QString out = QString::fromUtf8(clitest::readBytes(path("stdout.txt")));
    QVERIFY2(out.contains("at 8192x8192") && out.contains("SSIM"), qPrintable(out));
    qInfo("%s", qPrintable(figures(p, m_base, allowed)));
}

void TestCliMemory::raceAt8192()
{
    // The hash grid (the cheapest pass of the presets) trains on all 67 M pixels for 0.05 s.
    // The picture's rows used to be on the host and on the backend at once (1.95 GB here).
    const Peak p = runMeasured(m_dir.path(),
                               {"race", "big.png", "--presets", "hashgrid", "--image-size", "8192",
                                "--seconds", "0.05", "--threads", "2", "--out-dir", "race-out"});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    const double n = 8192.0 * 8192;
    // The grid's tables (16 x 2^15 x 2 floats) with their gradients and Adam's two moments:
    // 16 MiB; its MLP's activations for a band of 65,536 pixels: about 40 MiB.
    const double allowed = ((2 + 1) * 4 * n + 4 * n + 2 * n) / kMiB + 64 + 64;
    QVERIFY2(p.mib - m_base.mib <= allowed, qPrintable(figures(p, m_base, allowed)));
    QCOMPARE(QImageReader(path("race-out/hashgrid.png")).size(), QSize(8192, 8192));
    qInfo("%s", qPrintable(figures(p, m_base, allowed)));
}

QTEST_GUILESS_MAIN(TestCliMemory)
#include "TestCliMemory.moc"
