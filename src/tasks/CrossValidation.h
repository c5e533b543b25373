// k-fold cross-validation of a run: for a small table, a decision taken on one validation split
// of a fifth of its rows is noise either way (64 rows of a 321-row table could not tell a
// network 25% better from its linear start). With folds, every training row is held out once:
// a fresh network trains on the other rows of each fold (the task's warm start and class weights
// from that fold's training rows, early stopping on its held-out rows), and
//   - the decision between the network and the task's simpler model (a table's linear or logistic
//     baseline; Task::settle) is the paired comparison of their losses on every row, so its
//     standard error shrinks by the square root of the folds;
//   - the training length is the step where the folds' mean validation loss is lowest (over the
//     steps every fold evaluated; the median of the steps each fold kept when they share none);
//   - the report gives the folds' mean losses and metric with their standard errors.
// The network is then trained again on every row (refitConfig: the folds' budget and schedule
// stopped at the chosen length, no validation rows, so no early stopping), and, when the simpler
// model won, goes back to it, fitted on every row (endRefit: the task's warm start).
//
// The CLI and the studio both run it before their main run (Task::folds() > 0, a fresh model).
#pragma once

#include "Task.h"

#include <QString>

#include <atomic>
#include <cmath>
#include <functional>
#include <vector>

namespace il::tasks {

// The most folds a cross-validation takes (--folds, the studio's Cross-validation row).
constexpr int kMaxFolds = 20;

// One fold's run.
struct FoldRun {
    int64_t trainRows = 0, heldOutRows = 0;
    int64_t steps = 0;                           // steps trained
    int64_t keptStep = 0;                        // the step whose weights it ended with
    double networkLoss = NAN, simplerLoss = NAN; // mean over its held-out rows
    double metric = NAN; // the task's metric on its held-out rows (accuracy, RMSE...)
    StopReason reason = StopReason::Finished;
    TrainingHistory history; // its losses (and metric) at each evaluation
};

// What a cross-validation leaves to train on every row.
enum class FoldModel {
    // The network is trained again on every row for the folds' length (refitConfig), or goes
    // back to the simpler model when that won (endRefit). The default.
    Refit,
    // The folds' own networks, averaged as one (NetworkAverage.h) and blended with the simpler
    // model fitted on every row: share x their mean + (1 - share) x the simpler model, the share
    // that fits the out-of-fold predictions best (least squares, in [0, 1]). Nothing is trained
    // again. Tasks whose loss is the squared error (regression tables; Task::rowErrors) and
    // stacks of dense layers and element-wise activations only.
    Averaged,
};

struct CrossValidation {
    int folds = 0;
    std::vector<FoldRun> runs;
    int64_t rows = 0; // every training row, each held out by one fold
    // Mean loss per row over every row (each from the fold that held it out), with standard
    // errors; the simpler model's when the task has one (simplerName).
    double networkLoss = NAN, networkError = NAN;
    double simplerLoss = NAN, simplerError = NAN;
    QString simplerName;
    // network - simpler, row by row: its mean and standard error.
    double difference = NAN, differenceError = NAN;
    double margin = NAN; // standard errors the network had to win by
    // The folds' metric: mean and standard error over the folds (NaN without a metric).
    double metric = NAN, metricError = NAN;
    bool judged = false;     // the network could go back to the simpler model (Task::canSettle)
    bool keepNetwork = true; // false: the simpler model won
    int64_t refitSteps = 0;  // the length the network is trained for on every row
    double seconds = 0;      // the folds' training time
    bool stopped = false;    // cancelled (or a fold failed: failure says why)
    QString failure;
    QString note; // one line for people: what was compared and what was kept, and why
    // FoldModel::Averaged: the folds' networks as one network (its layer list and its tensors,
    // Network::namedTensors order, on the host), the networks' share of the blend with the
    // simpler model, and the blend's out-of-fold loss (mean over the rows, standard error).
    bool averaged = false;
    std::string averagedSpec;
    HostTensors averagedWeights;
    double share = NAN;
    double blendLoss = NAN, blendError = NAN;

    bool complete() const { return folds > 0 && !stopped && failure.isEmpty(); }
};

// Called on the thread that runs the folds.
struct FoldHooks {
    // Before fold `fold` trains, with its trainer (the CLI's Ctrl+C and the studio's Stop
    // cancel it: Trainer::requestCancel); after it, with null.
    std::function<void(int fold, Trainer* trainer)> active;
    // Each progress report of fold `fold`'s trainer.
    std::function<void(int fold, const Progress& p)> progress;
    // Fold `fold` finished (its run is cv.runs.back()).
    std::function<void(int fold, const CrossValidation& cv)> foldDone;
    // Checked between folds: true stops before the next.
    std::function<bool()> stopRequested;
};

// Runs task.folds() folds of a network of this spec (inputs and outputs from the task) on
// backend, each initialised from config.seed, with config (its class weights recomputed per
// fold) and policy. A fold that fails (non-finite, device failure, an exception) ends the
// cross-validation with failure set; a cancelled fold with stopped set.
// With FoldModel::Averaged each fold's network is kept, and cv holds them averaged (a task or
// stack that cannot be averaged is a failure that says why).
CrossValidation crossValidate(Task& task, Backend& backend, const std::string& spec,
                              const TrainerConfig& config, const RunPolicy& policy,
                              const FoldHooks& hooks = {}, FoldModel model = FoldModel::Refit);

// The share s in [0, 1] of a blend s x a + (1 - s) x b with the least squared error, from the
// errors (prediction less target) of a and of b on the same rows; 1 when they are the same.
double blendShare(const std::vector<double>& a, const std::vector<double>& b);

// The network the folds' averaged networks make (cv.averaged): built on backend for the task's
// widths, with cv's tensors. Throws EngineError when they do not fit.
std::unique_ptr<Network> averagedNetwork(const CrossValidation& cv, const Task& task,
                                         Backend& backend);

// The configuration of the run on every row after a complete cross-validation: the folds'
// budget and schedule, stopped after cv.refitSteps steps (TrainerConfig::stopAfter: the learning
// rates the folds had up to there), no early stopping. The run trains whatever the folds chose, so
// the model is trained, saved and continued like any other; when the simpler model won, endRefit
// then sets the network back to it (as Task::settle after a run on a validation split).
TrainerConfig refitConfig(const TrainerConfig& config, const CrossValidation& cv);

// After the run on every row (one that ended on its own): the network goes back to the simpler
// model when the folds chose it (settled.replaced: the task's warm start, fitted on every row),
// and result's validation loss becomes the folds' loss of the model kept.
void endRefit(Task& task, Network& net, const Settled& settled, TrainResult& result);

// What the cross-validation decided, as the settle of the refit run says it (RunVerdict.h,
// the CLI's report): replaced when the simpler model won; the losses are the folds'.
Settled settledByCrossValidation(const CrossValidation& cv);

} // namespace il::tasks
