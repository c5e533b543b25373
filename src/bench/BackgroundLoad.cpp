#include "BackgroundLoad.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace il::bench {

namespace {

// The children's ids where a signal handler can read them (async-signal-safe: a fixed array
// and plain kill()). Filled before the handlers are installed, cleared after the children died.
constexpr int kMaxChildren = 256;
volatile pid_t g_children[kMaxChildren];
volatile sig_atomic_t g_childCount = 0;
const int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];

void killChildren()
{
    for (int i = 0; i < g_childCount; ++i)
        if (g_children[i] > 0) kill(g_children[i], SIGKILL);
}

// Kills the children, then lets the signal do what it did before (by default: end the bench).
void onSignal(int sig)
{
    killChildren();
    for (int i = 0; i < 3; ++i)
        if (kSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
    raise(sig);
}

[[noreturn]] void spin(pid_t parent)
{
    // Die with the parent, however it ends; if it already ended, stop now.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    for (int sig : kSignals)
        signal(sig, SIG_DFL);
    volatile unsigned long counter = 0;
    for (;;)
        counter = counter + 1;
}

} // namespace

BackgroundLoad::BackgroundLoad(int processes)
{
    if (processes < 0 || processes > kMaxChildren)
        throw std::runtime_error("--background-load: at most " + std::to_string(kMaxChildren) +
                                 " processes");
    struct sigaction action {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < 3; ++i) {
        sigaction(kSignals[i], nullptr, &g_previous[i]);
        // An ignored signal (SIGINT in a background job) stays ignored.
        if (g_previous[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &action, nullptr);
    }
    const pid_t parent = getpid();
    for (int i = 0; i < processes; ++i) {
        const pid_t pid = fork();
        if (pid == 0) spin(parent);
        if (pid < 0) {
            const std::string reason = std::strerror(errno);
            stop();
            throw std::runtime_error("--background-load: cannot start a busy process: " + reason);
        }
        m_children.push_back(pid);
        g_children[i] = pid;
        g_childCount = i + 1;
    }
}

BackgroundLoad::~BackgroundLoad()
{
    stop();
}

void BackgroundLoad::stop()
{
    killChildren();
    for (const pid_t pid : m_children)
        while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    g_childCount = 0;
    m_children.clear();
    for (int i = 0; i < 3; ++i)
        sigaction(kSignals[i], &g_previous[i], nullptr);
}

} // namespace il::bench
