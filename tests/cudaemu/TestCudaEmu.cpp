// The CUDA emulation's own checks (tests/cudaemu/README.md): each function runs a small CUDA
// program (EmuSelfTest.cu) with a mistake a GPU punishes, and the emulation must punish it too,
// so that testCudaParityEmulated can find the same mistake in kernels/.
#include "EmuSelfTest.h"

#include <QTest>

#include <cmath>

class TestCudaEmu : public QObject {
    Q_OBJECT

private slots:
    // __launch_bounds__(64): a launch of 65 or more threads per block fails, as on a GPU
    // (cudaErrorLaunchOutOfResources, 701); 64 runs.
    void launchBoundsAreHonoured()
    {
        QCOMPARE(emutest::launchBounded(64), 0);
        QCOMPARE(emutest::launchBounded(32), 0);
        QCOMPARE(emutest::launchBounded(128), 701);
        QCOMPARE(emutest::launchBounded(64), 0); // the error was read: the next launch is clean
    }
    // A block does not see the shared memory of the block before it: uninitialised is NaN here.
    void sharedMemoryIsFreshForEachBlock()
    {
        const float seen = emutest::sharedValueSeenByTheSecondBlock();
        QVERIFY2(std::isnan(seen), qPrintable(QString("block 1 read %1").arg(seen)));
    }
    // Queued work runs when the host synchronises: a read before the sync sees the old value.
    void workWaitsForTheSync()
    {
        const emutest::Reads r = emutest::copyBackWithAndWithoutSync();
        QCOMPARE(r.beforeSync, 0.f);
        QCOMPARE(r.afterSync, 1.f);
    }
    // cudaFreeAsync is in stream order: the work queued before it still reads the buffer.
    void asyncFreeWaitsForTheWorkBeforeIt()
    {
        QCOMPARE(emutest::writtenBeforeAsyncFree(), 1.f);
    }
};

QTEST_GUILESS_MAIN(TestCudaEmu)
#include "TestCudaEmu.moc"
