// The default wait policy of the OpenMP threads: passive (a thread that runs out of work
// sleeps in the kernel at once instead of spinning), unless the user set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT.
//
// Why: libgomp's default spins up to 300,000 rounds (milliseconds) at every barrier. Alone on
// the machine that costs nothing, but a desktop always has other work on its cores (the GUI
// thread, a browser). With one busy process on a 2-core machine, the thread that shares its
// core with it is descheduled for whole time slices while its peer spins on the other core, so
// the scheduler never sees an idle core to move work to: the 2-thread tanh-MLP epoch went from
// ~80 ms to ~1,000 ms. Passive waiting frees the core at once. Measured with
// `ironlearn-bench --background-load 1` (README, Speed: steady under load); GOMP_SPINCOUNT of
// 1,000 and 10,000 were tried and still left the loaded epoch 5-10x its quiet time.
//
// How: libgomp reads the variables in its own initialiser, which runs before main() and before
// any constructor of the program, so setting them at run time has no effect (and a
// .preinit_array entry runs before the C library has set up `environ`). So the program sets the
// variable and re-executes itself once, marked by kMarker; the restarted process sees the
// marker in a constructor (after libgomp has read the variable) and removes both.
#include "CpuThreading.h"

#include <cstdlib>

#include <unistd.h>

namespace il {
namespace {

constexpr const char* kMarker = "IRONLEARN_ENGINE_SET_WAIT_POLICY";
bool g_engineSetPassive = false;

// Runs after every shared library's initialiser, libgomp's included.
[[gnu::constructor]] void takeMarker()
{
    if (!std::getenv(kMarker)) return;
    g_engineSetPassive = true;
    unsetenv(kMarker);
    unsetenv("OMP_WAIT_POLICY");
}

} // namespace

void applyCpuThreadingDefaults(char** argv)
{
    if (g_engineSetPassive || std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"))
        return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv(kMarker, "1", 1);
    execv("/proc/self/exe", argv);
    unsetenv(kMarker); // no re-execution: carry on with libgomp's default
    unsetenv("OMP_WAIT_POLICY");
}

std::string cpu::waitPolicyDescription()
{
    if (g_engineSetPassive) return "passive wait";
    std::string out;
    for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"}) {
        if (const char* value = std::getenv(name))
            out += std::string(out.empty() ? "" : ", ") + name + "=" + value;
    }
    return out.empty() ? "libgomp's default wait" : out;
}

} // namespace il
