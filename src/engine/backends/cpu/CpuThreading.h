// How the CPU backend's OpenMP threads wait between parallel regions: the engine's default
// (a short spin, then sleep) and how a program applies it. See CpuThreading.cpp for why.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace il {

// Call first in main(), before anything else runs. Unless the user set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT, sets GOMP_SPINCOUNT to the engine's default and re-executes the program with the
// same arguments (libgomp reads these variables only while it is loaded, before main()); the
// restarted program returns from here at once, with the variable removed from its environment
// again so its own child processes see the user's. If the re-execution fails, returns and the
// program runs with libgomp's default.
void applyCpuThreadingDefaults(char** argv);

namespace cpu {
// The wait policy this process runs with, for DeviceInfo::details: "spin N, then sleep" (the
// engine's default), the variables the user set ("OMP_WAIT_POLICY=active", "GOMP_SPINCOUNT=..."),
// or "libgomp's default wait" (a program that does not call applyCpuThreadingDefaults).
std::string waitPolicyDescription();

// How many of the backend's threads run the next ops, chosen from how long those threads have
// recently waited for a core (Linux's per-thread run-queue delay, /proc/self/task/ID/schedstat).
// When another program keeps a core busy, a thread that shares that core waits for whole time
// slices while the others wait for it at every barrier, so fewer threads finish sooner: the
// governor drops a thread while its threads wait for more than 0.4 of a core (a busy process
// beside two threads makes them wait ~0.9; a quiet machine up to ~0.2), and tries one
// more again after 0.1 s, then after twice as long each time the load is still there (at most
// 2 s). Results do not depend on the count (every reduction sums in fixed
// chunks; OpenBLAS splits products without changing their sums). IRONLEARN_ADAPT_THREADS=0
// keeps the count fixed. Lives on the engine thread (not thread-safe).
class ThreadGovernor {
public:
    explicit ThreadGovernor(int maxThreads);
    ~ThreadGovernor();
    ThreadGovernor(const ThreadGovernor&) = delete;
    ThreadGovernor& operator=(const ThreadGovernor&) = delete;

    // Call before ops that run on the threads: looks at the threads' waiting at most every
    // kPeriod and sets OpenMP's and OpenBLAS's thread count when it changes. Cheap otherwise.
    void poll();
    int threads() const { return m_active; }
    // For DeviceInfo::details: "adapts to other load" or "fixed thread count".
    std::string description() const;

private:
    using Clock = std::chrono::steady_clock;
    int64_t runDelayNs() const; // the pool's threads' total run-queue delay so far
    void apply(int threads);

    int m_max = 1;
    int m_active = 1;
    bool m_adaptive = false;
    std::vector<int> m_files; // each pool thread's schedstat, open
    Clock::time_point m_lastPoll{}, m_lastChange{};
    Clock::duration m_retryAfter{};
    bool m_trying = false; // the last change added a thread, and it has not held yet
    int64_t m_lastDelay = 0;
};
} // namespace cpu

} // namespace il
