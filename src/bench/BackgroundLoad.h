// Busy processes beside the benchmark (ironlearn-bench --background-load N): what a desktop
// always has on its cores (the GUI thread, a browser), so the bench can report how the engine's
// threads hold up when they do not have the machine to themselves.
#pragma once

#include <sys/types.h>

#include <vector>

namespace il::bench {

// Forks `processes` children that each spin on the CPU until the object is destroyed or
// stop() is called; they are then killed and reaped. Children never outlive the bench: they
// ask the kernel for SIGKILL when their parent dies (also by SIGKILL or a crash), and SIGINT,
// SIGTERM and SIGHUP in the parent kill them before the parent ends. One instance at a time.
// Throws std::runtime_error when a child cannot be forked (those already started are stopped).
class BackgroundLoad {
public:
    explicit BackgroundLoad(int processes);
    ~BackgroundLoad();
    BackgroundLoad(const BackgroundLoad&) = delete;
    BackgroundLoad& operator=(const BackgroundLoad&) = delete;

    void stop();
    int processes() const { return static_cast<int>(m_children.size()); }

private:
    std::vector<pid_t> m_children;
};

} // namespace il::bench
