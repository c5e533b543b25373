#include "OverfitWatch.h"
#include "NumberText.h"
#include "TrainingHistory.h"

#include <algorithm>
#include <cstdio>

namespace il {

namespace {

// Losses in messages: four significant digits ("0.1234").
std::string number(double v)
{
    return formatGeneral(v, 4);
}

OverfitSettings checked(OverfitSettings s)
{
    s.window = std::clamp(s.window, 1, 1000);
    s.sustained = std::clamp(s.sustained, 1, 1000000);
    s.noiseEvaluations = std::clamp(s.noiseEvaluations, 3, 100000);
    s.minEvaluations = std::max(s.minEvaluations, s.window + 1);
    return s;
}

} // namespace

OverfitWatch::OverfitWatch(const OverfitSettings& settings)
    : m_settings(checked(settings)), m_winVal(static_cast<size_t>(m_settings.window)),
      m_winTrain(m_winVal.size()), m_winStep(m_winVal.size()),
      m_recent(static_cast<size_t>(m_settings.noiseEvaluations)), m_scratch(m_recent.size())
{
}

void OverfitWatch::reset()
{
    *this = OverfitWatch(m_settings);
}

double OverfitWatch::noise()
{
    // The evaluations from the best window on (at most the last noiseEvaluations): the descent
    // before it, steep and curved, would read as noise.
    const auto size = static_cast<int64_t>(m_recent.size());
    const int64_t fromBest = m_count - (m_bestEnd - static_cast<int64_t>(m_winVal.size()) + 1);
    const int64_t m = std::min({m_count, size, fromBest});
    const int64_t first = m_count - m; // the index of the first evaluation used
    auto at = [&](int64_t i) { return m_recent[static_cast<size_t>((first + i) % size)]; };
    // Second differences v[i] - 2 v[i-1] + v[i-2]: a smooth curve, however it bends over the
    // stretch, leaves almost nothing in them (its curvature is small from one evaluation to the
    // next), independent noise of deviation s leaves a deviation of sqrt(6) s.
    size_t n = 0;
    double squares = 0, lagged = 0, previous = 0;
    for (int64_t i = 2; i < m; ++i) {
        const double d = at(i) - 2 * at(i - 1) + at(i - 2);
        m_scratch[n++] = std::fabs(d);
        squares += d * d;
        if (i > 2) lagged += d * previous;
        previous = d;
    }
    if (n < 3) return 0;
    std::nth_element(m_scratch.begin(), m_scratch.begin() + static_cast<long>(n / 2),
                     m_scratch.begin() + static_cast<long>(n));
    const double spread = 1.4826 * m_scratch[n / 2]; // their standard deviation, robustly
    // Read as lag-1 correlated noise (AR(1), coefficient r): the second differences have the
    // deviation s sqrt(2 (1 - r) (3 - r)) and the lag-1 correlation
    // c(r) = (-4 + 7r - 4r^2 + r^3) / (6 - 8r + 2r^2), -2/3 for independent noise and rising
    // with r; r is found from the measured c by bisection.
    const double measured = squares > 0 ? lagged / squares : -2.0 / 3;
    auto c = [](double r) {
        return (-4 + 7 * r - 4 * r * r + r * r * r) / (6 - 8 * r + 2 * r * r);
    };
    double lo = 0, hi = 0.6;
    for (int i = 0; i < 30; ++i)
        (c((lo + hi) / 2) < measured ? lo : hi) = (lo + hi) / 2;
    const double r = lo;
    const double s = spread / std::sqrt(2 * (1 - r) * (3 - r));
    // Correlated neighbours swing a window further than independent ones would.
    return s * std::sqrt((1 + r) / (1 - r));
}

bool OverfitWatch::rises(double valMean, double trainMean, int64_t averaged)
{
    const double rise = valMean - m_bestMean;
    // A mean over more evaluations than a window has less noise in it.
    const double k = static_cast<double>(m_winVal.size());
    const double noiseScale = std::sqrt(k / static_cast<double>(std::max<int64_t>(averaged, 1)));
    return rise > m_settings.margin * m_bestMean &&
           rise > m_settings.noiseFactor * noise() * std::min(1.0, noiseScale) &&
           trainMean < m_bestTrain;
}

bool OverfitWatch::notice(int64_t step, double valMean, double trainMean)
{
    m_fired = true;
    m_last.bestStep = m_bestStep;
    m_last.bestLoss = m_bestLoss;
    m_last.noticedStep = step;
    m_last.valLoss = valMean;
    m_last.trainAtBest = m_bestTrain;
    m_last.trainNow = trainMean;
    return true;
}

bool OverfitWatch::add(int64_t step, double trainLoss, double valLoss)
{
    if (!m_settings.enabled || !std::isfinite(trainLoss) || !std::isfinite(valLoss)) return false;
    const auto k = static_cast<int64_t>(m_winVal.size());
    const auto slot = static_cast<size_t>(m_count % k);
    if (m_count >= k) {
        m_winValSum -= m_winVal[slot];
        m_winTrainSum -= m_winTrain[slot];
    }
    m_winVal[slot] = valLoss;
    m_winTrain[slot] = trainLoss;
    m_winStep[slot] = step;
    m_winValSum += valLoss;
    m_winTrainSum += trainLoss;
    m_recent[static_cast<size_t>(m_count % static_cast<int64_t>(m_recent.size()))] = valLoss;
    const int64_t index = m_count++;
    if (m_count < k) return false;

    const double valMean = m_winValSum / static_cast<double>(k);
    const double trainMean = m_winTrainSum / static_cast<double>(k);
    if (valMean < m_bestMean) { // a new best window: its lowest evaluation is where a rise starts
        m_bestMean = valMean;
        m_bestTrain = trainMean;
        m_bestEnd = index;
        size_t lowest = 0;
        for (size_t i = 1; i < m_winVal.size(); ++i)
            if (m_winVal[i] < m_winVal[lowest]) lowest = i;
        m_bestStep = m_winStep[lowest];
        m_bestLoss = m_winVal[lowest];
        m_sinceValSum = m_sinceTrainSum = 0;
        m_sinceCount = 0;
        m_held = 0;
        m_fired = false;
        return false;
    }
    m_sinceValSum += valLoss;
    m_sinceTrainSum += trainLoss;
    ++m_sinceCount;
    if (m_fired) {
        // Quiet until the validation loss comes back within the margin of its best.
        if (valMean - m_bestMean <= m_settings.margin * m_bestMean) {
            m_fired = false;
            m_held = 0;
        }
        return false;
    }
    const bool after = index - k + 1 > m_bestEnd;
    if (m_count < m_settings.minEvaluations || !after || !rises(valMean, trainMean, k)) {
        m_held = 0;
        return false;
    }
    if (++m_held < m_settings.sustained) return false;
    return notice(step, valMean, trainMean);
}

bool OverfitWatch::stretchAtStop(int64_t step)
{
    if (!m_settings.enabled || m_fired || m_sinceCount < static_cast<int64_t>(m_winVal.size()) ||
        m_count < m_settings.minEvaluations)
        return false;
    const double valMean = m_sinceValSum / static_cast<double>(m_sinceCount);
    const double trainMean = m_sinceTrainSum / static_cast<double>(m_sinceCount);
    if (!rises(valMean, trainMean, m_sinceCount)) return false;
    return notice(step, valMean, trainMean);
}

bool OverfitWatch::replay(const TrainingHistory& history)
{
    bool any = false;
    double trainSum = 0, trainSteps = 0;
    int64_t previous = history.empty() ? 0 : history[0].step - 1;
    for (const HistoryPoint& h : history) {
        // A row's training loss is the mean since the previous row.
        const double steps = static_cast<double>(std::max<int64_t>(h.step - previous, 1));
        previous = h.step;
        if (std::isfinite(h.trainLoss)) {
            trainSum += h.trainLoss * steps;
            trainSteps += steps;
        }
        if (!std::isfinite(h.valLoss)) continue;
        any = add(h.step, trainSteps > 0 ? trainSum / trainSteps : NAN, h.valLoss) || any;
        trainSum = trainSteps = 0;
    }
    return any;
}

std::string OverfitWatch::describe(const OverfitSighting& s)
{
    return "validation loss rising since step " + std::to_string(s.bestStep) + " (best " +
           number(s.bestLoss) + ", now " + number(s.valLoss) +
           ") while the training loss falls: the network is memorising the training rows";
}

} // namespace il
