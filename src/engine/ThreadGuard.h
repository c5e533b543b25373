// Keeping engine work off a thread that must stay responsive (the studio's GUI thread).
//
// The studio registers its GUI thread at startup (forbidEngineWorkOnThisThread); from then on
// building a network and the backend's entry points (memory, products, the network's forward,
// backward, predict and initialisation) check the calling thread. Running on the registered
// thread is a programming error: the violation handler is called with what ran there. The
// default handler prints the message, and in debug builds then aborts as a failed assert does.
//
// The check is armed in debug builds; release builds arm it when the environment variable
// IRONLEARN_THREAD_GUARD is set (any value but "0") or when a program calls
// setEngineThreadGuardEnabled(true), as the studio's test does. Unarmed, a check is one relaxed
// atomic load.
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

namespace detail {
// True while the guard is enabled and a thread is forbidden.
extern std::atomic<bool> g_engineThreadGuardArmed;
void checkEngineThreadSlow(const char* what);
} // namespace detail

// what: the entry point ("Network", "gemm"...), named in the violation message.
inline void checkEngineThread(const char* what)
{
    if (detail::g_engineThreadGuardArmed.load(std::memory_order_relaxed))
        detail::checkEngineThreadSlow(what);
}

} // namespace il
