// How the CPU backend's OpenMP threads wait between parallel regions: the engine's default
// (a short spin, then sleep) and how a program applies it. See CpuThreading.cpp for why.
#pragma once

#include <string>

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
} // namespace cpu

} // namespace il
