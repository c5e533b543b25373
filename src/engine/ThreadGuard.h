// Keeping engine work off a thread that must stay responsive (the studio's GUI thread).
//
// The studio registers its GUI thread at startup (forbidEngineWorkOnThisThread); from then on
// building a network and the engine's entry points (the network's initialisation, forward,
// backward and predict; the CPU backend's memory, fill and gemm) check the calling thread.
// Running there is a programming error: the violation handler is called with what ran. The
// default handler prints the message to stderr, and aborts when IRONLEARN_THREAD_GUARD is
// "abort" (to stop in a debugger where it happened).
//
// The check is armed in debug builds unless IRONLEARN_THREAD_GUARD is "0"; release builds arm
// it when the variable is set to anything else, or when a program calls
// setEngineThreadGuardEnabled(true), as the studio's test does. Unarmed, a check is one relaxed
// atomic load. The CUDA module (kernels/) is built apart and does not check; every studio model
// is built and opened on the CPU backend and moved to a GPU by the worker.
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace il {

// Engine work on the calling thread is a violation from now on (the guard, when armed, checks).
void forbidEngineWorkOnThisThread();
// Lifts the restriction (no thread is forbidden).
void allowEngineWorkOnAnyThread();
// Arms or disarms the check (see above for the default).
void setEngineThreadGuardEnabled(bool enabled);
bool engineThreadGuardEnabled();
// Called, on the offending thread, with a one-line description of each violation; null
// restores the default (see above). Returns the previous handler.
using EngineThreadViolationHandler = std::function<void(const std::string& what)>;
EngineThreadViolationHandler setEngineThreadViolationHandler(EngineThreadViolationHandler handler);

namespace threadguard {
// True while the guard is enabled and a thread is forbidden.
extern std::atomic<bool> g_engineThreadGuardArmed;
void checkEngineThreadSlow(const char* what);
} // namespace threadguard

// what: the entry point ("Network", "gemm"...), named in the violation message.
inline void checkEngineThread(const char* what)
{
    if (threadguard::g_engineThreadGuardArmed.load(std::memory_order_relaxed))
        threadguard::checkEngineThreadSlow(what);
}

} // namespace il
