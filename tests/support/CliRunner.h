// Runs the real ironlearn-cli (IRONLEARN_CLI) in a working directory and collects what it
// printed, for the CLI test executables; CliTestCase is their common base (a scratch folder and
// the run settings each suite needs).
#pragma once

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

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

// The base of a CLI test: a scratch folder (path()) in which run() starts the CLI with this
// suite's settings (the fields below, set in the constructor).
class CliTestCase : public QObject {
protected:
    QTemporaryDir m_dir;
    // Commands that compute (train, generate, evaluate) get --threads 1: the workloads are
    // tiny, and two OpenMP threads on a busy two-core machine wait on each other (10x slower).
    bool m_oneThread = false;
    // train without --folds gets --folds 0: a validation split, what most tests check (small
    // tables are cross-validated by default, which testCliFolds checks).
    bool m_validationSplit = false;
    bool m_quietTrain = false; // train gets --quiet
    int m_timeoutMs = 60000;
    QProcessEnvironment m_env = QProcessEnvironment::systemEnvironment();

    QString path(const QString& name) const { return m_dir.filePath(name); }
    RunResult run(QStringList args, int timeoutMs = 0) const
    {
        const QString command = args.value(0);
        if (m_quietTrain && command == "train") args << "--quiet";
        if (m_oneThread && QStringList{"train", "generate", "evaluate"}.contains(command))
            args << "--threads" << "1";
        if (m_validationSplit && command == "train" && !args.contains("--folds"))
            args << "--folds" << "0";
        return runCli(m_dir.path(), args, timeoutMs > 0 ? timeoutMs : m_timeoutMs, m_env);
    }
    // A JSON file the CLI wrote in the scratch folder (empty if unreadable).
    QJsonObject json(const QString& name) const
    {
        return QJsonDocument::fromJson(clitest::readBytes(path(name))).object();
    }
};
