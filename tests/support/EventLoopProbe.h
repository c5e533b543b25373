// How long this thread's event loop can go without serving a timer: a 10 ms timer runs while
// the loop spins for `ms`, and the longest gap between two of its ticks is returned. The studio
// tests use it to show that training and drawing never block the window.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTest>
#include <QTimer>

#include <algorithm>

// The gap a test allows: 250 ms, 600 under the sanitizers (everything runs 2-3x slower). It was
// 100 ms, which failed now and then on a 2-core machine at load 4-6 (gaps of 105-119 ms) with
// nothing wrong in the studio.
inline qint64 eventLoopGapLimit()
{
    return IRONLEARN_SANITIZED ? 600 : 250;
}

inline qint64 worstEventLoopGap(int ms)
{
    QElapsedTimer clock;
    qint64 last = 0, worst = 0;
    QTimer probe;
    probe.setInterval(10);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        const qint64 now = clock.elapsed();
        worst = std::max(worst, now - last);
        last = now;
    });
    clock.start();
    probe.start();
    QTest::qWait(ms);
    probe.stop();
    return worst;
}
