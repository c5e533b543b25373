// A main() for Qt Test objects that runs the whole test object once per SIMD target this CPU
// supports (il::simd::availableTargets(): AVX-512, AVX2, SSE4 as available), so that every
// code path of the CPU kernels is checked on a machine that would otherwise only ever run its
// best one. Use IL_PER_SIMD_TARGET_MAIN(TestClass) in place of QTEST_GUILESS_MAIN(TestClass).
//
// Each run is announced ("SIMD target AVX2 (avx2): running TestX"), and a summary at the end
// names every target with failures, since Qt Test's own FAIL! lines do not say which target
// ran. IRONLEARN_SIMD=KEY restricts the run to that one target. The exit status is the total of
// failed test functions over all targets, capped at 127 (an exit status is one byte: 256
// failures must not read as success). Qt Test options (a function name, -v2, ...) apply to
// every run; an -o FILE is rewritten by each run, so only the last target's log is kept there.
#pragma once

#include <QCoreApplication>
#include <QObject>
#include <QTest>

namespace testsupport {

// Runs `test` with QTest::qExec once per target (see above); returns the exit status.
int runPerSimdTarget(QObject& test, int argc, char** argv);

} // namespace testsupport

#define IL_PER_SIMD_TARGET_MAIN(TestObject)                                                        \
    int main(int argc, char** argv)                                                                \
    {                                                                                              \
        QCoreApplication app(argc, argv);                                                          \
        TestObject tc;                                                                             \
        QTEST_SET_MAIN_SOURCE_PATH                                                                 \
        return testsupport::runPerSimdTarget(tc, argc, argv);                                      \
    }
