#include "PerTarget.h"

#include "CpuKernels.h"
#include "Errors.h"

#include <QStringList>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace testsupport {

namespace {

QString describe(const il::simd::Target& t)
{
    return QStringLiteral("%1 (%2)").arg(QString::fromStdString(t.name),
                                         QString::fromStdString(t.key));
}

// The targets to run: the one IRONLEARN_SIMD names, else every one this CPU runs. Throws
// il::BackendError for a key the CPU or the build lacks.
std::vector<il::simd::Target> targetsToRun()
{
    const char* env = std::getenv("IRONLEARN_SIMD");
    if (env && *env) {
        il::simd::useTarget(env);
        return {il::simd::activeTarget()};
    }
    return il::simd::availableTargets();
}

} // namespace

int runPerSimdTarget(QObject& test, int argc, char** argv)
{
    const char* testName = test.metaObject()->className();
    std::vector<il::simd::Target> targets;
    try {
        // Applied here first, so that the backend a test creates cannot re-apply it later and
        // silently replace the target forced below.
        il::simd::applyTargetFromEnvironment();
        targets = targetsToRun();
    } catch (const il::BackendError& e) {
        qCritical("%s: %s", testName, e.what());
        return 1;
    }
    int failures = 0;
    QStringList failed;
    // A CPU without any target named in CpuKernels.cpp (Highway's SSE4 also needs AES and
    // CLMUL) runs whatever the dispatch picks: run once on that.
    const bool force = !targets.empty();
    if (!force) targets.push_back(il::simd::activeTarget());
    for (const il::simd::Target& t : targets) {
        if (force) il::simd::useTarget(t.key);
        std::fflush(stdout); // Qt Test writes to stdout, qInfo to stderr: keep them in order
        qInfo("SIMD target %s: running %s", qPrintable(describe(t)), testName);
        const int n = QTest::qExec(&test, argc, argv);
        std::fflush(stdout);
        if (n != 0) {
            qWarning("SIMD target %s: %d test function(s) of %s FAILED", qPrintable(describe(t)), n,
                     testName);
            failed << QStringLiteral("%1: %2").arg(describe(t)).arg(n);
        }
        failures += n;
    }
    il::simd::useTarget("best");
    if (failed.isEmpty())
        qInfo("%s passed on every SIMD target run (%d)", testName, int(targets.size()));
    else
        qWarning("%s FAILED on SIMD target(s) %s", testName, qPrintable(failed.join(", ")));
    return std::min(failures, 127);
}

} // namespace testsupport
