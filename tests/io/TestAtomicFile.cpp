// io::AtomicFile, the one writer every output goes through: a failure at any step (create,
// write, sync, close, rename) leaves the old file and no temporary one, with a message naming
// the path and the system's reason; special files and the command's own inputs are refused.
#include "AtomicFile.h"
#include "ModelExport.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <cstring>

#include <csignal>
#include <utime.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace il::io;

namespace {

QByteArray readBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

// strerror's text for err, as the messages quote it (localised by LC_MESSAGES).
QString systemWords(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

void writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), bytes.size());
}

// Sets the failure seam for one scope.
struct Inject {
    explicit Inject(detail::InjectedFailure f) { detail::injectedFailureForTesting = f; }
    ~Inject() { detail::injectedFailureForTesting = {}; }
};

} // namespace

class TestAtomicFile : public QObject {
    Q_OBJECT

private slots:
    void writesAndReplaces();
    void failureAtEachStepKeepsOldFile_data();
    void failureAtEachStepKeepsOldFile();
    void largeWritesStream();
    void refusesSpecialFiles();
    void refusesItsOwnInputs();
    void followsSymbolicLinks();
    void keepsTheOldFilesMode();
    void realFullDisk();
    void killedWriteIsCleanedUpNextTime();
    void failedPyTorchExportLeavesNoFolder();
    void liveWriteIsLeftAlone();
};

void TestAtomicFile::writesAndReplaces()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("out.txt");
    QVERIFY(writeFileAtomically(path, "first").ok);
    QCOMPARE(readBytes(path), QByteArray("first"));
    QVERIFY(writeFileAtomically(path, "second, longer").ok);
    QCOMPARE(readBytes(path), QByteArray("second, longer"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"out.txt"});
}

void TestAtomicFile::failureAtEachStepKeepsOldFile_data()
{
    QTest::addColumn<int>("step");
    QTest::addColumn<int>("error");
    QTest::addColumn<QString>("reason");
    using S = detail::FailStep;
    QTest::newRow("create") << int(S::Open) << EACCES << "Permission denied";
    // A small output: the bug QSaveFile had, buffering it and reporting success on a full disk.
    QTest::newRow("write, small") << int(S::Write) << ENOSPC << "No space left on device";
    QTest::newRow("sync") << int(S::Sync) << EIO << "Input/output error";
    QTest::newRow("close") << int(S::Close) << EDQUOT << "Disk quota exceeded";
    QTest::newRow("rename") << int(S::Rename) << EXDEV << "Invalid cross-device link";
}

void TestAtomicFile::failureAtEachStepKeepsOldFile()
{
    QFETCH(int, step);
    QFETCH(int, error);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    const QString path = dir.filePath("model.bin");
    writeBytes(path, "the good old file");
    for (const bool existing : {true, false}) {
        const QString target = existing ? path : dir.filePath("new.bin");
        IoResult r;
        {
            Inject inject({static_cast<detail::FailStep>(step), error, 0});
            r = writeFileAtomically(target, "new bytes");
        }
        QVERIFY(!r.ok);
        // The system's words, in the user's language (under LC_ALL=de_DE.UTF-8 they are German).
        QVERIFY2(r.error.startsWith(target + ": cannot write: " + systemWords(error)),
                 qPrintable(r.error + " (in English: " + reason + ")"));
        QCOMPARE(readBytes(path), QByteArray("the good old file"));
        QVERIFY(!QFile::exists(dir.filePath("new.bin")));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"model.bin"});
    }
}

void TestAtomicFile::largeWritesStream()
{
    // Larger than the buffer: written through; a failure half-way keeps the old file.
    QTemporaryDir dir;
    const QString path = dir.filePath("big.bin");
    QByteArray big(3 << 20, 'x');
    for (int i = 0; i < big.size(); i += 4096)
        big[i] = static_cast<char>(i / 4096);
    {
        AtomicFile f(path);
        f.setAction("save");
        QVERIFY(f.open());
        QVERIFY(f.write("head"));
        QVERIFY(f.write(big));
        QVERIFY(f.write("tail"));
        QVERIFY(f.commit());
    }
    QCOMPARE(readBytes(path), "head" + big + "tail");
    Inject inject({detail::FailStep::Write, ENOSPC, qint64(2) << 20});
    AtomicFile f(path);
    f.setAction("save");
    QVERIFY(f.open());
    QVERIFY(!f.write(big));
    QVERIFY(!f.commit());
    QVERIFY2(f.errorString() == path + ": cannot save: " + systemWords(ENOSPC),
             qPrintable(f.errorString()));
    QCOMPARE(readBytes(path), "head" + big + "tail");
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"big.bin"});
}

void TestAtomicFile::refusesSpecialFiles()
{
    QTemporaryDir dir;
    const QString fifo = dir.filePath("pipe");
    QVERIFY(::mkfifo(QFile::encodeName(fifo).constData(), 0600) == 0);
    struct Case {
        QString path, why;
    };
    const Case cases[] = {
        {"/dev/null", "is a device, not a regular file"},
        {fifo, "is a FIFO (named pipe), not a regular file"},
        {dir.path(), "is a directory"},
    };
    for (const Case& c : cases) {
        QCOMPARE(outputPathProblem(c.path), c.why);
        const IoResult r = writeFileAtomically(c.path, "x");
        QVERIFY(!r.ok);
        QCOMPARE(r.error, c.path + ": cannot write: " + c.why);
    }
    struct stat st {};
    QVERIFY(::stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    QVERIFY(::stat(QFile::encodeName(fifo).constData(), &st) == 0 && S_ISFIFO(st.st_mode));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::System),
             QStringList{"pipe"});
}

void TestAtomicFile::refusesItsOwnInputs()
{
    QTemporaryDir dir;
    const QString data = dir.filePath("data.csv");
    writeBytes(data, "a,b\n1,2\n");
    const QString link = dir.filePath("alias.csv");
    QVERIFY(QFile::link(data, link));
    const QString hard = dir.filePath("hard.csv");
    QVERIFY(::link(QFile::encodeName(data).constData(), QFile::encodeName(hard).constData()) == 0);
    for (const QString& out : {data, link, hard, dir.path() + "/./data.csv"}) {
        const QString why = outputPathProblem(out, {data});
        QVERIFY2(why.startsWith("is the input file " + data), qPrintable(out + ": " + why));
        AtomicFile f(out, {data});
        QVERIFY(!f.open());
    }
    QCOMPARE(readBytes(data), QByteArray("a,b\n1,2\n"));
    QVERIFY(outputPathProblem(dir.filePath("other.csv"), {data}).isEmpty());
    QVERIFY(outputPathProblem(dir.filePath("x"), {":/samples/iris.csv"}).isEmpty());
}

void TestAtomicFile::followsSymbolicLinks()
{
    QTemporaryDir dir;
    const QString real = dir.filePath("real.txt"), link = dir.filePath("link.txt");
    writeBytes(real, "old");
    QVERIFY(QFile::link(real, link));
    QVERIFY(writeFileAtomically(link, "new").ok);
    QVERIFY(QFileInfo(link).isSymLink());
    QCOMPARE(readBytes(real), QByteArray("new"));
}

void TestAtomicFile::keepsTheOldFilesMode()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("m.bin");
    writeBytes(path, "x");
    QVERIFY(::chmod(QFile::encodeName(path).constData(), 0640) == 0);
    QVERIFY(writeFileAtomically(path, "y").ok);
    struct stat st {};
    QVERIFY(::stat(QFile::encodeName(path).constData(), &st) == 0);
    QCOMPARE(int(st.st_mode & 0777), 0640);
    // A new file gets what open(2) would give it: 0666 less the umask.
    const mode_t mask = ::umask(022);
    QVERIFY(writeFileAtomically(dir.filePath("new.bin"), "z").ok);
    ::umask(mask);
    QVERIFY(::stat(QFile::encodeName(dir.filePath("new.bin")).constData(), &st) == 0);
    QCOMPARE(int(st.st_mode & 0777), 0644);
}

void TestAtomicFile::realFullDisk()
{
    // A 64 KiB tmpfs, where the machine lets us mount one (root in a container usually can't).
    QTemporaryDir dir;
    const QByteArray mnt = QFile::encodeName(dir.path());
    const QByteArray mount = "mount -t tmpfs -o size=64k tmpfs '" + mnt + "' 2>/dev/null";
    if (std::system(mount.constData()) != 0) QSKIP("cannot mount a small tmpfs here");
    const QString path = dir.filePath("m.bin");
    const IoResult small = writeFileAtomically(path, QByteArray(1000, 'a'));
    const IoResult big = writeFileAtomically(path, QByteArray(200 * 1024, 'b'));
    const IoResult filler = writeFileAtomically(dir.filePath("fill"), QByteArray(60 * 1024, 'c'));
    const IoResult tiny = writeFileAtomically(dir.filePath("tiny"), QByteArray(8000, 'd'));
    const QByteArray kept = readBytes(path);
    const QStringList left = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    const int unmounted = std::system(("umount '" + mnt + "'").constData());
    QCOMPARE(unmounted, 0);
    QVERIFY(small.ok);
    QVERIFY(!big.ok);
    QVERIFY2(big.error.contains(systemWords(ENOSPC)), qPrintable(big.error));
    QCOMPARE(kept, QByteArray(1000, 'a'));
    // Once the disk is full, even an output smaller than any buffer fails and says so.
    QVERIFY(filler.ok);
    QVERIFY(!tiny.ok);
    QVERIFY2(tiny.error.contains(systemWords(ENOSPC)), qPrintable(tiny.error));
    QCOMPARE(left, (QStringList{"fill", "m.bin"}));
}

// A write killed outright (SIGKILL: no handler runs) leaves its temporary file behind; the next
// write to that folder removes it, and leaves alone a temporary that a live writer still holds
// and files that are not ours.
void TestAtomicFile::killedWriteIsCleanedUpNextTime()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString target = dir.filePath("big.onnx");
    const pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) { // the writer, killed in the middle
        il::io::AtomicFile f(target);
        if (!f.open() || !f.write(QByteArray(3 << 20, 'x'))) ::_exit(3);
        ::raise(SIGKILL);
        ::_exit(4);
    }
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    const QStringList left = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    QCOMPARE(left.size(), 1);
    QVERIFY2(left[0].startsWith(".big.onnx.ironlearn-"), qPrintable(left[0]));

    // Another writer's, still being written (it holds its lock), and files that are not ours.
    const QString live = dir.filePath(".other.bin.ironlearn-AbC123");
    writeBytes(live, "in progress");
    const int liveFd = ::open(QFile::encodeName(live).constData(), O_RDONLY);
    QVERIFY(liveFd >= 0 && ::flock(liveFd, LOCK_EX) == 0);
    writeBytes(dir.filePath(".big.onnx.XyZ789"), "someone else's");
    writeBytes(dir.filePath("notes.ironlearn-AbC123"), "not hidden: not ours");
    // All of them seconds old (a file created this instant may be between mkstemp and flock).
    for (const QString& name : QDir(dir.path()).entryList(QDir::Files | QDir::Hidden)) {
        struct utimbuf old {
            ::time(nullptr) - 60, ::time(nullptr) - 60
        };
        QCOMPARE(::utime(QFile::encodeName(dir.filePath(name)).constData(), &old), 0);
    }

    QVERIFY(il::io::writeFileAtomically(dir.filePath("small.txt"), "next write").ok);
    QStringList now = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    now.sort();
    QCOMPARE(now, (QStringList{".big.onnx.XyZ789", ".other.bin.ironlearn-AbC123",
                               "notes.ironlearn-AbC123", "small.txt"}));
    ::close(liveFd); // its writer ends: the next write removes it too
    QVERIFY(il::io::writeFileAtomically(dir.filePath("small.txt"), "again").ok);
    QVERIFY(!QFile::exists(live));
}

// The PyTorch export writes three files into a folder it makes; when a write fails, the folders
// it made go again (an empty folder was left before), and a folder that was there stays.
void TestAtomicFile::failedPyTorchExportLeavesNoFolder()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString model = IRONLEARN_FIXTURES "/studio/iris-studio.safetensors";
    const QString fresh = dir.filePath("new/iris-pytorch");
    for (qint64 after : {qint64(0), qint64(1)}) { // failing at a write, or at the rename
        Inject failing(after == 0 ? detail::InjectedFailure{detail::FailStep::Write, ENOSPC, 0}
                                  : detail::InjectedFailure{detail::FailStep::Rename, EIO, 0});
        const il::io::IoResult r = il::io::exportPyTorch(model, fresh, {}, nullptr);
        QVERIFY(!r.ok);
        QVERIFY2(!r.error.contains('\n'), qPrintable(r.error));
        QVERIFY2(!QFileInfo::exists(dir.filePath("new")), qPrintable(r.error));
    }
    QVERIFY(QDir().mkpath(fresh));
    {
        Inject failing({detail::FailStep::Rename, EIO, 0});
        QVERIFY(!il::io::exportPyTorch(model, fresh, {}, nullptr).ok);
    }
    QVERIFY(QFileInfo(fresh).isDir());
    QStringList written;
    QVERIFY(il::io::exportPyTorch(model, fresh, {}, &written).ok);
    QCOMPARE(written.size(), 3);
    QVERIFY(!il::io::exportPyTorch(model, QString(), {}, nullptr).ok);
}

// A write still in progress (its temporary file old, as a slow export's is) holds its lock: a
// second write to the folder leaves its temporary file, and it still commits.
void TestAtomicFile::liveWriteIsLeftAlone()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    AtomicFile slow(dir.filePath("slow.bin"));
    QVERIFY(slow.open());
    QVERIFY(slow.write(QByteArray(3 << 20, 's'))); // past the buffer: on disk already
    const QStringList temporaries = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    QCOMPARE(temporaries.size(), 1);
    struct utimbuf old {
        ::time(nullptr) - 60, ::time(nullptr) - 60
    };
    QCOMPARE(::utime(QFile::encodeName(dir.filePath(temporaries[0])).constData(), &old), 0);
    QVERIFY(il::io::writeFileAtomically(dir.filePath("quick.txt"), "meanwhile").ok);
    QVERIFY(QFile::exists(dir.filePath(temporaries[0])));
    QVERIFY2(slow.commit(), qPrintable(slow.errorString()));
    QCOMPARE(QFileInfo(dir.filePath("slow.bin")).size(), qint64(3 << 20));
}

QTEST_GUILESS_MAIN(TestAtomicFile)
#include "TestAtomicFile.moc"
