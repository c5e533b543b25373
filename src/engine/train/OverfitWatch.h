// Overfitting made visible: the validation loss rising for a sustained stretch while the
// training loss falls (the network memorises its training rows). Plain C++, fed one evaluation
// at a time: the trainer does it live (Trainer.cpp), the studio replays a run's history to mark
// its loss chart (LossHistory), and the tests feed synthetic curves.
//
// The rule. Each evaluation brings a validation loss and the mean training loss since the
// previous evaluation. The watch averages both over windows of the last `window` evaluations
// (K = 5) and keeps the window with the lowest validation mean: the best. Overfitting is
// noticed when, for `sustained` consecutive evaluations (5):
//   - the current window lies wholly after the best window,
//   - its validation mean is above the best window's by more than `margin` (5 %) of it, and by
//     more than `noiseFactor` (4.5) times the noise of one evaluation, and
//   - its training mean is below the best window's (the training loss falls: when both rise,
//     the run diverges, TrainingWatch's case).
// The noise is measured on the validation losses from the best window on (the steep descent
// before it would read as noise; at most the last `noiseEvaluations`, 100), from their
// second differences v[i] - 2 v[i-1] + v[i-2] (a smooth curve leaves almost nothing there,
// however it bends): their robust deviation (1.4826 x the median absolute value), read as the
// noise of a lag-1 correlated series whose correlation comes from theirs, widened by
// sqrt((1 + r) / (1 - r)) for correlation r (neighbours that move together swing a window
// further). The lowest of many noisy windows lies well below their level, hence the factor.
// Measured on synthetic curves (TestOverfitWatch): a flat validation loss with 10 % or 20 %
// independent noise over 1,000 evaluations is noticed in none of 100 runs; one that wanders
// (lag-1 correlation 0.5, 500 evaluations) in about 9 of 100; a rise of 1.3 % of the best an
// evaluation under 5 % noise is noticed about 35 evaluations after it starts. Nothing is noticed
// before `minEvaluations` (20) evaluations. Once noticed, the watch is quiet until the
// validation loss recovers (a window within the margin of the best, or a new best), then it
// can notice again.
//
// Early stopping. Its patience is itself a sustained stretch: when early stopping is about to
// end a run, stretchAtStop() applies the same tests (without the hold, and with the noise of a
// mean over the stretch rather than over a window) to the evaluations since the best window,
// so the notice comes before the run's last message.
//
// The line names the step of the lowest single validation loss in the best window: the step
// the rise started from, and the weights early stopping restores.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace il {

class TrainingHistory;

struct OverfitSettings {
    bool enabled = true;
    int window = 5;             // K: evaluations averaged into a window
    int sustained = 5;          // evaluations the rise must hold
    double margin = 0.05;       // the rise above the best window, as a fraction of it...
    double noiseFactor = 4.5;   // ... and in units of the noise of one evaluation
    int noiseEvaluations = 100; // the last evaluations the noise is measured on
    int minEvaluations = 20;    // none noticed before this many evaluations
};

// One time the watch noticed overfitting. valid(): it did.
struct OverfitSighting {
    int64_t bestStep = -1;    // the lowest validation loss of the best window: "since step N"
    double bestLoss = NAN;    // its validation loss
    int64_t noticedStep = -1; // the evaluation at which it was noticed
    double valLoss = NAN;     // the validation mean then (the window, or the stretch at a stop)
    double trainAtBest = NAN, trainNow = NAN; // the training means of the two stretches
    bool valid() const { return noticedStep >= 0; }
};

class OverfitWatch {
public:
    explicit OverfitWatch(const OverfitSettings& settings = {});

    bool enabled() const { return m_settings.enabled; }
    // One evaluation at step: the validation loss, and the mean training loss since the
    // previous evaluation. Non-finite values are skipped. Returns true when this evaluation
    // notices overfitting (last() then holds it). Allocates nothing.
    bool add(int64_t step, double trainLoss, double valLoss);
    // Early stopping is about to end the run at step: true when the evaluations since the best
    // window show overfitting not yet noticed (last() then holds it).
    bool stretchAtStop(int64_t step);
    // Every evaluation of a saved history in turn (rows without a validation loss fold their
    // training loss into the next evaluation's mean, weighted by the steps they cover).
    // Returns whether any was noticed.
    bool replay(const TrainingHistory& history);
    void reset();

    // The latest sighting (valid() once one was made), and whether the validation loss is still
    // above its best since then (no recovery yet).
    const OverfitSighting& last() const { return m_last; }
    bool overfitting() const { return m_fired; }
    int64_t evaluations() const { return m_count; }

    // "validation loss rising since step 400 (best 0.123, now 0.157) while the training loss
    // falls: the network is memorising the training rows"
    static std::string describe(const OverfitSighting& s);

private:
    double noise(); // of one evaluation, over the last noiseEvaluations
    // valMean, trainMean: means over `averaged` evaluations.
    bool rises(double valMean, double trainMean, int64_t averaged);
    bool notice(int64_t step, double valMean, double trainMean);

    OverfitSettings m_settings; // not const: reset() assigns a fresh watch
    int64_t m_count = 0;        // evaluations added

    // The last K evaluations (a ring) and their sums; the last noiseEvaluations validation
    // losses (a ring) and scratch for their residuals.
    std::vector<double> m_winVal, m_winTrain;
    std::vector<int64_t> m_winStep;
    double m_winValSum = 0, m_winTrainSum = 0;
    std::vector<double> m_recent, m_scratch;

    // The best window: its means, the index of its last evaluation, its lowest evaluation.
    double m_bestMean = INFINITY, m_bestTrain = NAN;
    int64_t m_bestEnd = -1;
    int64_t m_bestStep = -1;
    double m_bestLoss = NAN;
    // The evaluations since the best window (for stretchAtStop).
    double m_sinceValSum = 0, m_sinceTrainSum = 0;
    int64_t m_sinceCount = 0;

    int m_held = 0;       // consecutive evaluations the rise has held
    bool m_fired = false; // noticed; quiet until a recovery
    OverfitSighting m_last;
};

} // namespace il
