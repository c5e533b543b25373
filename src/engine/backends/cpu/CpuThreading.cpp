// The default wait of the OpenMP threads at a barrier: spin kSpinCount rounds (a few
// microseconds), then sleep in the kernel, unless the user set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT. The one place this choice is made.
//
// Why: libgomp's default spins 300,000 rounds (milliseconds) at every barrier. Alone on the
// machine that is the fastest, but a desktop always has other work on its cores (the GUI
// thread, a browser). With one busy process on a 2-core machine, the thread that shares its
// core with it is descheduled for whole time slices while its peer spins on the other core, so
// the scheduler never sees an idle core to move work to: the 2-thread tanh-MLP epoch went from
// ~80 ms to ~1,000 ms. Measured with `ironlearn-bench --background-load 1` (docs/benchmarks.md,
// steady under load), on the 2-core EPYC: passive waiting (no spin) holds the loaded epoch to
// ~150-250 ms but makes the quiet epoch ~1.8x slower (a futex wake per parallel region, and
// the tanh epoch has thousands of small regions); 1,000 rounds or more leave the loaded epoch
// at 350 ms and up; 300 rounds keep the quiet epoch within ~10% and the loaded one at
// ~200-250 ms. The large SIREN step is the same (within noise) at every setting tried.
//
// How: libgomp reads the variables in its own initialiser, which runs before main() and before
// any constructor of the program, so setting them at run time has no effect (and a
// .preinit_array entry runs before the C library has set up `environ`). So the program sets the
// variable and re-executes itself once, marked by kMarker; the restarted process sees the
// marker in a constructor (after libgomp has read the variable) and removes both.
#include "CpuThreading.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

extern "C" void openblas_set_num_threads(int);

namespace il {
namespace {

constexpr const char* kSpinCount = "300";
constexpr const char* kMarker = "IRONLEARN_ENGINE_SET_SPINCOUNT";
bool g_engineSetSpinCount = false;

// Runs after every shared library's initialiser, libgomp's included.
[[gnu::constructor]] void takeMarker()
{
    if (!std::getenv(kMarker)) return;
    g_engineSetSpinCount = true;
    unsetenv(kMarker);
    unsetenv("GOMP_SPINCOUNT");
}

} // namespace

void applyCpuThreadingDefaults(char** argv)
{
    if (g_engineSetSpinCount || std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"))
        return;
    // Started through the dynamic loader (ld-linux.so PROGRAM): /proc/self/exe is the loader.
    char self[4096];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) return;
    self[length] = '\0';
    if (std::strstr(self, "/ld-")) return;
    setenv("GOMP_SPINCOUNT", kSpinCount, 1);
    setenv(kMarker, "1", 1);
    execv(self, argv);
    unsetenv(kMarker); // no re-execution: carry on with libgomp's default
    unsetenv("GOMP_SPINCOUNT");
}

std::string cpu::waitPolicyDescription()
{
    if (g_engineSetSpinCount) return std::string("spin ") + kSpinCount + ", then sleep";
    std::string out;
    for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"}) {
        if (const char* value = std::getenv(name))
            out += std::string(out.empty() ? "" : ", ") + name + "=" + value;
    }
    return out.empty() ? "libgomp's default wait" : out;
}

// ---- ThreadGovernor ----------------------------------------------------------------------------
// Measured with `ironlearn-bench --background-load 1` on the 2-core EPYC: the constants were
// chosen there (docs/benchmarks.md, "Steady under load", has the table).
namespace {
constexpr auto kPeriod = std::chrono::milliseconds(10); // how often the waiting is read
constexpr double kDropAbove = 0.4;                      // cores' worth of waiting, and
constexpr int64_t kDropAboveNs = 3'000'000;             // at least this much (3 ms)
// After a drop one more thread is tried again kRetryFirst later; while the load stays, every
// failed try doubles the wait up to kRetryMost, so a short burst costs ~0.1 s on fewer threads
// and a lasting one a try every 2 s. A try that holds for kRetryFirst resets the wait.
constexpr auto kRetryFirst = std::chrono::milliseconds(100);
constexpr auto kRetryMost = std::chrono::milliseconds(2000);
} // namespace

cpu::ThreadGovernor::ThreadGovernor(int maxThreads)
    : m_max(std::max(1, maxThreads)), m_active(m_max)
{
    const char* env = std::getenv("IRONLEARN_ADAPT_THREADS");
    m_adaptive = m_max > 1 && !(env && std::strcmp(env, "0") == 0);
    if (!m_adaptive) return;
    // The pool's threads (libgomp keeps the same ones for the teams of this thread).
    std::vector<long> ids(static_cast<size_t>(m_max), 0);
#pragma omp parallel num_threads(m_max)
    ids[static_cast<size_t>(omp_get_thread_num())] = syscall(SYS_gettid);
    for (long id : ids) {
        char path[64];
        std::snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", id);
        const int fd = id > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (fd < 0) { // no schedstat (kernel without sched_info): keep the count fixed
            for (int f : m_files)
                close(f);
            m_files.clear();
            m_adaptive = false;
            return;
        }
        m_files.push_back(fd);
    }
    m_lastPoll = m_lastChange = Clock::now();
    m_lastDelay = runDelayNs();
}

cpu::ThreadGovernor::~ThreadGovernor()
{
    for (int f : m_files)
        close(f);
}

int64_t cpu::ThreadGovernor::runDelayNs() const
{
    int64_t total = 0;
    for (int fd : m_files) {
        char text[96];
        const ssize_t n = pread(fd, text, sizeof text - 1, 0);
        if (n <= 0) continue;
        text[n] = '\0';
        unsigned long long onCpu = 0, waiting = 0;
        if (std::sscanf(text, "%llu %llu", &onCpu, &waiting) == 2)
            total += static_cast<int64_t>(waiting);
    }
    return total;
}

void cpu::ThreadGovernor::apply(int threads)
{
    m_active = threads;
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    m_lastChange = Clock::now();
}

void cpu::ThreadGovernor::poll()
{
    if (!m_adaptive) return;
    const auto now = Clock::now();
    const auto elapsed = now - m_lastPoll;
    if (elapsed < kPeriod) return;
    const int64_t delay = runDelayNs();
    const int64_t waited = delay - m_lastDelay;
    const double waitingCores =
        static_cast<double>(waited) /
        static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
    m_lastPoll = now;
    m_lastDelay = delay;
    if (m_active > 1 && waitingCores > kDropAbove && waited > kDropAboveNs) {
        m_retryAfter = m_trying ? std::min<Clock::duration>(m_retryAfter * 2, kRetryMost)
                                : Clock::duration(kRetryFirst);
        m_trying = false;
        apply(m_active - 1);
    } else if (m_active < m_max && now - m_lastChange >= m_retryAfter) {
        m_trying = true;
        apply(m_active + 1);
    } else if (m_trying && now - m_lastChange >= kRetryFirst) {
        m_trying = false; // the added thread held
    }
}

std::string cpu::ThreadGovernor::description() const
{
    return m_adaptive ? "thread count adapts to other load" : "fixed thread count";
}

} // namespace il
