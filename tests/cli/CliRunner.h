// Runs the real ironlearn-cli (IRONLEARN_CLI) in a working directory and collects what it
// printed, for the CLI test executables.
#pragma once

#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

struct RunResult {
    int code = -1; // -1: crashed or timed out
    QString out, err;
};

inline RunResult runCli(const QString& workingDirectory, const QStringList& args,
                        int timeoutMs = 60000,
                        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setWorkingDirectory(workingDirectory);
    p.setProcessEnvironment(env);
    p.start(IRONLEARN_CLI, args);
    RunResult r;
    if (!p.waitForStarted(10000)) {
        r.err = "did not start: " + p.errorString();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        r.err = "timed out: " + args.join(' ');
        return r;
    }
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

// The file and message checks every CLI test uses.
namespace clitest {

inline QByteArray readBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

// A message of one non-empty line (how every CLI error is written).
inline bool isOneLine(const QString& text)
{
    return !text.trimmed().isEmpty() && !text.trimmed().contains('\n');
}

} // namespace clitest
