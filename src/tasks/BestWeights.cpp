#include "BestWeights.h"

#include "HostCopy.h"

#include <algorithm>
#include <chrono>

namespace il::tasks {

bool BestWeightsInfo::worseThanKept() const
{
    if (!kept() || currentStep <= step) return false;
    if (diverged || !std::isfinite(currentLoss)) return true;
    return currentLoss > loss + kWorseBy * std::abs(loss);
}

BestKeeper::BestKeeper(BestWeights& best, bool hasValidation)
    : m_best(best), m_validation(hasValidation), m_lastStep(-1)
{
    // A copy of another kind (the validation split changed) cannot be compared: start over.
    if (m_best.info.kept() && m_best.info.validation != hasValidation) m_best = {};
    m_best.info.copies = 0;
    m_best.info.copySeconds = 0;
    m_best.info.diverged = false;
}

void BestKeeper::onProgress(const Progress& p, const Network& network, const Optimizer& optimizer,
                            const TrainingState& state, double elapsed)
{
    // p.trainLoss is the mean over the steps since the previous report.
    const int64_t steps = m_lastStep < 0 ? 1 : p.step - m_lastStep;
    m_lastStep = p.step;
    if (std::isfinite(p.trainLoss) && steps > 0) {
        m_trainSum += p.trainLoss * static_cast<double>(steps);
        m_trainSteps += steps;
    }
    if (!p.evaluated) return;
    const double loss = m_validation       ? p.valLoss
                        : m_trainSteps > 0 ? m_trainSum / static_cast<double>(m_trainSteps)
                                           : NAN;
    m_trainSum = 0;
    m_trainSteps = 0;
    if (!std::isfinite(loss)) return;
    BestWeightsInfo& info = m_best.info;
    info.validation = m_validation;
    info.currentLoss = loss;
    info.currentStep = p.step;
    if (info.kept() && !(loss < info.loss)) return;
    if (elapsed - m_lastCopyAt < std::max(kMinCopyGap, kCopyGapFactor * m_lastCopyCost)) return;
    copy(network, optimizer, state, elapsed);
}

void BestKeeper::copy(const Network& network, const Optimizer& optimizer,
                      const TrainingState& state, double elapsed)
{
    const auto start = std::chrono::steady_clock::now();
    m_best.copy = std::make_shared<HostCopy>(takeHostCopy(network, optimizer, state));
    m_lastCopyCost =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m_lastCopyAt = elapsed;
    BestWeightsInfo& info = m_best.info;
    info.step = state.step;
    info.loss = info.currentLoss;
    ++info.copies;
    info.copySeconds += m_lastCopyCost;
}

BestWeightsInfo BestKeeper::finish(bool diverged, double restoredLoss, const Network& network,
                                   const Optimizer& optimizer, const TrainingState& state)
{
    BestWeightsInfo& info = m_best.info;
    info.diverged = diverged;
    if (diverged) {
        info.currentStep = state.step;
        info.currentLoss = NAN;
    } else if (std::isfinite(restoredLoss)) {
        info.currentLoss = restoredLoss; // the trainer went back to its best weights
    } else if (info.currentStep == state.step && info.currentStep > info.step &&
               std::isfinite(info.currentLoss) && (!info.kept() || info.currentLoss < info.loss)) {
        copy(network, optimizer, state, m_lastCopyAt);
    }
    return info;
}

} // namespace il::tasks
