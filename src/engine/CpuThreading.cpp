// The default wait of the OpenMP threads at a barrier: spin kSpinCount rounds (a few
// microseconds), then sleep in the kernel, unless the user set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT. The one place this choice is made.
//
// Why: libgomp's default spins 300,000 rounds (milliseconds) at every barrier. Alone on the
// machine that is the fastest, but a desktop always has other work on its cores (the GUI
// thread, a browser). With one busy process on a 2-core machine, the thread that shares its
// core with it is descheduled for whole time slices while its peer spins on the other core, so
// the scheduler never sees an idle core to move work to: the 2-thread tanh-MLP epoch went from
// ~80 ms to ~1,000 ms. Measured with `ironlearn-bench --background-load 1` (README, Speed:
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

#include <cstdlib>
#include <cstring>

#include <unistd.h>

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

} // namespace il
