// Every file the program writes goes through AtomicFile: the bytes go to a temporary file in
// the target's directory, which is synced and renamed over the target only when all of it was
// written. So a failed or interrupted save leaves the previous file as it was, and a save that
// did not reach the disk never reports success.
//
// What it refuses, before writing anything:
//   - a target that exists and is not a regular file (a device such as /dev/null, a FIFO, a
//     directory, a socket): renaming over it would replace the special file;
//   - a target that is one of the command's own inputs (the same file by device and inode,
//     whatever the path): `train data.csv --out data.csv` would replace the data.
// What it checks while writing: every write(2) (a full disk gives ENOSPC at the write, not at
// the end), fdatasync(2) (EIO), close(2) and rename(2); the directory is synced after the
// rename. On any error the temporary file is removed and the message names the path and the
// system's reason: "out.safetensors: cannot write: No space left on device". A write killed
// outright (SIGKILL) leaves its temporary file; the next write to that folder removes it.
#pragma once

#include "IoResult.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace il::io {

// Why `path` cannot be written as an output of a command that reads `inputs` ("" if it can):
// "is a device, not a regular file", "is the input file data.csv".
QString outputPathProblem(const QString& path, const QStringList& inputs = {});

class AtomicFile {
public:
    explicit AtomicFile(QString path, QStringList inputs = {});
    ~AtomicFile(); // removes the temporary file unless commit() succeeded
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    const QString& path() const { return m_path; }
    // The verb of error messages: "write" (default), "save" for a model.
    void setAction(QString action) { m_action = std::move(action); }
    // Checks the target (outputPathProblem) and creates the temporary file.
    bool open();
    // Buffered; every flush of the buffer is checked. False once anything failed.
    bool write(const char* data, qint64 size);
    bool write(const QByteArray& bytes) { return write(bytes.constData(), bytes.size()); }
    // Writes what is buffered, syncs, closes and renames over the target.
    bool commit();
    // Removes the temporary file; the target is untouched.
    void cancel();
    // "PATH: cannot write: REASON" after a failure.
    QString errorString() const { return m_error; }

private:
    // Records "PATH: cannot ACTION: strerror(err) (context)" and removes the temporary file.
    bool fail(int err, const QString& context = {});
    bool flushBuffer();
    void releaseLock();

    QString m_path;
    QStringList m_inputs;
    QByteArray m_temp; // the temporary file's local path, as open(2) takes it
    int m_fd = -1;
    int m_lockFd = -1; // holds an flock on the temporary file while it is ours
    QByteArray m_buffer;
    qint64 m_written = 0; // bytes in the temporary file so far
    QString m_error;
    QString m_action = QStringLiteral("write");
    bool m_committed = false;
    int m_slot = -1; // where removeTemporaryFilesNow finds the temporary file (-1: not listed)
};

// Removes the temporary files of the writes in progress. Async-signal-safe (it only calls
// unlink): for a signal handler about to end the process, so that Ctrl+C or SIGTERM during a
// save leaves the old file and no temporary one.
void removeTemporaryFilesNow() noexcept;

// Removes the temporary files that interrupted writes left in `folder` (".NAME.ironlearn-XXXXXX"
// whose writer no longer holds its lock: the process was killed, or the machine stopped).
// open() calls it for the target's folder, so the next write there cleans up. Returns how many
// it removed.
int removeStaleTemporaries(const QString& folder);

// The whole of `bytes` as the file `path`, atomically.
IoResult writeFileAtomically(const QString& path, const QByteArray& bytes,
                             const QStringList& inputs = {});

namespace detail {
// Test seam: the step at which AtomicFile fails as if the system had returned `errno`.
enum class FailStep { None, Open, Write, Sync, Close, Rename };
struct InjectedFailure {
    FailStep step = FailStep::None;
    int error = 0;             // the errno to report
    qint64 afterBytes = 0;     // FailStep::Write: fail the write that would pass this many bytes
};
extern InjectedFailure injectedFailureForTesting;
} // namespace detail

} // namespace il::io
