// One training run of a model, from its data to its outcome, as every front end runs it: the
// command line's train, the studio's worker and the image race call runModel and keep only
// what is theirs (printing, charts, previews, best-weights copies).
//
// In order: the class weights of the task's training rows, the upload, the folds (a fresh
// model of a task with folds), the trainer with the task's metric at each evaluation, then the
// end of the run: the folds' verdict (endRefit) or the task's settle, the best weights kept, a
// learning rate that a recovery lowered kept in the configuration, and after a device failure
// the model on the CPU with its last good weights.
#pragma once

#include "BestWeights.h"
#include "CrossValidation.h"
#include "HostCopy.h"
#include "Model.h"
#include "Task.h"
#include "Trainer.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace il::tasks {

struct RunSetup {
    RunPolicy policy;       // the run's
    RunPolicy foldPolicy;   // each fold's, when the folds run first
    bool taskMetric = true; // the task's metric at each evaluation (Task::trainingMetric)
    bool settle = true;     // end with the task's settle or the folds' verdict
    // After a device failure, the CPU backend the model moves to with its last good weights, so
    // it can be saved and trained further; null: it stays where it failed.
    std::function<std::unique_ptr<Backend>()> cpuRescue;
    // The weights as they were before the model moved to this run's device (the studio moves it
    // between runs): what a failure before the trainer's first host copy goes back to. Null: a
    // copy taken at the failure, when the device can still be read.
    std::shared_ptr<const HostCopy> startWeights;
    // Keep the run's best weights here (BestWeights.h; the studio's Revert to best weights),
    // copied on the host when an evaluation beats them; null: none kept. A cross-validated run
    // clears them: the folds chose its length and its model.
    BestWeights* keepBest = nullptr;
    // What the folds leave to train on every row (CrossValidation.h): with FoldModel::Averaged
    // the folds' networks averaged and blended become the model, and no run follows them.
    FoldModel foldModel = FoldModel::Refit;
};

// Called on the thread that runs the model.
struct RunHooks {
    // Each progress report of the run's trainer (RunSetup::policy says how often); the trainer,
    // to cancel it or read its rates.
    std::function<void(const Progress& p, Trainer& trainer)> progress;
    // After the data is on the run's device, before the folds and the trainer (not when the
    // upload failed).
    std::function<void()> uploaded;
    // At each evaluation, before the task's metric: the network as trained so far (a frame of the
    // CLI's --snapshots, a side metric).
    std::function<void(Network& net)> evaluation;
    // The run's trainer before it trains, and null after it (Ctrl+C, Stop).
    std::function<void(Trainer* trainer)> active;
    FoldHooks folds;
};

struct RunOutcome {
    TrainResult result; // the run's; the folds' time and Cancelled when they were stopped
    Settled settled;    // what the settle or the folds decided (nothing when the run failed)
    std::optional<CrossValidation> cv; // the folds, when they ran
    // Why no run happened or it broke off ("" when it ran to one of its ends); the model's
    // weights are those of the last step done.
    std::string failure;
    bool backendFailure = false; // the backend (the device) failed: the CPU may take over
    std::string deviceError;     // the backend's own words when it failed
    // A failed device handed the model to the CPU (RunSetup::cpuRescue) with its last good
    // weights: the training state is back at their step.
    bool movedToCpu = false;
    std::string rescueFailure; // why that move failed ("" when it did not)
    // The kept best weights as the run left them (RunSetup::keepBest), when it ran to an end.
    BestWeightsInfo best;
    bool foldsStopped = false; // stopped during the folds: the model is its untrained start

    bool ran() const { return failure.empty() && !foldsStopped; }
};

// Trains model (built or opened, with its task) under model.config; see the top of this file.
// The configuration keeps the class weights, the refit's budget after folds and a lowered rate.
// A failed device gives the model to the CPU (RunSetup::cpuRescue) before it returns.
RunOutcome runModel(Model& model, const RunSetup& setup, const RunHooks& hooks = {});

} // namespace il::tasks
