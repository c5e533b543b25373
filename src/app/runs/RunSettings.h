// A run's settings and results as rows of text for people: what the Runs tab shows and what the
// comparison lines up. The hyperparameters are the ones a model file stores
// (io::trainerConfigToJson), so a setting added there is listed here without a change; the
// table in RunSettings.cpp only gives them labels and an order. Nothing here computes a metric:
// the values are the session's, copied into the Run.
#pragma once

#include "RunList.h"

#include <QList>
#include <QString>

#include <vector>

namespace il::app {

struct RunRow {
    QString key;   // stable: "schedule/lr_max", "data", "metric/accuracy"
    QString label; // for people: "Learning rate"
    QString value; // "0.01"; "—" when the run has no such value
};

// The data, the stack, the device and every hyperparameter.
QList<RunRow> runSettings(const Run& run);
// The hyperparameters alone (also used for what a Continue changed).
QList<RunRow> configSettings(const TrainerConfig& config);
// Steps, time, how it ended, the final losses, then the task's metrics (PSNR, accuracy…).
QList<RunRow> runResults(const Run& run);

// Two runs' rows side by side: every key of either, in a's order then b's.
struct RowPair {
    QString key, label, a, b;
    bool differs = false;
};
std::vector<RowPair> pairRows(const QList<RunRow>& a, const QList<RunRow>& b);

// The task's headline metric ("accuracy 96.7 %", "PSNR 31.2 dB"), or the validation or
// training loss when the run has no evaluation yet; "" when it has nothing.
QString runHeadline(const Run& run);
// One line: "Adam · lr 0.01 · cosine · batch 32 · seed 1".
QString runSummary(const Run& run);
// "Run 3"
QString runTitle(const Run& run);

} // namespace il::app
