#include "ThreadGuard.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace il {

namespace threadguard {
std::atomic<bool> g_engineThreadGuardArmed{false};
} // namespace threadguard

namespace {

// IRONLEARN_THREAD_GUARD: unset or "" (the build's default), "0" (off), "abort", or anything
// else (on, reporting).
std::string guardVariable()
{
    const char* env = std::getenv("IRONLEARN_THREAD_GUARD");
    return env ? env : "";
}

bool enabledByDefault()
{
    const std::string env = guardVariable();
#ifdef NDEBUG
    return !env.empty() && env != "0";
#else
    return env != "0";
#endif
}

struct GuardState {
    std::mutex mutex;
    bool enabled = enabledByDefault();
    bool hasThread = false;
    std::atomic<std::thread::id> forbidden{}; // read without the mutex by every check
    EngineThreadViolationHandler handler;
};

GuardState& state()
{
    static GuardState s;
    return s;
}

// Call with the mutex held.
void rearm(const GuardState& s)
{
    threadguard::g_engineThreadGuardArmed.store(s.enabled && s.hasThread,
                                                std::memory_order_relaxed);
}

} // namespace

void forbidEngineWorkOnThisThread()
{
    GuardState& s = state();
    const std::lock_guard lock(s.mutex);
    s.forbidden.store(std::this_thread::get_id(), std::memory_order_relaxed);
    s.hasThread = true;
    rearm(s);
}

void allowEngineWorkOnAnyThread()
{
    GuardState& s = state();
    const std::lock_guard lock(s.mutex);
    s.hasThread = false;
    rearm(s);
}

void setEngineThreadGuardEnabled(bool enabled)
{
    GuardState& s = state();
    const std::lock_guard lock(s.mutex);
    s.enabled = enabled;
    rearm(s);
}

bool engineThreadGuardEnabled()
{
    GuardState& s = state();
    const std::lock_guard lock(s.mutex);
    return s.enabled;
}

EngineThreadViolationHandler setEngineThreadViolationHandler(EngineThreadViolationHandler handler)
{
    GuardState& s = state();
    const std::lock_guard lock(s.mutex);
    std::swap(s.handler, handler);
    return handler;
}

void threadguard::checkEngineThreadSlow(const char* what)
{
    GuardState& s = state();
    if (std::this_thread::get_id() != s.forbidden.load(std::memory_order_relaxed)) return;
    EngineThreadViolationHandler handler;
    {
        const std::lock_guard lock(s.mutex);
        if (!s.enabled || !s.hasThread) return;
        handler = s.handler;
    }
    const std::string message =
        std::string("engine work on a thread that must not run it: ") + what;
    if (handler) return handler(message);
    std::fprintf(stderr, "ironlearn: %s\n", message.c_str());
    if (guardVariable() == "abort") std::abort(); // asked for: stop where it happened
}

} // namespace il
