// One verdict on a trained table: which weights the model holds after a run (the last step's,
// the best ones early stopping went back to, or the linear start Task::settle went back to) and
// how they compare with the linear model a table's network must beat.
//
// Two judges used to speak apart: the settle compares validation losses row by row (with their
// noise), the baseline lines compare accuracies, and on iris the first said "the network beats
// its linear start" while the second said, in red, "the network does not beat logistic
// regression". The verdict says both measures in one sentence, judged by the one that chose the
// model. The studio makes it once per run (Session::verdict) and its status bar, table output
// page and charts all show this one.
#pragma once

#include "Task.h"

#include <QJsonObject>
#include <QString>

#include <cstdint>

namespace il::tasks {

struct RunVerdict {
    enum class Kept {
        None,        // no verdict (not a table, or the run failed)
        LastStep,    // the weights of the run's last step
        BestWeights, // early stopping went back to the best validation loss
        LinearStart, // the settle went back to the linear model the network started as
    };
    Kept kept = Kept::None;
    int64_t keptStep = -1; // the step whose weights the model holds (0: the linear start)
    int64_t lastStep = -1; // the run's last step
    QString keptText;      // "the network of step 64, its lowest validation loss"
    // How it compares with the linear model ("it beats logistic regression on the validation
    // loss (…) but not on accuracy (…)"); empty without a linear model to compare with.
    QString comparison;
    // The kept network does not beat the linear model by the measure that judged it: a warning.
    bool fallsShort = false;

    bool valid() const { return kept != Kept::None; }
    // The run went back to earlier weights: the charts mark keptStep.
    bool restored() const { return kept == Kept::BestWeights || kept == Kept::LinearStart; }
    // "Kept the network of step 64, its lowest validation loss: it beats … ."
    QString sentence() const;
    // The charts' legend name for the kept mark: "kept" (none when nothing was restored).
    QString label() const;
};

// The verdict of a run that ended at lastStep. settled: what Task::settle did; restoredStep:
// the step early stopping went back to (TrainResult::restoredStep), -1 when none; values: the
// evaluation of the weights now kept (Task::evaluate's keys, "baselines" among them).
RunVerdict tableVerdict(const Settled& settled, int64_t restoredStep, int64_t lastStep,
                        const QJsonObject& values);

// What a verdict is made from, kept with a model the studio saves (its task metadata's
// kVerdictKey): reopened with its data, the model gets the same verdict from a fresh evaluation
// of the same weights, instead of none.
struct VerdictRecord {
    Settled settled;
    int64_t restoredStep = -1;
    int64_t lastStep = -1; // the step the weights are at: a record of other weights is no record
    QString ending;        // how the run ended, for people ("early stopping at step 64...")
};
inline constexpr const char* kVerdictKey = "studio_run_verdict";
QJsonObject verdictRecordToJson(const VerdictRecord& record);
// False for a value that is not such a record (an older file's, a hand-edited one): no verdict.
bool verdictRecordFromJson(const QJsonValue& json, VerdictRecord& record);

} // namespace il::tasks
