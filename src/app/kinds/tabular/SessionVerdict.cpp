// Session: the one verdict on a table's run (RunVerdict.h), made when the evaluation that
// follows the run's end comes back, and said in the status bar; saved with the model (what it
// is made from), and made again when the model reopens with its data.
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

void Session::awaitVerdict(const TrainingOutcome& outcome, bool say)
{
    m_verdictSay = say;
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
    m_verdictRecord = {outcome.settled, outcome.restoredStep, outcome.step, outcome.message};
    emit verdictChanged();
    if (!m_verdictSay) return;
    // How the run ended, then the verdict: the same sentence as under the table's headline.
    QString text = outcome.message;
    if (!text.isEmpty()) {
        text[0] = text[0].toUpper();
        if (!text.endsWith('.')) text += '.';
        text += ' ';
    }
    emit message(text + m_verdict.sentence());
}

void Session::awaitSavedVerdict(const QJsonObject& savedTask)
{
    tasks::VerdictRecord record;
    if (!isKind(tasks::tabularTaskType()) ||
        !tasks::verdictRecordFromJson(savedTask.value(tasks::kVerdictKey), record) ||
        record.lastStep != m_trainedSteps)
        return;
    TrainingOutcome outcome;
    outcome.settled = record.settled;
    outcome.restoredStep = record.restoredStep;
    outcome.step = record.lastStep;
    outcome.message = record.ending;
    // Shown where it always is (the output page, the charts); the status bar says what was
    // opened, not how a run of another session ended.
    awaitVerdict(outcome, false);
}

std::optional<QJsonObject> Session::verdictToSave() const
{
    if (verdict().valid()) return tasks::verdictRecordToJson(m_verdictRecord);
    // Saved right after the run, before its evaluation came back (a scripted --save, a quick
    // Ctrl+S): what the verdict will be made from is known already.
    if (const std::optional<TrainingOutcome>& o = m_verdictOutcome;
        o && m_verdictWeights == m_weightsGeneration && m_runState == RunState::Idle &&
        m_trainedSteps == o->step)
        return tasks::verdictRecordToJson({o->settled, o->restoredStep, o->step, o->message});
    // The opened model's own record, while its weights are still the ones it was made for (its
    // evaluation has not come back yet, or the data is not open).
    tasks::VerdictRecord opened;
    if (m_openedWeights != m_weightsGeneration ||
        !tasks::verdictRecordFromJson(m_modelTaskJson.value(tasks::kVerdictKey), opened) ||
        opened.lastStep != m_trainedSteps)
        return std::nullopt;
    return tasks::verdictRecordToJson(opened);
}

} // namespace il::app
