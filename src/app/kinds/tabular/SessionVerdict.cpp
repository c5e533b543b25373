// Session: the one verdict on a table's run (RunVerdict.h), made when the evaluation that
// follows the run's end comes back, and said in the status bar.
#include "Session.h"
#include "TabularTask.h"

namespace il::app {

const tasks::RunVerdict& Session::verdict() const
{
    static const tasks::RunVerdict none;
    // The weights the verdict is about: those the run ended with, untouched since.
    const bool current = m_verdict.valid() && m_verdictWeights == m_weightsGeneration &&
                         m_runState == RunState::Idle && m_trainedSteps == m_verdict.lastStep;
    return current ? m_verdict : none;
}

void Session::awaitVerdict(const TrainingOutcome& outcome)
{
    m_verdict = {};
    m_verdictOutcome.reset();
    if (outcome.failed || !isKind(tasks::tabularTaskType())) return;
    m_verdictOutcome = outcome;
    m_verdictEvaluation = m_evaluations + 1; // evaluate() numbers the next one so
    m_verdictWeights = m_weightsGeneration;
}

void Session::makeVerdict(int evaluation, const Evaluation& ev)
{
    if (!m_verdictOutcome || evaluation != m_verdictEvaluation ||
        m_verdictWeights != m_weightsGeneration)
        return;
    const TrainingOutcome outcome = *m_verdictOutcome;
    m_verdictOutcome.reset();
    m_verdict = tasks::tableVerdict(outcome.settled, outcome.restoredStep, outcome.step, ev.values);
    emit verdictChanged();
    // How the run ended, then the verdict: the same sentence as under the table's headline.
    QString text = outcome.message;
    if (!text.isEmpty()) {
        text[0] = text[0].toUpper();
        if (!text.endsWith('.')) text += '.';
        text += ' ';
    }
    emit message(text + m_verdict.sentence());
}

} // namespace il::app
