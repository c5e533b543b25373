// What `ironlearn-cli train` says about a run: the header before it (the data, the network,
// where it runs) and the report after it (the summary on stdout, --metrics-json).
#pragma once

#include "CrossValidation.h"
#include "Task.h"
#include "Trainer.h"

#include <QCommandLineParser>
#include <QString>

#include <optional>
#include <utility>
#include <vector>

namespace il::tasks {
struct Model;
}

namespace il::cli {

// What a run leaves for its report: the task's side metric (Task::sideMetricKey) at each
// evaluation, and what Task::settle did at its end.
struct RunTrace {
    QString key;
    std::vector<std::pair<int64_t, double>> points; // step, value
    tasks::Settled settled;                         // what Task::settle did when the run ended
    std::optional<tasks::CrossValidation> cv;       // the folds run before, when there were any
};

// What is about to train, on stderr: the data, its notes, the network and where it runs.
void printHeader(const tasks::Model& model);
// The run's summary on stdout (a failure on stderr), and --metrics-json.
void report(const QCommandLineParser& p, const tasks::Model& model, const TrainResult& result,
            const RunTrace& trace, const QString& given, const QString& out);

} // namespace il::cli
