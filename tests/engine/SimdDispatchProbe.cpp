// Compiled once per Highway target, like src/engine/backends/cpu/CpuKernels.cpp (see
// SimdDispatchProbe.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "SimdDispatchProbe.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <hwy/highway.h>

#include "SimdDispatchProbe.h"

HWY_BEFORE_NAMESPACE();
namespace simdprobe::HWY_NAMESPACE {

const char* TargetName()
{
    return hwy::TargetName(HWY_TARGET);
}

} // namespace simdprobe::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simdprobe {

HWY_EXPORT(TargetName);

std::string dispatchedTarget()
{
    return HWY_DYNAMIC_DISPATCH(TargetName)();
}

} // namespace simdprobe
#endif // HWY_ONCE
