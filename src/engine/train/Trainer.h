// The training loop. Plain C++: the CLI calls it on its own thread, the GUI on a worker QThread.
//
// One step, all in backend memory:   gather batch -> forward -> fused loss + dL/dy -> backward
//   -> per-tensor squared gradient norms -> guard (non-finite check + clip factor) -> optimizer.
// Nothing is allocated and nothing is copied to the host inside a step. Every readEvery steps
// (RunPolicy) the trainer downloads one small block: the summed loss and the guard slots.
// TrainingStep.h holds the step; Trainer.cpp the loop around it (budgets, evaluation and early
// stopping, progress, diagnosis of a non-finite step, last-good host copies on a device, and the
// watch for a stall or divergence of TrainingWatch.h).
//
// Determinism: batch order for epoch e is the permutation Backend::shuffledOrder makes from the
// key Rng::derive(seed, "shuffle", e) draws (the same on every backend, made on the backend), so
// a run saved at step s and resumed gives the same batches as a run that never stopped.
#pragma once

#include "Network.h"
#include "Optimizer.h"
#include "OverfitWatch.h"
#include "TrainingHistory.h"
#include "TrainingWatch.h"
#include "ValueRange.h"

#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace il {

// How the loss weighs the classes of a classification (TrainerConfig::classWeighting).
enum class ClassWeighting {
    None,     // every row weighs 1
    Balanced, // inverse class frequency of the training rows: w_c = n / (k n_c), as scikit-learn
};
std::string classWeightingName(ClassWeighting w); // "none", "balanced"
bool parseClassWeighting(const std::string& s, ClassWeighting& w);
// scikit-learn's "balanced" weights for these class counts (rows per class of the training
// data): w_c = n / (k n_c) with n the rows and k the classes that have rows, so the weights
// average 1 over the rows and each class weighs n / k in total. A class without rows gets 1
// (it has nothing to weigh in training; in validation it counts as an unweighted row would).
std::vector<float> balancedClassWeights(const std::vector<int64_t>& counts);

struct TrainerConfig {
    // Budgets: training stops at the first one reached. epochs/steps are totals for the run
    // (including steps done before a resume); maxSeconds counts this call only. 0 = unused.
    int64_t epochs = 0;
    int64_t steps = 0;
    double maxSeconds = 0;
    int64_t batchSize = 0; // 0 or >= rows: full batch
    bool shuffle = true;
    uint64_t seed = 1;

    LossKind loss = LossKind::MSE;
    float labelSmoothing = 0.f; // CrossEntropy only
    // Classification only: how the loss weighs each class (saved with the model). The weights
    // themselves are the data's: the caller fills classWeights from its training rows before
    // each run (tasks::Task::classWeights), one per class for CrossEntropy, two (targets 0 and
    // 1) for BinaryCrossEntropy; empty: unweighted. Not saved: a resumed run computes them
    // again. The training and the validation loss are both weighted (Backend::
    // lossForwardBackward: the mean divides by the rows, not by the sum of the weights).
    ClassWeighting classWeighting = ClassWeighting::None;
    std::vector<float> classWeights;
    OptimizerConfig optimizer;
    ScheduleConfig schedule;
    float clipNorm = 0.f; // clip gradients to this global L2 norm; 0 = off

    int patience = 0;        // early stopping: evaluations without improvement; 0 = off
    float minDelta = 0.f;    // what counts as an improvement of the validation loss
    bool restoreBest = true; // on early stopping, go back to the best weights
    double targetLoss = -std::numeric_limits<double>::infinity(); // stop when reached
    int64_t evalEvery = 0; // validate every N steps; 0 = once per epoch
    // Not saved: end the run after this many steps in total while the schedule still runs over
    // the whole budget (epochs/steps), so the run follows, step by step, the learning rates of
    // a longer one: a network trained again on every row after cross-validation stops where its
    // folds did best (tasks::refitConfig). 0 = unused.
    int64_t stopAfter = 0;
};

// The values each number of a TrainerConfig may take (ValueRange.h). The CLI's options and the
// model files (io::trainerConfigFromJson) both check these, so a resumed run trains with nothing
// an option would refuse. The optimizers' settings have theirs in their registry
// (OptimizerSetting::min, max). A budget of 0 means unused; an option for one, when given, asks
// for 1 or more (--max-seconds: 0.001).
namespace configRange {
inline constexpr ValueRange epochs{0, 1e8, "a number of epochs"};
inline constexpr ValueRange steps{0, kMaxExactCount, "a number of steps"};
inline constexpr ValueRange maxSeconds{0, 1e9, "a time in seconds"};
inline constexpr ValueRange batchSize{0, 2147483647, "a batch size (0: every row)"};
inline constexpr ValueRange labelSmoothing{0, 0.5, "a label smoothing"};
inline constexpr ValueRange lrMax{1e-12, 1e6, "a learning rate"};
inline constexpr ValueRange lrMin{0, 1e6, "a learning rate"};
inline constexpr ValueRange stepEvery{1, kMaxExactCount, "a number of steps"};
inline constexpr ValueRange gamma{0, 1, "a decay factor"};
inline constexpr ValueRange warmupSteps{0, kMaxExactCount, "a number of steps"};
inline constexpr ValueRange clipNorm{0, 1e12, "a gradient norm (0: off)"};
inline constexpr ValueRange patience{0, 1e6, "a number of evaluations (0: off)"};
inline constexpr ValueRange minDelta{0, 1e300, "a loss difference"};
inline constexpr ValueRange targetLoss{-std::numeric_limits<double>::infinity(), 1e300, "a loss"};
inline constexpr ValueRange evalEvery{0, kMaxExactCount, "a number of steps (0: every epoch)"};
} // namespace configRange

// How a run is carried out, as opposed to what it learns (TrainerConfig): model files do not
// store it. Each caller (CLI, studio, bench, tests) sets its own. None of it changes the weights
// a run ends with, except a recovery from a stall or divergence (watch.recoveries, which the
// task chooses: Task::watchSettings).
struct RunPolicy {
    int64_t readEvery = 1;         // read the loss back every K steps (on a device: K >= 25)
    double progressInterval = 0.1; // seconds between progress callbacks (epoch ends always)
    // Record the ops of a step once and replay them (CUDA graphs) on backends that can; saves
    // the launch overhead that dominates small batches on a GPU. No effect on the CPU.
    bool recordSteps = true;
    // On a device backend, keep a host copy of the weights at most this often (seconds), so a
    // device failure loses at most this much training.
    double hostCopySeconds = 10;
    // Watch the loss for a stall at the loss of predicting the mean, or a divergence
    // (TrainingWatch.h); on by default, reporting only.
    WatchSettings watch;
    // Watch the validation loss for a sustained rise while the training loss falls
    // (OverfitWatch.h): one notice when it starts, and again only after a recovery. On by
    // default; reporting only (early stopping is what ends such a run).
    OverfitSettings overfit;
    // Between evaluations, also add a history row at the first read of the loss at least this
    // many steps after the previous row: the mean training loss since that row and the learning
    // rate, with no validation loss or metric (NaN). 0: rows at evaluations only. The studio
    // uses 1, so a saved model's loss curve reads back as its chart drew it; the history's
    // bound (TrainingHistory) keeps the rows and the file small however long the run.
    int64_t historyEvery = 0;
};

// What a model must remember to continue training exactly where it stopped.
struct TrainingState {
    int64_t step = 0;  // optimizer steps done
    int64_t epoch = 0; // completed epochs
    int64_t stepInEpoch = 0;
    int64_t plannedSteps = 0; // T of the schedule
    double seconds = 0;       // total training time over all sessions
    double bestValLoss = INFINITY;
    int64_t evalsWithoutImprovement = 0;
    // Losses of the steps since the last history point, so a run resumed mid-epoch records
    // the same epoch mean as one that never stopped.
    double pendingLossSum = 0;
    int64_t pendingSteps = 0;
    // One row per evaluation (and, with RunPolicy::historyEvery, loss-only rows between them),
    // bounded: a long run keeps buckets of them (TrainingHistory.h).
    TrainingHistory history;
};

struct Progress {
    int64_t step = 0;
    int64_t plannedSteps = 0; // 0 if only a time budget
    double epoch = 0;
    double trainLoss = NAN; // mean over the steps since the previous report
    double valLoss = NAN;
    double metric = NAN;
    double lr = 0;
    double stepsPerSecond = 0;
    double elapsed = 0;
    double eta = NAN;       // seconds
    bool evaluated = false; // valLoss is fresh
    // One line for the user about something the run noticed or did since the previous report
    // (a stall, a divergence, a recovery: TrainingWatch.h; overfitting: OverfitWatch.h); usually
    // empty. Also in TrainResult::notices.
    std::string notice;
};

enum class StopReason {
    Finished,
    TimeBudget,
    EarlyStopping,
    TargetReached,
    Cancelled,
    NonFinite,
    DeviceFailure // the backend failed (GPU out of memory, kernel fault); see TrainResult::lastGood
};

struct HostCopy; // HostCopy.h

struct TrainResult {
    StopReason reason = StopReason::Finished;
    std::string message; // one line for the user
    int64_t steps = 0;   // steps done in this call
    double seconds = 0;
    double trainLoss = NAN;
    double valLoss = NAN;
    // EarlyStopping: the step whose weights it restored (the best validation loss of the run);
    // -1 when the weights are the last step's.
    int64_t restoredStep = -1;
    // DeviceFailure: the last good weights, optimizer state and counters, on the host (the
    // device's memory may be unreadable). The TrainingState has already been rewound to them;
    // moveModel() (HostCopy.h) rebuilds the model on the CPU to save it or train on.
    std::shared_ptr<const HostCopy> lastGood;
    // Every Progress::notice of the run, in order (a caller without a progress callback reads
    // them here). The run's message ends with a summary of them.
    std::vector<std::string> notices;
    // Recoveries from a stall or divergence, and the schedule the run ended with: the learning
    // rates are lower after a recovery; a caller keeps it in its configuration
    // (keepLoweredRates) so the model is saved, and resumes, with the rate that worked.
    int recoveries = 0;
    ScheduleConfig schedule;
    // The latest time the validation loss was seen rising while the training loss fell, in this
    // run or in the history it continues (OverfitWatch replays it); !valid() when never.
    OverfitSighting overfitting;
};

// config with the schedule a recovered run ended on, and each parameter group's own learning
// rate lowered by the same factor (within the run the groups followed the run's rate).
void keepLoweredRates(TrainerConfig& config, const ScheduleConfig& lowered);

// The data of a run, in backend memory. Inputs and targets have the same row count.
struct TrainingData {
    ConstTensor trainX, trainY;
    ConstTensor valX, valY; // may be empty
};

class Trainer {
public:
    using ProgressCallback = std::function<void(const Progress&)>;
    // Computes the task metric (accuracy, PSNR...) on the validation data; higher is better
    // unless metricLowerIsBetter. Called at each evaluation.
    using MetricHook = std::function<double(Network&)>;

    Trainer(Network& network, Optimizer& optimizer, const TrainerConfig& config,
            TrainingState& state, const RunPolicy& policy = {});
    ~Trainer();

    void setProgressCallback(ProgressCallback cb) { m_progress = std::move(cb); }
    void setMetricHook(MetricHook hook, double target = NAN, bool lowerIsBetter = false);

    // Trains until a budget, early stopping, the target, cancel or a non-finite value.
    // Throws EngineError on bad data shapes; never leaves non-finite weights behind.
    TrainResult run(const TrainingData& data);

    // Thread-safe: the run stops after the current step. (To pause, a caller blocks in its
    // progress callback.)
    void requestCancel() { m_cancel = true; }

    // Mean loss of the network over (x, y), in chunks of at most 4096 rows (fewer for a wide
    // network: inferenceChunkRows, Limits.h), without label smoothing
    // and without touching gradients. scratch: one float of backend memory (allocated if empty).
    // classWeights: backend memory, as Backend::lossForward takes them (empty: unweighted).
    static double evaluateLoss(Network& net, LossKind loss, ConstTensor x, ConstTensor y,
                               Buffer& scratch, ConstTensor classWeights = {});

    static int64_t stepsPerEpoch(int64_t rows, int64_t batchSize);

private:
    friend class TrainingRun; // one call of run() (TrainingRun.h)

    Network& m_net;
    Optimizer& m_opt;
    TrainerConfig m_config;
    RunPolicy m_policy;
    TrainingState& m_state;
    ProgressCallback m_progress;
    MetricHook m_metric;
    double m_metricTarget = NAN;
    bool m_metricLowerIsBetter = false;
    std::atomic<bool> m_cancel{false};
};

std::string stopReasonName(StopReason r);

} // namespace il
