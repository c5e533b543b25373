#include "AtomicFile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace il::io {

namespace detail {
InjectedFailure injectedFailureForTesting;
} // namespace detail

namespace {

constexpr qsizetype kBufferBytes = 1 << 20;

// The temporary file of a write to NAME is ".NAME.ironlearn-XXXXXX" (six characters from
// mkstemp): hidden, and unmistakably ours, so stale ones can be removed (removeStaleTemporaries).
constexpr const char* kTemporaryTag = ".ironlearn-";

// The temporary files being written, where a signal handler can find them: a slot is free (0),
// being filled (1) or holds a path (2). A write that finds no free slot is simply not listed.
constexpr int kSlots = 16;
std::atomic<int> g_slotState[kSlots];
char g_slotPath[kSlots][PATH_MAX];

int listTemporary(const QByteArray& path)
{
    if (path.size() >= PATH_MAX) return -1;
    for (int i = 0; i < kSlots; ++i) {
        int expected = 0;
        if (!g_slotState[i].compare_exchange_strong(expected, 1)) continue;
        std::memcpy(g_slotPath[i], path.constData(), static_cast<size_t>(path.size()) + 1);
        g_slotState[i].store(2);
        return i;
    }
    return -1;
}

void unlistTemporary(int slot)
{
    if (slot >= 0) g_slotState[slot].store(0);
}

QString systemReason(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

// Injected failure for this step, if the test seam asks for one (errno value, else 0).
int injected(detail::FailStep step)
{
    const detail::InjectedFailure& f = detail::injectedFailureForTesting;
    return f.step == step ? f.error : 0;
}

QString kindOf(mode_t mode)
{
    if (S_ISDIR(mode)) return QStringLiteral("is a directory");
    if (S_ISCHR(mode) || S_ISBLK(mode)) return QStringLiteral("is a device, not a regular file");
    if (S_ISFIFO(mode)) return QStringLiteral("is a FIFO (named pipe), not a regular file");
    if (S_ISSOCK(mode)) return QStringLiteral("is a socket, not a regular file");
    return QStringLiteral("is not a regular file");
}

// The mode a new file gets: 0666 less the process's umask (read without changing it, so other
// threads creating files are not disturbed).
mode_t newFileMode()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (status.open(QIODevice::ReadOnly))
        for (const QByteArray& line : status.readAll().split('\n'))
            if (line.startsWith("Umask:")) {
                bool ok = false;
                const uint mask = line.mid(6).trimmed().toUInt(&ok, 8);
                if (ok) return 0666 & ~mask;
            }
    return 0644;
}

bool writeAll(int fd, const char* p, qint64 n, qint64 writtenBefore)
{
    const detail::InjectedFailure& f = detail::injectedFailureForTesting;
    if (f.step == detail::FailStep::Write && writtenBefore + n > f.afterBytes) {
        errno = f.error;
        return false;
    }
    while (n > 0) {
        const ssize_t w = ::write(fd, p, static_cast<size_t>(std::min<qint64>(n, 1 << 30)));
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += w;
        n -= w;
    }
    return true;
}

} // namespace

QString outputPathProblem(const QString& path, const QStringList& inputs)
{
    if (path.isEmpty()) return QStringLiteral("no file name given");
    struct stat target {};
    if (::stat(QFile::encodeName(path).constData(), &target) != 0) { // a new file
        const QString folder = QFileInfo(path).absolutePath();
        struct stat dir {};
        if (::stat(QFile::encodeName(folder).constData(), &dir) != 0)
            return QStringLiteral("the folder %1 does not exist").arg(folder);
        if (!S_ISDIR(dir.st_mode)) return QStringLiteral("%1 is not a folder").arg(folder);
        return {};
    }
    if (!S_ISREG(target.st_mode)) return kindOf(target.st_mode);
    for (const QString& input : inputs) {
        struct stat in {};
        if (input.isEmpty() || input.startsWith(':')) continue; // built-in samples
        if (::stat(QFile::encodeName(input).constData(), &in) == 0 && in.st_dev == target.st_dev &&
            in.st_ino == target.st_ino)
            return QStringLiteral("is the input file %1; choose another name for the output")
                .arg(input);
    }
    return {};
}

AtomicFile::AtomicFile(QString path, QStringList inputs)
    : m_path(std::move(path)), m_inputs(std::move(inputs))
{
}

AtomicFile::~AtomicFile()
{
    if (!m_committed) cancel();
}

bool AtomicFile::fail(int err, const QString& context)
{
    if (m_error.isEmpty())
        m_error = m_path + QStringLiteral(": cannot ") + m_action + QStringLiteral(": ") +
                  (err ? systemReason(err) : QStringLiteral("unknown error")) +
                  (context.isEmpty() ? QString() : QStringLiteral(" (") + context + ')');
    cancel();
    return false;
}

bool AtomicFile::open()
{
    m_error.clear();
    const QString problem = outputPathProblem(m_path, m_inputs);
    if (!problem.isEmpty()) {
        m_error = m_path + QStringLiteral(": cannot ") + m_action + QStringLiteral(": ") + problem;
        return false;
    }
    // A symbolic link keeps pointing where it did: the file it names is replaced.
    const QFileInfo info(m_path);
    const QString target = info.isSymLink() && info.exists() ? info.canonicalFilePath() : m_path;
    const QFileInfo where(target);
    removeStaleTemporaries(where.absolutePath());
    m_temp = QFile::encodeName(where.absolutePath() + QStringLiteral("/.") + where.fileName() +
                               QLatin1String(kTemporaryTag) + QStringLiteral("XXXXXX"));
    const QString creating = QStringLiteral("creating a file in ") + where.absolutePath();
    if (const int err = injected(detail::FailStep::Open)) return fail(err, creating);
    m_fd = ::mkstemp(m_temp.data());
    if (m_fd < 0) {
        const int err = errno;
        m_temp.clear();
        return fail(err, creating);
    }
    m_slot = listTemporary(m_temp);
    // Held until the temporary file is renamed or removed (through its own descriptor, so that
    // closing m_fd before the rename keeps it): removeStaleTemporaries leaves locked files be.
    m_lockFd = ::open(m_temp.constData(), O_RDONLY | O_CLOEXEC);
    if (m_lockFd >= 0) ::flock(m_lockFd, LOCK_EX);
    struct stat old {};
    const bool exists = ::stat(QFile::encodeName(target).constData(), &old) == 0;
    ::fchmod(m_fd, exists ? (old.st_mode & 07777) : newFileMode());
    m_path = target;
    return true;
}

bool AtomicFile::flushBuffer()
{
    if (m_buffer.isEmpty()) return true;
    const bool ok = writeAll(m_fd, m_buffer.constData(), m_buffer.size(), m_written);
    if (ok) m_written += m_buffer.size();
    m_buffer.clear();
    return ok;
}

bool AtomicFile::write(const char* data, qint64 size)
{
    if (m_fd < 0) return false;
    if (m_buffer.size() + size <= kBufferBytes) {
        m_buffer.append(data, size);
        return true;
    }
    if (!flushBuffer() || !writeAll(m_fd, data, size, m_written)) return fail(errno);
    m_written += size;
    return true;
}

bool AtomicFile::commit()
{
    if (m_fd < 0) return false;
    if (!flushBuffer()) return fail(errno);
    if (const int err = injected(detail::FailStep::Sync)) return fail(err, "syncing to disk");
    if (::fdatasync(m_fd) != 0) return fail(errno, "syncing to disk");
    const int fd = m_fd;
    m_fd = -1;
    if (const int err = injected(detail::FailStep::Close)) {
        ::close(fd);
        return fail(err);
    }
    if (::close(fd) != 0) return fail(errno);
    const QString renaming = QStringLiteral("renaming the new file over the old");
    if (const int err = injected(detail::FailStep::Rename)) return fail(err, renaming);
    if (::rename(m_temp.constData(), QFile::encodeName(m_path).constData()) != 0)
        return fail(errno, renaming);
    m_committed = true;
    releaseLock();
    unlistTemporary(m_slot);
    m_slot = -1;
    // The rename is durable once the directory is synced; a failure here loses nothing written.
    const int dir = ::open(QFile::encodeName(QFileInfo(m_path).absolutePath()).constData(),
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    return true;
}

void AtomicFile::cancel()
{
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    if (!m_temp.isEmpty() && !m_committed) ::unlink(m_temp.constData());
    releaseLock();
    unlistTemporary(m_slot);
    m_slot = -1;
    m_temp.clear();
    m_buffer.clear();
}

void AtomicFile::releaseLock()
{
    if (m_lockFd >= 0) ::close(m_lockFd); // closing releases the flock
    m_lockFd = -1;
}

int removeStaleTemporaries(const QString& folder)
{
    const QDir dir(folder);
    const QStringList names =
        dir.entryList({QStringLiteral(".*") + QLatin1String(kTemporaryTag) + QStringLiteral("??????")},
                      QDir::Files | QDir::Hidden | QDir::System);
    int removed = 0;
    const time_t now = ::time(nullptr);
    for (const QString& name : names) {
        const QByteArray path = QFile::encodeName(dir.filePath(name));
        const int fd = ::open(path.constData(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0) continue;
        struct stat st {};
        // Unlocked: its writer has ended without removing it (SIGKILL, a power cut). Seconds
        // old: not one whose writer is between creating and locking it.
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime >= 2 &&
            ::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::unlink(path.constData()) == 0)
            ++removed;
        ::close(fd);
    }
    return removed;
}

void removeTemporaryFilesNow() noexcept
{
    for (int i = 0; i < kSlots; ++i)
        if (g_slotState[i].load() == 2) ::unlink(g_slotPath[i]);
}

IoResult writeFileAtomically(const QString& path, const QByteArray& bytes,
                             const QStringList& inputs)
{
    AtomicFile f(path, inputs);
    if (!f.open() || !f.write(bytes) || !f.commit()) return IoResult::failure(f.errorString());
    return IoResult::success();
}

} // namespace il::io
