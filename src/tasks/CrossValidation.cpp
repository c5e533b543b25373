#include "CrossValidation.h"

#include "Errors.h"
#include "NetworkAverage.h"
#include "TabularLosses.h"
#include "TabularTask.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

namespace il::tasks {

namespace {

struct MeanError {
    double mean = NAN, error = NAN;
};

// The mean of v and its standard error (NaN for fewer than two values).
MeanError meanError(const std::vector<double>& v)
{
    MeanError m;
    if (v.empty()) return m;
    const auto n = static_cast<double>(v.size());
    m.mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    if (v.size() < 2) return m;
    double ss = 0;
    for (double x : v)
        ss += (x - m.mean) * (x - m.mean);
    m.error = std::sqrt(ss / (n - 1) / n);
    return m;
}

// The step where the folds' mean validation loss is lowest, over the steps every fold
// evaluated (each fold's curve ends where its early stopping did); 0 when they share none.
int64_t bestMeanStep(const std::vector<FoldRun>& runs)
{
    std::map<int64_t, std::pair<double, size_t>> sum; // step -> (sum, folds)
    for (const FoldRun& r : runs)
        for (const HistoryPoint& h : r.history)
            if (std::isfinite(h.valLoss) && h.count == 1) {
                auto& [total, n] = sum[h.step];
                total += h.valLoss;
                ++n;
            }
    int64_t best = 0;
    double lowest = INFINITY;
    for (const auto& [step, tn] : sum)
        if (tn.second == runs.size() && tn.first < lowest) {
            lowest = tn.first;
            best = step;
        }
    return best;
}

int64_t median(std::vector<int64_t> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2] + 1) / 2;
}

QString num(double v)
{
    return QString::number(v, 'g', 4);
}

// "5-fold cross-validation on 150 rows" and what was decided, in one line.
QString describe(const CrossValidation& cv)
{
    auto pm = [](double mean, double error) {
        return QString("%1 ± %2").arg(num(mean), QString::number(error, 'g', 2));
    };
    const QString head = QString("%1-fold cross-validation on %2 rows").arg(cv.folds).arg(cv.rows);
    const QString length =
        QString("trained again on every row for %1 steps (the folds' median best)")
            .arg(cv.refitSteps);
    if (cv.simplerName.isEmpty() || std::isnan(cv.simplerLoss))
        return head + ": the network's loss " + pm(cv.networkLoss, cv.networkError) + "; it is " +
               length;
    // "loss 0.5047 ± 0.032 for the network vs 0.5183 ± 0.032 for least squares (-0.0136 ±
    // 0.0082 per row)"
    const QString figures =
        QString("loss %1 for the network vs %2 for %3 (%4 per row)")
            .arg(pm(cv.networkLoss, cv.networkError), pm(cv.simplerLoss, cv.simplerError),
                 cv.simplerName, pm(cv.difference, cv.differenceError));
    if (cv.averaged)
        return head + ": " + figures +
               QString("; the folds' %1 networks averaged, blended %2 : %3 with %4 fitted on "
                       "every row (out-of-fold loss %5), are kept")
                   .arg(cv.folds)
                   .arg(QString::number(cv.share, 'f', 2), QString::number(1 - cv.share, 'f', 2),
                        cv.simplerName, pm(cv.blendLoss, cv.blendError));
    const QString margin = QString::number(cv.margin, 'g', 2) + " standard errors";
    if (!cv.judged) return head + ": " + figures + "; the network is " + length;
    if (cv.keepNetwork)
        return head + ": " + figures + ", better by more than " + margin +
               ", so the network is kept and " + length;
    return head + ": " + figures + ", not better by more than " + margin + ", so " +
           cv.simplerName + " fitted on every row is kept";
}

constexpr const char* kAveragingNeedsRegression =
    "averaging the folds' networks needs a regression table (a squared-error loss)";

// FoldModel::Averaged, after every fold: the blend's share and out-of-fold loss, and the folds'
// networks averaged as one with the simpler model (fitted on every row) blended in; a failure
// when the stack cannot be averaged.
// member: a network of the folds' stack (its layout; the refusal before the folds built it).
void averageFolds(const Task& task, const Network& member, const std::vector<HostTensors>& members,
                  const std::vector<double>& network, const std::vector<double>& simpler,
                  CrossValidation& cv)
{
    const TaskData& d = task.data();
    Backend& backend = member.backend();
    std::string why;
    const std::string averaged = averagedSpec(member, static_cast<int>(members.size()), &why);
    if (averaged.empty()) {
        cv.failure = QString::fromStdString("the folds' networks cannot be averaged: " + why);
        return;
    }
    LinearPart linear;
    const bool blend =
        simpler.size() == network.size() && task.simplerLinear(d.inputWidth, d.outputWidth, linear);
    cv.share = blend ? blendShare(network, simpler) : 1.0;
    // The blend's loss per row: the mean over its outputs of the squared blended error.
    const size_t outputs = static_cast<size_t>(std::max<int64_t>(d.outputWidth, 1));
    std::vector<double> rows(network.size() / outputs, 0.0);
    for (size_t i = 0; i < rows.size() * outputs; ++i) {
        const double e = blend ? cv.share * network[i] + (1 - cv.share) * simpler[i] : network[i];
        rows[i / outputs] += e * e / static_cast<double>(outputs);
    }
    const MeanError m = meanError(rows);
    cv.blendLoss = m.mean;
    cv.blendError = m.error;
    Network avg(backend, d.inputWidth, averaged, d.outputWidth, d.vocab);
    setAveraged(avg, member, members, cv.share, blend ? linear : LinearPart{});
    cv.averaged = true;
    cv.averagedSpec = averaged;
    cv.averagedWeights = copyToHost(avg);
    cv.keepNetwork = cv.share > 0;
}

} // namespace

// Long: the fold loop, whose every exit (stop, failure, cancel) sets cv and breaks, then the
// verdict from the per-row losses it pooled.
CrossValidation crossValidate(Task& task, Backend& backend, const std::string& spec,
                              const TrainerConfig& config, const RunPolicy& policy,
                              const FoldHooks& hooks, FoldModel model)
{
    CrossValidation cv;
    cv.folds = task.folds();
    if (cv.folds < 2) {
        cv.failure = "this data has no folds to cross-validate";
        return cv;
    }
    cv.margin = kSettleMargin;
    const auto started = std::chrono::steady_clock::now();
    std::vector<double> network, simpler;
    std::vector<double> metrics;
    std::vector<int64_t> kept;
    bool judged = true;
    const bool average = model == FoldModel::Averaged;
    std::vector<HostTensors> members;                 // each fold's network (average)
    std::vector<double> networkErrors, simplerErrors; // out of fold, per row and output
    std::unique_ptr<Network> layout; // average: the folds' stack, refused before any fold trains
    if (average) {
        const TaskData& d = task.data();
        std::string why;
        try {
            layout = std::make_unique<Network>(backend, d.inputWidth, spec, d.outputWidth, d.vocab);
            if (averagedSpec(*layout, cv.folds, &why).empty())
                cv.failure =
                    QString::fromStdString("the folds' networks cannot be averaged: " + why);
        } catch (const std::exception& e) {
            cv.failure = QString::fromUtf8(e.what());
        }
        if (!cv.failure.isEmpty()) return cv;
    }
    for (int fold = 0; fold < cv.folds; ++fold) {
        if (hooks.stopRequested && hooks.stopRequested()) {
            cv.stopped = true;
            break;
        }
        const QString which = QString("fold %1 of %2").arg(fold + 1).arg(cv.folds);
        std::unique_ptr<Task> ft = task.foldTask(fold);
        if (!ft) {
            cv.failure = which + ": the data has no such fold";
            break;
        }
        FoldRun run;
        TrainResult result;
        std::vector<double> foldNetwork, foldSimpler;
        try {
            const TaskData& d = ft->data();
            run.trainRows = d.trainRows;
            run.heldOutRows = d.valRows;
            Network net(backend, d.inputWidth, spec, d.outputWidth, d.vocab);
            net.initialize(config.seed);
            ft->warmStart(net);
            std::vector<double> probe, probeSimpler;
            if (average && fold == 0 && !ft->rowErrors(net, probe, probeSimpler)) {
                cv.failure = kAveragingNeedsRegression;
                break;
            }
            TrainerConfig c = config;
            QString why;
            if (!applyClassWeights(*ft, c, &why)) {
                cv.failure = which + ": " + why;
                break;
            }
            Optimizer optimizer(backend, c.optimizer, net.parameterRanges());
            TrainingState state;
            const UploadedData up = uploadTaskData(backend, d);
            Trainer trainer(net, optimizer, c, state, policy);
            trainer.setProgressCallback([&hooks, fold](const Progress& p) {
                if (hooks.progress) hooks.progress(fold, p);
            });
            if (hooks.active) hooks.active(fold, &trainer);
            try {
                result = trainer.run(up.view);
            } catch (...) {
                if (hooks.active) hooks.active(fold, nullptr);
                throw;
            }
            if (hooks.active) hooks.active(fold, nullptr);
            run.reason = result.reason;
            run.steps = state.step;
            run.keptStep = result.restoredStep >= 0 ? result.restoredStep : state.step;
            run.history = state.history;
            if (result.reason == StopReason::Cancelled) {
                cv.stopped = true;
                break;
            }
            if (result.reason == StopReason::NonFinite ||
                result.reason == StopReason::DeviceFailure) {
                cv.failure = which + ": " + QString::fromStdString(result.message);
                break;
            }
            QString simplerName;
            ft->rowLosses(net, c.classWeights, foldNetwork, foldSimpler, &simplerName);
            if (cv.simplerName.isEmpty()) cv.simplerName = simplerName;
            judged = judged && ft->canSettle(net) && !foldSimpler.empty();
            if (ft->hasTrainingMetric()) run.metric = ft->trainingMetric(net);
            if (average) {
                std::vector<double> fn, fs;
                if (!ft->rowErrors(net, fn, fs)) {
                    cv.failure = kAveragingNeedsRegression;
                    break;
                }
                networkErrors.insert(networkErrors.end(), fn.begin(), fn.end());
                simplerErrors.insert(simplerErrors.end(), fs.begin(), fs.end());
                members.push_back(copyToHost(net));
            }
        } catch (const std::exception& e) {
            cv.failure = which + ": " + QString::fromUtf8(e.what());
            break;
        }
        run.networkLoss = meanError(foldNetwork).mean;
        run.simplerLoss = meanError(foldSimpler).mean;
        network.insert(network.end(), foldNetwork.begin(), foldNetwork.end());
        simpler.insert(simpler.end(), foldSimpler.begin(), foldSimpler.end());
        if (!std::isnan(run.metric)) metrics.push_back(run.metric);
        kept.push_back(run.keptStep);
        cv.runs.push_back(std::move(run));
        if (hooks.foldDone) hooks.foldDone(fold, cv);
    }
    cv.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!cv.complete()) return cv;

    cv.rows = static_cast<int64_t>(network.size());
    const MeanError n = meanError(network);
    cv.networkLoss = n.mean;
    cv.networkError = n.error;
    if (simpler.size() == network.size() && !simpler.empty()) {
        const MeanError s = meanError(simpler);
        cv.simplerLoss = s.mean;
        cv.simplerError = s.error;
        const PairedLosses p = comparePaired(network, simpler);
        cv.difference = p.meanDiff;
        cv.differenceError = p.stdError;
    } else {
        judged = false;
    }
    const MeanError m = meanError(metrics);
    cv.metric = m.mean;
    cv.metricError = m.error;
    cv.judged = judged;
    // The network must beat the simpler model it can go back to by more than the noise, as a
    // settle on a validation split (Task::settle), here on every row.
    cv.keepNetwork = !judged || cv.difference < -cv.margin * cv.differenceError;
    // At least one step: a network that is no simpler model has nothing to go back to.
    // The folds' mean validation curve is far steadier than each fold's own best step (on the
    // corpus the median of those gave 1.30x scikit-learn's MLP error, the mean curve 1.18x).
    const int64_t mean = bestMeanStep(cv.runs);
    cv.refitSteps = std::max<int64_t>(mean > 0 ? mean : median(kept), 1);
    if (average) {
        try {
            averageFolds(task, *layout, members, networkErrors, simplerErrors, cv);
        } catch (const std::exception& e) {
            cv.failure = "averaging the folds' networks: " + QString::fromUtf8(e.what());
        }
        if (!cv.failure.isEmpty()) return cv;
    }
    cv.note = describe(cv);
    return cv;
}

double blendShare(const std::vector<double>& a, const std::vector<double>& b)
{
    // sum (b + s (a - b))^2 is least at s = -sum b (a - b) / sum (a - b)^2.
    double num = 0, den = 0;
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
        const double d = a[i] - b[i];
        num -= b[i] * d;
        den += d * d;
    }
    if (!(den > 0) || !std::isfinite(num / den)) return 1.0;
    return std::clamp(num / den, 0.0, 1.0);
}

std::unique_ptr<Network> averagedNetwork(const CrossValidation& cv, const Task& task,
                                         Backend& backend)
{
    const TaskData& d = task.data();
    auto net =
        std::make_unique<Network>(backend, d.inputWidth, cv.averagedSpec, d.outputWidth, d.vocab);
    const auto tensors = net->namedTensors();
    if (tensors.size() != cv.averagedWeights.size())
        throw EngineError("the folds' averaged network does not fit " + cv.averagedSpec);
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (static_cast<size_t>(tensors[i].tensor.size()) != cv.averagedWeights[i].size())
            throw EngineError("the folds' averaged network does not fit " + cv.averagedSpec);
        backend.upload(tensors[i].tensor, cv.averagedWeights[i].data());
    }
    return net;
}

TrainerConfig refitConfig(const TrainerConfig& config, const CrossValidation& cv)
{
    TrainerConfig c = config;
    // The folds' trajectory: the same schedule over the same budget, stopped at their length.
    c.stopAfter = cv.refitSteps;
    c.maxSeconds = 0;
    c.patience = 0; // no validation rows
    return c;
}

void endRefit(Task& task, Network& net, const Settled& settled, TrainResult& result)
{
    switch (result.reason) {
    case StopReason::Finished:
    case StopReason::TimeBudget:
    case StopReason::TargetReached:
    case StopReason::EarlyStopping:
        break;
    case StopReason::Cancelled:
    case StopReason::NonFinite:
    case StopReason::DeviceFailure:
        return; // the run did not end on its own: its weights stay
    }
    if (settled.folds == 0) return;
    if (settled.replaced) {
        task.warmStart(net);
        // The network's; the simpler model's is not measured here. What was kept and why is
        // the verdict's to say (RunVerdict), once.
        result.trainLoss = NAN;
    }
    result.valLoss = settled.valLoss;
}

Settled settledByCrossValidation(const CrossValidation& cv)
{
    Settled s;
    if (!cv.complete()) return s;
    s.folds = cv.folds;
    s.refitSteps = cv.refitSteps;
    s.note = cv.note;
    s.replaced = !cv.keepNetwork;
    s.judged = cv.judged;
    s.networkLoss = cv.networkLoss;
    s.simplerLoss = cv.simplerLoss;
    s.stdError = cv.differenceError;
    s.margin = cv.margin;
    s.rows = cv.rows;
    s.simplerName = cv.simplerName;
    s.valLoss = cv.averaged ? cv.blendLoss : cv.keepNetwork ? cv.networkLoss : cv.simplerLoss;
    s.foldMetric = cv.metric;
    s.foldMetricError = cv.metricError;
    if (cv.averaged) {
        s.averagedShare = cv.share;
        s.replaced = false; // the blend is the model, whatever its share
    }
    return s;
}

} // namespace il::tasks
