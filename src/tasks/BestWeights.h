// The best weights of a model's training so far, kept on the host so that a run that diverged or
// overfitted can go back to them (the studio's Train > Revert to best weights). The run driver
// keeps them when asked (RunSetup::keepBest).
//
// "Best" is the lowest validation loss at an evaluation, or, for data without validation, the
// lowest mean training loss between two evaluations (one per epoch, or every evalEvery steps).
// A host copy costs a download of every weight and the optimizer state (a memcpy on the CPU), so
// the keeper copies only when an evaluation beats the kept copy, and then at most every
// max(kMinCopyGap, kCopyGapFactor x the last copy's cost) seconds: at most about 2% of the
// training time goes to copies. A better evaluation within that gap is not kept; the kept copy
// (its step and loss) is what a revert returns to.
#pragma once

#include "Trainer.h"

#include <QMetaType>

#include <cmath>
#include <cstdint>
#include <memory>

namespace il {
struct HostCopy;
class Network;
class Optimizer;
} // namespace il

namespace il::tasks {

// What is known about the kept copy (RunOutcome::best; the studio's Session::best()).
struct BestWeightsInfo {
    int64_t step = -1;        // the kept copy's step; -1: none
    double loss = NAN;        // its validation (or training) loss
    bool validation = false;  // loss is a validation loss
    double currentLoss = NAN; // the last evaluation's loss of the same kind
    int64_t currentStep = -1; // the step of that evaluation
    bool diverged = false;    // the run ended on a non-finite loss
    int copies = 0;           // host copies taken in the last run
    double copySeconds = 0;   // their total time
    bool kept() const { return step >= 0; }
    // The current weights are worse than the kept ones: a divergence, or a loss more than
    // kWorseBy above the kept one (overfitting, a too-high learning rate).
    bool worseThanKept() const;
    static constexpr double kWorseBy = 0.02; // relative
};

// The kept copy, owned by the model (the studio's ModelState::best): a new model starts without
// one.
struct BestWeights {
    std::shared_ptr<const HostCopy> copy;
    BestWeightsInfo info;
};

// Watches one run's progress and keeps the copy (on the worker thread, between two steps).
class BestKeeper {
public:
    static constexpr double kMinCopyGap = 0.02;  // seconds
    static constexpr double kCopyGapFactor = 50; // gap = 50 x copy cost: copies take <= 2%

    BestKeeper(BestWeights& best, bool hasValidation);
    // Each progress report; at an evaluation, copies when due. elapsed: seconds of the run.
    void onProgress(const Progress& p, const Network& network, const Optimizer& optimizer,
                    const TrainingState& state, double elapsed);
    // The info to report at the end of the run. diverged: it ended on a non-finite loss.
    // restoredLoss: the loss of weights the trainer itself went back to (early stopping restores
    // its best), NaN otherwise. A best evaluation at the last step that the gap skipped is
    // copied now (the weights are still those it evaluated).
    BestWeightsInfo finish(bool diverged, double restoredLoss, const Network& network,
                           const Optimizer& optimizer, const TrainingState& state);

private:
    void copy(const Network& network, const Optimizer& optimizer, const TrainingState& state,
              double elapsed);

    BestWeights& m_best;
    const bool m_validation;
    int64_t m_lastStep;
    double m_trainSum = 0;
    int64_t m_trainSteps = 0;
    double m_lastCopyAt = -1e9, m_lastCopyCost = 0;
};

} // namespace il::tasks

Q_DECLARE_METATYPE(il::tasks::BestWeightsInfo)
