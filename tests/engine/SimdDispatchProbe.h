// Which Highway target HWY_DYNAMIC_DISPATCH calls right now, seen from a function compiled for
// every target like the CPU kernels (SimdDispatchProbe.cpp). The kernels give the same bits on
// every target by design, so their outputs cannot show that il::simd::useTarget switched them;
// this probe reads Highway's dispatch choice, which the kernels share, directly.
#pragma once

#include <string>

namespace simdprobe {

// Highway's name of the dispatched target: "AVX3" (AVX-512), "AVX2", "SSE4", ...
std::string dispatchedTarget();

} // namespace simdprobe
