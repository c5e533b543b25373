// Which of the CPU kernels' SIMD targets (CpuKernels.h) run: the ones this binary carries and
// this CPU supports, the one in use, and IRONLEARN_SIMD. Highway keeps the choice;
// HWY_DYNAMIC_DISPATCH in CpuKernels.cpp follows it. HWY_TARGETS is the same set here as there:
// both files are compiled with the project's flags.
#include "CpuKernels.h"
#include "Errors.h"

#include <hwy/highway.h>

#include <cstdlib>
#include <mutex>

namespace il::simd {

// ---- targets ----------------------------------------------------------------------------------
namespace {

struct KnownTarget {
    int64_t bit;
    const char* key;
    const char* name;
};
// Best first. Only those in HWY_TARGETS are compiled in.
// SSSE3: x86-64-v2 CPUs without AES/CLMUL (some VMs) run Highway's SSSE3 code, because its SSE4
// target needs those too.
constexpr KnownTarget kKnown[] = {{HWY_AVX3, "avx512", "AVX-512"},
                                  {HWY_AVX2, "avx2", "AVX2"},
                                  {HWY_SSE4, "sse4", "SSE4"},
                                  {HWY_SSSE3, "ssse3", "SSSE3"}};

// What this CPU runs, read once before any target is forced.
int64_t machineTargets()
{
    static const int64_t mask = hwy::SupportedTargets() & HWY_TARGETS;
    return mask;
}

Target toTarget(const KnownTarget& k)
{
    return {k.key, k.name};
}

std::string keyList()
{
    std::string list;
    for (const Target& t : availableTargets())
        list += (list.empty() ? "" : ", ") + t.key;
    return list;
}

} // namespace

std::vector<Target> availableTargets()
{
    std::vector<Target> out;
    for (const KnownTarget& k : kKnown)
        if (machineTargets() & k.bit) out.push_back(toTarget(k));
    return out;
}

Target activeTarget()
{
    const int64_t now = hwy::SupportedTargets() & HWY_TARGETS;
    for (const KnownTarget& k : kKnown)
        if (now & k.bit) return toTarget(k);
    return {"other", hwy::TargetName(now & -now)};
}

void useTarget(const std::string& key)
{
    machineTargets(); // read the CPU's own set before narrowing it
    if (key.empty() || key == "best") {
        hwy::SetSupportedTargetsForTest(0);
        hwy::SupportedTargets();
        return;
    }
    const std::string wanted = key == "avx3" ? "avx512" : key;
    for (const KnownTarget& k : kKnown) {
        if (wanted != k.key) continue;
        if (!(machineTargets() & k.bit))
            throw BackendError("IRONLEARN_SIMD=" + key + ": this CPU (or this build) has no " +
                               k.name + "; available: " + keyList());
        hwy::SetSupportedTargetsForTest(k.bit);
        hwy::SupportedTargets(); // re-chooses the dispatch target
        return;
    }
    throw BackendError("IRONLEARN_SIMD=" + key + ": unknown SIMD target; use one of: " + keyList() +
                       " (or best)");
}

void applyTargetFromEnvironment()
{
    static std::once_flag once;
    std::call_once(once, [] {
        const char* env = std::getenv("IRONLEARN_SIMD");
        if (env && *env) useTarget(env);
    });
}

} // namespace il::simd
