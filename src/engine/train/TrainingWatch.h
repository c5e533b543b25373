// The trainer's watch over the loss, beside the guard (which catches NaN and Inf): a run whose
// loss stays at the loss of predicting the mean — the network has learnt only the average of
// the targets and goes no further, as SIREN does on a hard-edged picture at too high a learning
// rate — or whose loss climbs far above its best and stays there (divergence). Either is said
// in one line; where the task allows it (WatchSettings::recoveries), the run recovers: it goes
// back to the last good weights, lowers the learning rate, clears the optimizer state and
// carries on.
//
// What it watches: the mean training loss over windows of `window` steps, closed at step
// numbers that are multiples of `window` (the trainer reads the loss back there), so the same
// run sees the same windows on every backend and at every speed. Besides those losses it reads
// the training targets once, for the baseline; when recoveries are allowed it also copies the
// weights at good windows aside. Until it fires it changes nothing: a run it does not fire on
// trains to the same bits as one without it.
//
// The baseline is the loss of the best constant prediction, computed once per run from the
// training targets (baselineLoss): the targets' variance for MSE. A stall is the loss staying
// within stallBand of the baseline (every window) for stallSteps steps after a grace period; a
// divergence is the loss staying above divergenceRatio x its best window, and above
// sqrt(best x baseline) (half way back to the baseline on a log scale), for divergenceSteps
// steps after the grace period. The watch's state is per call of Trainer::run (a resumed run
// starts watching afresh).
#pragma once

#include "Backend.h"
#include "Optimizer.h"

#include <cmath>
#include <span>
#include <string>

namespace il {

class Network;

struct WatchSettings {
    bool enabled = true;
    // How many times a run may recover from a stall or a divergence; 0: it only says so. The
    // task chooses (Task::watchSettings): recovering changes the weights a run ends with.
    int recoveries = 0;
    float lrFactor = 0.25f; // each recovery multiplies the learning rates by this

    int64_t window = 25;           // steps per observed mean loss
    int64_t grace = 100;           // steps after the start (or a recovery) before a stall counts
    int64_t stallSteps = 200;      // a stall lasts this many steps...
    double stallBand = 0.05;       // ... with every window within this fraction of the baseline
    double divergenceRatio = 4;    // a divergence: every window above ratio x the best window...
    int64_t divergenceSteps = 100; // ... for this many steps
};

// The loss of predicting the same best constant for every row of targets y: the mean of each
// column for MSE (the loss is the targets' variance, averaged over the columns) and for binary
// cross-entropy (the entropy of each column's mean), the class frequencies for cross-entropy
// (their entropy, with labelSmoothing mixed in). classes: the network's outputs (cross-entropy
// targets are class ids). NaN for MAE (its best constant, the median, would need every target
// at once). Reads y in chunks from backend memory.
// classWeights (host; empty: unweighted) as TrainerConfig::classWeights: the loss is then the
// class-weighted one, whose best constant is the weighted mean (balanced weights: 1/k for
// each class, 1/2 for BCE), and its loss (sum of weights / rows) times that mean's entropy.
double baselineLoss(Backend& backend, LossKind loss, float labelSmoothing, ConstTensor y,
                    int64_t classes, std::span<const float> classWeights = {});

// One run's watch. Trainer.cpp feeds it the loss sums it reads and asks it at window ends.
class TrainingWatch {
public:
    enum class Verdict { None, Stalled, Diverging };

    // baseline: baselineLoss of the training targets (NaN: no stall watch). When the settings
    // allow recoveries, keeps a copy of the network's weights at startStep as the first good
    // ones (one buffer the size of the parameters).
    TrainingWatch(const WatchSettings& settings, Network& network, Optimizer& optimizer,
                  LossKind loss, double baseline, int64_t startStep);

    bool enabled() const { return m_settings.enabled; }
    // Whether the trainer must read the loss back after this step (a window ends).
    bool windowEndsAt(int64_t step) const { return enabled() && step % m_settings.window == 0; }
    // The loss summed over `steps` steps, as read back.
    void add(double lossSum, int64_t steps);
    // Closes the window ending at step. When it is the best so far and clearly below the
    // baseline, its weights become the last good ones. Returns what the windows show.
    Verdict closeWindow(int64_t step);

    // After a verdict: the one line that says what happened and, when a recovery is left,
    // recovers (good weights back, the learning rates of schedule scaled, optimizer state
    // cleared, a new grace period). Without one it says so (or, when the settings allow none,
    // suggests a lower rate), once per kind.
    std::string respond(Verdict verdict, int64_t step, ScheduleConfig& schedule);
    // For the run's final message: what the watch saw and did ("" if it never fired).
    std::string summary(const ScheduleConfig& schedule) const;

    int recoveriesDone() const { return m_recoveriesDone; }
    double baseline() const { return m_baseline; }

private:
    std::string describe(Verdict verdict, int64_t step) const;
    std::string recover(int64_t step, ScheduleConfig& schedule);

    const WatchSettings m_settings;
    Network& m_net;
    Optimizer& m_opt;
    const LossKind m_loss;
    const double m_baseline;

    // The window being filled.
    double m_sum = 0;
    int64_t m_steps = 0;

    int64_t m_armedAt;                                          // the start, or the last recovery
    double m_best = INFINITY;                                   // best window mean since m_armedAt
    int64_t m_stalledSince = -1, m_divergingSince = -1;         // first step of the current stretch
    bool m_reportedStall = false, m_reportedDivergence = false; // when no recovery is left
    int64_t m_firstVerdictStep = -1, m_firstVerdictSince = -1;  // when it fired; its stretch
    Verdict m_firstVerdict = Verdict::None;

    Buffer m_good; // the last good weights (recoveries only)
    int64_t m_goodStep;
    int m_recoveriesDone = 0;
};

} // namespace il
