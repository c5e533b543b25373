#include "TrainingWatch.h"
#include "NumberText.h"
#include "Network.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace il {

namespace {

// Losses and rates in messages: three significant digits ("0.0905", "0.0005").
std::string number(double v)
{
    return formatGeneral(v, 3);
}

// -x log x, 0 at x = 0.
double entropyTerm(double p)
{
    return p > 0 ? -p * std::log(p) : 0.0;
}

// What the baseline is and what a network stuck at it does, in words, for each loss.
struct BaselineWords {
    const char* baseline; // "the data's variance"
    const char* predicts; // "the mean"
};

BaselineWords wordsFor(LossKind loss)
{
    switch (loss) {
    case LossKind::MSE:
        return {"the data's variance", "the mean"};
    case LossKind::BinaryCrossEntropy:
        return {"the entropy of the targets' means", "the mean"};
    case LossKind::CrossEntropy:
        return {"the entropy of the class frequencies", "the class frequencies"};
    case LossKind::MAE:
        break;
    }
    return {"the loss of a constant prediction", "a constant"};
}

} // namespace

double baselineLoss(Backend& backend, LossKind loss, float labelSmoothing, ConstTensor y,
                    int64_t classes, std::span<const float> classWeights)
{
    const int64_t rows = y.rows(), cols = y.cols();
    if (rows == 0 || loss == LossKind::MAE) return NAN;
    const bool ce = loss == LossKind::CrossEntropy;
    if (ce && classes < 1) return NAN;
    const bool weighted = !classWeights.empty() && loss != LossKind::MSE;
    if (weighted && classWeights.size() != static_cast<size_t>(ce ? classes : 2)) return NAN;
    // Per column: sum and sum of squares, shifted by the first row (variance without
    // cancellation); for cross-entropy, a count per class; for weighted BCE, the sums of the
    // weights and of the weighted targets.
    std::vector<double> shift(static_cast<size_t>(cols)), sum(shift.size()), squares(shift.size());
    std::vector<double> weightSum(shift.size()), weightedTargets(shift.size());
    std::vector<double> counts(ce ? static_cast<size_t>(classes) : 0);
    constexpr int64_t chunkRows = 65536;
    std::vector<float> host(static_cast<size_t>(std::min(rows, chunkRows) * cols));
    for (int64_t first = 0; first < rows; first += chunkRows) {
        const int64_t n = std::min(chunkRows, rows - first);
        backend.download(host.data(), y.rowSlice(first, n));
        if (first == 0)
            for (int64_t c = 0; c < cols; ++c)
                shift[static_cast<size_t>(c)] = host[static_cast<size_t>(c)];
        for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < cols; ++c) {
                const double v = host[static_cast<size_t>(r * cols + c)];
                const auto col = static_cast<size_t>(c);
                if (ce) {
                    const auto k = static_cast<int64_t>(v);
                    if (k >= 0 && k < classes) counts[static_cast<size_t>(k)] += 1;
                    continue;
                }
                if (weighted) { // BCE: the element weighs w0 + t (w1 - w0)
                    const double w = classWeights[0] + v * (classWeights[1] - classWeights[0]);
                    weightSum[col] += w;
                    weightedTargets[col] += w * v;
                }
                const double d = v - shift[col];
                sum[col] += d;
                squares[col] += d * d;
            }
    }
    const auto n = static_cast<double>(rows);
    double total = 0;
    if (ce) {
        // The best constant under smoothing s predicts q = (1 - s) f + s / k; its loss is H(q).
        // Weighted, f is the weighted class frequency (w_c n_c / W, W = sum_c w_c n_c) and the
        // loss, a mean over the rows, is W / n times H(q).
        const double s = labelSmoothing, k = static_cast<double>(classes);
        double mass = n;
        if (weighted) {
            mass = 0;
            for (size_t c = 0; c < counts.size(); ++c)
                mass += classWeights[c] * counts[c];
            if (!(mass > 0)) return NAN;
        }
        for (size_t c = 0; c < counts.size(); ++c) {
            const double count = weighted ? classWeights[c] * counts[c] : counts[c];
            total += entropyTerm((1 - s) * count / mass + s / k);
        }
        return total * mass / n;
    }
    for (int64_t c = 0; c < cols; ++c) {
        const auto col = static_cast<size_t>(c);
        const double mean = shift[col] + sum[col] / n;
        if (loss == LossKind::MSE) {
            const double m = sum[col] / n;
            total += std::max(0.0, squares[col] / n - m * m);
        } else if (weighted) { // weighted BCE: the weighted mean, scaled by W / n
            if (!(weightSum[col] > 0)) return NAN;
            const double p = std::clamp(weightedTargets[col] / weightSum[col], 0.0, 1.0);
            total += (entropyTerm(p) + entropyTerm(1 - p)) * weightSum[col] / n;
        } else { // binary cross-entropy: predicting p = mean t costs H(p)
            const double p = std::clamp(mean, 0.0, 1.0);
            total += entropyTerm(p) + entropyTerm(1 - p);
        }
    }
    return total / static_cast<double>(cols);
}

TrainingWatch::TrainingWatch(const WatchSettings& settings, Network& network, Optimizer& optimizer,
                             LossKind loss, double baseline, int64_t startStep)
    : m_settings(settings), m_net(network), m_opt(optimizer), m_loss(loss),
      m_baseline(baseline > 0 ? baseline : NAN), m_armedAt(startStep), m_goodStep(startStep)
{
    if (!m_settings.enabled || m_settings.recoveries <= 0) return;
    const Tensor params = m_net.weights();
    m_good = Buffer(&m_net.backend(), static_cast<size_t>(params.size()));
    m_net.backend().copy(m_good.data(), params.data, m_good.floats() * sizeof(float));
}

void TrainingWatch::add(double lossSum, int64_t steps)
{
    m_sum += lossSum;
    m_steps += steps;
}

TrainingWatch::Verdict TrainingWatch::closeWindow(int64_t step)
{
    if (!enabled() || m_steps == 0) return Verdict::None;
    const double mean = m_sum / static_cast<double>(m_steps);
    const int64_t first = step - m_steps; // the window covered steps first+1 .. step
    m_sum = 0;
    m_steps = 0;
    if (!std::isfinite(mean)) return Verdict::None; // the guard's case

    const bool clearlyLearnt =
        std::isnan(m_baseline) || mean < (1 - m_settings.stallBand) * m_baseline;
    if (mean < m_best) {
        m_best = mean;
        if (m_good.floats() && clearlyLearnt) {
            m_net.backend().copy(m_good.data(), m_net.weights().data,
                                 m_good.floats() * sizeof(float));
            m_goodStep = step;
        }
    }

    // Neither a stall nor a divergence counts before the grace period is over: a fresh network
    // (or one just sent back to earlier weights) starts far from its best.
    const bool pastGrace = first >= m_armedAt + m_settings.grace;

    // A stall: every window near the baseline. (Far above it, a network is still on its way
    // down from its first guess, or lost: the divergence test's case.)
    const bool atBaseline = !clearlyLearnt && mean <= (1 + m_settings.stallBand) * m_baseline;
    if (pastGrace && atBaseline) {
        if (m_stalledSince < 0) m_stalledSince = first;
        if (step - m_stalledSince >= m_settings.stallSteps && !m_reportedStall)
            return Verdict::Stalled;
    } else {
        m_stalledSince = -1;
    }

    // A divergence: every window far above the best one and, when the baseline is known, at
    // least halfway back to it on a log scale (above sqrt(best x baseline)): near a perfect fit
    // a loss four times a tiny best is noise, not a run going wrong.
    const double floor = std::isnan(m_baseline) ? 0.0 : std::sqrt(m_best * m_baseline);
    if (pastGrace && mean > std::max(m_settings.divergenceRatio * m_best, floor)) {
        if (m_divergingSince < 0) m_divergingSince = first;
        if (step - m_divergingSince >= m_settings.divergenceSteps && !m_reportedDivergence)
            return Verdict::Diverging;
    } else {
        m_divergingSince = -1;
    }
    return Verdict::None;
}

std::string TrainingWatch::describe(Verdict verdict, int64_t step) const
{
    // Short enough for a status bar with what follows it: the step, what the loss did, what
    // that means.
    const std::string at = "step " + std::to_string(step) + ": ";
    if (verdict == Verdict::Stalled) {
        const BaselineWords words = wordsFor(m_loss);
        return at + "the loss has stayed at " + words.baseline + " " + number(m_baseline) +
               " for " + std::to_string(step - m_stalledSince) + " steps: the network predicts " +
               words.predicts;
    }
    return at + "the loss has stayed above " + number(m_settings.divergenceRatio) + "x its best " +
           number(m_best) + " for " + std::to_string(step - m_divergingSince) +
           " steps: training is diverging";
}

std::string TrainingWatch::respond(Verdict verdict, int64_t step, ScheduleConfig& schedule)
{
    if (verdict == Verdict::None) return {};
    if (m_firstVerdictStep < 0) {
        m_firstVerdictStep = step;
        m_firstVerdictSince = verdict == Verdict::Stalled ? m_stalledSince : m_divergingSince;
        m_firstVerdict = verdict;
    }
    const std::string line = describe(verdict, step);
    if (m_recoveriesDone < m_settings.recoveries) return line + "; " + recover(step, schedule);
    // No recovery (left): say it once per kind, and keep training.
    (verdict == Verdict::Stalled ? m_reportedStall : m_reportedDivergence) = true;
    if (m_settings.recoveries > 0)
        return line + "; no recovery left (" + std::to_string(m_settings.recoveries) + " done)";
    return line + "; a learning rate lower than " + number(schedule.lrMax) + " may help";
}

std::string TrainingWatch::summary(const ScheduleConfig& schedule) const
{
    if (m_firstVerdictStep < 0) return {};
    if (m_recoveriesDone > 0)
        return "recovered " + std::to_string(m_recoveriesDone) +
               (m_recoveriesDone == 1 ? " time" : " times") +
               " from a stall or divergence; the learning rate is now " + number(schedule.lrMax);
    return (m_firstVerdict == Verdict::Stalled
                ? "the loss stalled at " + std::string(wordsFor(m_loss).baseline)
                : std::string("training diverged")) +
           " from step " + std::to_string(m_firstVerdictSince) + " on";
}

std::string TrainingWatch::recover(int64_t step, ScheduleConfig& schedule)
{
    m_net.backend().copy(m_net.weights().data, m_good.data(), m_good.floats() * sizeof(float));
    m_opt.reset();
    schedule.lrMax *= m_settings.lrFactor;
    schedule.lrMin *= m_settings.lrFactor;
    ++m_recoveriesDone;
    // A new grace period; the best window and the good weights stay.
    m_armedAt = step;
    m_stalledSince = m_divergingSince = -1;
    m_sum = 0;
    m_steps = 0;
    return "recovering (" + std::to_string(m_recoveriesDone) + " of " +
           std::to_string(m_settings.recoveries) + ") from the weights of step " +
           std::to_string(m_goodStep) + " at learning rate " + number(schedule.lrMax);
}

} // namespace il
