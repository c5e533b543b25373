// Session: what each unit of the network has learned (tasks::lookInside), computed on the
// training worker between two steps and answered on the GUI thread.
#include "Session.h"

namespace il::app {

namespace {

tasks::NetworkInside insideOf(ModelState& m, const tasks::InsideRequest& request)
{
    tasks::NetworkInside inside;
    inside.step = m.state.step;
    if (!m.network) {
        inside.note = "Press Start: each unit's picture appears here and changes as it learns.";
        return inside;
    }
    if (!m.task) {
        inside.note = "Open the data this model was trained on to see what its units learned "
                      "(File > Open Dataset).";
        return inside;
    }
    // A reply must come even when the backend fails, or no request would follow this one.
    try {
        inside = tasks::lookInside(*m.task, *m.network, request);
    } catch (const std::exception& e) {
        inside = {};
        inside.note = QString("The units cannot be drawn: ") + e.what();
    }
    inside.step = m.state.step;
    return inside;
}

} // namespace

void Session::requestInside(const tasks::InsideRequest& request)
{
    m_inside.want(request, [this](const tasks::InsideRequest& r) { sendInside(r); });
}

void Session::sendInside(const tasks::InsideRequest& request)
{
    m_worker->postAndReply(
        this, [request](ModelState& m) { return insideOf(m, request); },
        [this, weights = m_weightsGeneration](const tasks::NetworkInside& inside) {
            // Weights replaced since (other data, a new model): the panel asks again.
            if (weights == m_weightsGeneration) emit insideReady(inside);
            m_inside.answered([this](const tasks::InsideRequest& r) { sendInside(r); });
        });
}

} // namespace il::app
