// One request in flight and only the latest one waiting: a burst of requests (a slider dragged,
// a plane changed while training) costs the training worker one answer at a time, and the answer
// shown is never older than the last request but one.
#pragma once

#include <optional>
#include <utility>

namespace il::app {

template <typename Request> class LatestRequest {
public:
    // Sends request (send(request)) when none is in flight; otherwise keeps it, in place of any
    // that waits, until the answer in flight comes back (answered).
    template <typename Send> void want(Request request, Send&& send)
    {
        m_wanted = std::move(request);
        if (!m_busy) sendWanted(send);
    }
    // The answer in flight came back: the waiting request, if any, goes now.
    template <typename Send> void answered(Send&& send)
    {
        m_busy = false;
        sendWanted(send);
    }

private:
    template <typename Send> void sendWanted(Send& send)
    {
        if (!m_wanted) return;
        Request request = std::move(*m_wanted);
        m_wanted.reset();
        m_busy = true;
        send(request);
    }

    bool m_busy = false;
    std::optional<Request> m_wanted;
};

} // namespace il::app
