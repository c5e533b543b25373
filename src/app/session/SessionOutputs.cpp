// The Session's evaluation request: a job on the training worker (between two steps while
// training, so it sees one consistent set of weights), answered by a signal on the GUI thread.
// The requests of one kind of task are in its folder: kinds/image/SessionImage.cpp (render),
// kinds/names/SessionNames.cpp (generate, the temperature sweep, the next character).
#include "Session.h"

namespace il::app {

namespace {

constexpr int kPredictionRows = 1000;

Evaluation evaluateModel(ModelState& m)
{
    Evaluation ev;
    if (!m.network || !m.task) return ev;
    const tasks::TaskMetrics metrics = m.task->evaluate(*m.network);
    ev.summary = metrics.summary;
    ev.values = metrics.values;
    tasks::Predictions predictions = m.task->predictions(*m.network, kPredictionRows);
    ev.classification = predictions.classification;
    ev.where = predictions.where;
    ev.rows = std::move(predictions.rows);
    return ev;
}

} // namespace

void Session::evaluate()
{
    if (!m_task) return;
    m_worker->postAndReply(
        this,
        [](ModelState& m) {
            std::optional<Evaluation> ev;
            if (m.network && m.task) ev = evaluateModel(m);
            return ev;
        },
        [this, weights = m_weightsGeneration,
         number = ++m_evaluations](const std::optional<Evaluation>& ev) {
            if (!ev || weights != m_weightsGeneration) return;
            makeVerdict(number, *ev); // before the output page shows the evaluation
            emit evaluated(*ev);
        });
}

} // namespace il::app
