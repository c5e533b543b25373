#include "RunDriver.h"

#include "Backend.h"

#include <chrono>

namespace il::tasks {

namespace {

// The folds of a fresh model first: false when the run must not train on (outcome says why).
bool crossValidateFirst(Model& model, const RunSetup& setup, const RunHooks& hooks,
                        RunOutcome& outcome)
{
    CrossValidation cv =
        crossValidate(*model.task, *model.backend, model.network->spec(), model.config,
                      setup.foldPolicy, hooks.folds, setup.foldModel);
    if (!cv.failure.isEmpty()) {
        outcome.failure = "cross-validation failed: " + cv.failure.toStdString();
        outcome.cv = std::move(cv);
        return false;
    }
    if (cv.stopped) {
        outcome.foldsStopped = true;
        outcome.result.reason = StopReason::Cancelled;
        outcome.result.message = QString("stopped during cross-validation, after %1 of %2 folds")
                                     .arg(cv.runs.size())
                                     .arg(cv.folds)
                                     .toStdString();
        outcome.result.seconds = cv.seconds;
        outcome.cv = std::move(cv);
        return false;
    }
    outcome.settled = settledByCrossValidation(cv);
    model.config = refitConfig(model.config, cv);
    outcome.cv = std::move(cv);
    return true;
}

// The folds' networks averaged (FoldModel::Averaged) become the model: no run on every row
// follows. Its state stands at the folds' length, so a later run continues it instead of
// cross-validating again.
void keepAveragedFolds(Model& model, const RunSetup& setup, RunOutcome& outcome)
{
    const CrossValidation& cv = *outcome.cv;
    model.network = averagedNetwork(cv, *model.task, *model.backend);
    model.optimizer = std::make_unique<Optimizer>(*model.backend, model.config.optimizer,
                                                  model.network->parameterRanges());
    // Nothing was trained again: the budget is the folds' length, spent (a later run asks for
    // more, and goes on from here, as after any finished run).
    model.config.stopAfter = 0;
    model.config.epochs = 0;
    model.config.steps = cv.refitSteps;
    model.state = TrainingState{};
    model.state.step = cv.refitSteps;
    model.state.plannedSteps = cv.refitSteps;
    model.state.seconds = cv.seconds;
    model.state.bestValLoss = cv.blendLoss;
    TrainResult& r = outcome.result;
    r.reason = StopReason::Finished;
    r.seconds = cv.seconds;
    r.valLoss = cv.blendLoss;
    r.message = "kept the " + std::to_string(cv.folds) +
                " folds' networks averaged as one network, " + cv.averagedSpec +
                " (nothing was trained again on every row)";
    if (setup.keepBest) *setup.keepBest = {};
}

// A failed device: the model on the CPU from good (the trainer's last host copy, the weights
// before the move, or a copy taken now), when the run has a CPU to go to.
void rescueOnCpu(Model& model, const RunSetup& setup, std::shared_ptr<const HostCopy> good,
                 RunOutcome& outcome)
{
    if (!setup.cpuRescue || model.backend->memoryOnHost()) return;
    try {
        model.recoverOnCpu(setup.cpuRescue(), std::move(good));
        outcome.movedToCpu = true;
    } catch (const std::exception& e) {
        outcome.rescueFailure = e.what();
    }
}

// A run that ended on its own (or on a device failure the trainer caught): the CPU takes over
// a failed device, then the settle or the folds' verdict, the best weights, the lowered rates.
void endRun(Model& model, const RunSetup& setup, bool folds, BestKeeper* keeper,
            RunOutcome& outcome)
{
    Task& task = *model.task;
    // The trainer caught the device's failure itself and rewound the state to its last host copy:
    // the weights come back from it, on the CPU.
    if (outcome.result.reason == StopReason::DeviceFailure && outcome.result.lastGood)
        rescueOnCpu(model, setup, outcome.result.lastGood, outcome);
    if (setup.settle) {
        if (folds) // the folds decided; the rows the run trained on hold none out
            endRefit(task, *model.network, outcome.settled, outcome.result);
        else // a run that ended on its own may go back to a simpler model
            outcome.settled = settleRun(task, *model.network, model.config, outcome.result);
    }
    if (keeper) {
        const TrainResult& r = outcome.result;
        if (folds)
            *setup.keepBest = {};
        else if (r.reason != StopReason::DeviceFailure)
            // After a settle the weights are the linear model's, with its validation loss: the
            // kept copy stays on offer only when it is clearly better than that (a run wrecked
            // by a high rate), not for the network the settle set aside as no better.
            outcome.best = keeper->finish(
                r.reason == StopReason::NonFinite,
                outcome.settled.replaced || r.reason == StopReason::EarlyStopping ? r.valLoss : NAN,
                *model.network, *model.optimizer, model.state);
    }
    // Saved with the model: a resumed run goes on at the rate that worked.
    if (outcome.result.recoveries > 0) keepLoweredRates(model.config, outcome.result.schedule);
}

} // namespace

RunOutcome runModel(Model& model, const RunSetup& setup, const RunHooks& hooks)
{
    RunOutcome outcome;
    Task& task = *model.task;
    // The weighting is the user's, the weights are the data's (its training rows).
    QString why;
    if (!applyClassWeights(task, model.config, &why)) {
        outcome.failure = why.toStdString();
        return outcome;
    }
    try {
        model.upload(); // once: the trainer keeps the data on the backend for the whole run
    } catch (const BackendError& e) {
        outcome.failure = std::string("training failed: ") + e.what();
        outcome.backendFailure = true;
        outcome.deviceError = e.what();
        rescueOnCpu(model, setup, setup.startWeights, outcome);
        return outcome;
    } catch (const std::exception& e) {
        outcome.failure = std::string("training failed: ") + e.what();
        return outcome;
    }
    // The best weights, copied at the evaluations that beat them (not the folds').
    std::optional<BestKeeper> keeper;
    if (setup.keepBest) keeper.emplace(*setup.keepBest, model.trainingData().valX.size() > 0);
    const auto started = std::chrono::steady_clock::now();
    if (hooks.uploaded) hooks.uploaded();
    const bool folds = task.folds() > 0 && model.state.step == 0;
    if (folds && !crossValidateFirst(model, setup, hooks, outcome)) return outcome;
    if (folds && outcome.cv && outcome.cv->averaged) {
        try {
            keepAveragedFolds(model, setup, outcome);
        } catch (const std::exception& e) {
            outcome.failure = std::string("cross-validation failed: ") + e.what();
        }
        return outcome;
    }

    // Optional so it goes before the model may move (it holds buffers on the model's backend).
    std::optional<Trainer> trainer;
    trainer.emplace(*model.network, *model.optimizer, model.config, model.state, setup.policy);
    if (hooks.progress || keeper)
        trainer->setProgressCallback([&](const Progress& p) {
            if (keeper)
                keeper->onProgress(
                    p, *model.network, *model.optimizer, model.state,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                        .count());
            if (hooks.progress) hooks.progress(p, *trainer);
        });
    const bool metric = setup.taskMetric && task.hasTrainingMetric();
    if (metric || hooks.evaluation)
        trainer->setMetricHook(
            [&task, &hooks, metric](Network& n) {
                if (hooks.evaluation) hooks.evaluation(n);
                return metric ? task.trainingMetric(n) : NAN;
            },
            NAN, task.metricLowerIsBetter());
    if (hooks.active) hooks.active(&*trainer);
    try {
        outcome.result = trainer->run(model.trainingData());
    } catch (const BackendError& e) {
        outcome.failure = std::string("training failed: ") + e.what();
        outcome.backendFailure = true;
        outcome.deviceError = e.what();
    } catch (const std::exception& e) {
        outcome.failure = std::string("training failed: ") + e.what();
    }
    if (hooks.active) hooks.active(nullptr);
    trainer.reset(); // before a move to the CPU: it holds buffers on the failed backend
    if (outcome.backendFailure) rescueOnCpu(model, setup, setup.startWeights, outcome);
    if (!outcome.failure.empty()) {
        outcome.settled = {};
        return outcome;
    }
    endRun(model, setup, folds, keeper ? &*keeper : nullptr, outcome);
    return outcome;
}

} // namespace il::tasks
