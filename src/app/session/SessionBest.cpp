// Session: the best weights a model's training has seen, and the way back to them.
#include "Session.h"

#include "HostCopy.h"
#include "NumberFormat.h"

#include <QLocale>

#include <stdexcept>

namespace il::app {

void Session::setBest(const BestWeightsInfo& best)
{
    m_best = best;
    emit bestChanged();
}

bool Session::canRevertToBest() const
{
    return m_runState == RunState::Idle && m_best.kept() && m_best.step < m_trainedSteps;
}

void Session::revertToBest()
{
    if (!canRevertToBest()) return;
    // The weights, the optimizer state and the training counters of the kept step. An optimizer
    // of other settings (changed since) has state of other names or sizes: it starts afresh.
    const auto work = [](ModelState& m) -> std::pair<int64_t, QImage> {
        if (!m.network || !m.best.copy) return {-1, {}};
        const HostCopy& kept = *m.best.copy;
        try {
            if (!m.optimizer) throw std::runtime_error("no optimizer");
            restoreHostCopy(kept, *m.network, *m.optimizer);
        } catch (const std::exception&) {
            m.optimizer = std::make_unique<Optimizer>(*m.backend, m.config.optimizer,
                                                      m.network->parameterRanges());
            HostCopy weights;
            weights.tensors = kept.tensors;
            restoreHostCopy(weights, *m.network, *m.optimizer);
        }
        m.state = kept.state;
        m.best.info.currentStep = kept.state.step;
        m.best.info.currentLoss = m.best.info.loss;
        m.best.info.diverged = false;
        return {kept.state.step, m.picture(0)};
    };
    const int generation = m_generation;
    m_worker->postAndReply(
        this, work,
        [this, generation](const std::pair<int64_t, QImage>& result) {
            const auto& [step, image] = result;
            if (step < 0 || generation != m_generation) return;
            BestWeightsInfo best = m_best;
            onRewound(step); // cuts the curve and the timeline frames after it (historyReset)
            if (!image.isNull()) onPreview(step, image);
            best.currentStep = step;
            best.currentLoss = best.loss;
            best.diverged = false;
            setBest(best);
            setModified(true);
            const QLocale l;
            emit message(QString("Reverted to the best weights, from step %1 (%2 loss %3). "
                                 "Continue trains on from there.")
                             .arg(l.toString(static_cast<qlonglong>(step)),
                                  best.validation ? "validation" : "training",
                                  fmt::loss(best.loss)));
            evaluate();
        },
        false);
}

} // namespace il::app
