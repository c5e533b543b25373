#include "ImageRace.h"
#include "RunDriver.h"

#include "Errors.h"
#include "Model.h"
#include "ModelJson.h"

#include <chrono>
#include <cmath>
#include <tuple>

namespace il::tasks {

using Clock = std::chrono::steady_clock;

struct ImageRace::Capture {
    int64_t step = 0;
    double seconds = 0; // the trainer's clock
    std::vector<float> weights;
};

namespace {

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<float> downloadWeights(const Network& net)
{
    const Tensor params = net.parameters();
    std::vector<float> w(static_cast<size_t>(params.size()));
    net.backend().download(w.data(), params);
    return w;
}

// The preview's size: the training image's aspect, the longest side `side` (at least the
// smallest render).
QSize previewSize(const ImageGeometry& g, int side)
{
    side = std::max(side, kMinRenderSide);
    const int longest = std::max(g.width, g.height);
    const auto scaled = [&](int v) {
        return std::max(kMinRenderSide, static_cast<int>(std::lround(double(v) * side / longest)));
    };
    return {scaled(g.width), scaled(g.height)};
}

} // namespace

ImageRace::ImageRace(std::shared_ptr<ImageTask> task, RaceSettings settings)
    : m_task(std::move(task)), m_settings(std::move(settings))
{
}

RaceEntry ImageRace::run(const QString& preset, const RaceObserver& observer)
{
    RaceEntry entry;
    entry.preset = preset;
    if (m_cancel) { // the race was stopped before this preset's turn
        const size_t n = m_settings.checkpoints.size();
        entry.reason = StopReason::Cancelled;
        entry.message = "stopped before it started";
        entry.psnrAt.assign(n, NAN);
        entry.ssimAt.assign(n, NAN);
        entry.stepsAt.assign(n, -1);
        entry.secondsAt.assign(n, NAN);
        return entry;
    }
    Model model;
    model.backend = createCpuBackend(m_settings.threads);
    TrainerConfig& cfg = model.config;
    m_task->applyDefaults(cfg); // as train uses them
    cfg.seed = m_settings.seed;
    cfg.epochs = 0;
    cfg.steps = 0;
    cfg.maxSeconds = m_settings.seconds; // the cosine schedule stretches over the budget
    model.task = m_task;
    model.build(m_task->presetSpec(preset).toStdString());
    // The picture's rows straight onto this preset's backend, a band at a time: the same rows
    // as model.upload() from the task's data, without needing a host copy of them all.
    model.data = m_task->uploadPixels(*model.backend);
    model.uploaded = true;
    entry.layers = model.network->spec();
    entry.parameters = model.network->parameterCount();

    std::vector<Capture> captures;
    std::vector<int> at(m_settings.checkpoints.size(), -1); // the capture of each checkpoint
    train(model, observer, captures, at, entry);
    measure(*model.network, captures, at, entry);
    return entry;
}

void ImageRace::train(Model& model, const RaceObserver& observer, std::vector<Capture>& captures,
                      std::vector<int>& at, RaceEntry& entry)
{
    const std::vector<double>& checkpoints = m_settings.checkpoints;
    Network& net = *model.network;
    // Trained as every run is (runModel), without the task's metric at evaluations (its time
    // would count against the preset) and without a settle (a picture has no simpler model).
    RunSetup setup;
    // A callback after every step: a checkpoint's weights are those of the first step boundary
    // at or past it, not of a later report.
    setup.policy.progressInterval = 0;
    setup.taskMetric = false;
    setup.settle = false;
    size_t next = 0;
    double lastPreview = -INFINITY;
    const QSize preview = previewSize(m_task->geometry(), observer.previewSide);
    RaceTick tick;
    RunHooks hooks;
    hooks.progress = [&](const Progress& pr, Trainer& trainer) {
        if (m_cancel) trainer.requestCancel();
        tick = {pr.step, pr.elapsed, pr.trainLoss};
        if (observer.stepped) observer.stepped(tick);
        if (next < checkpoints.size() && pr.elapsed >= checkpoints[next]) {
            const auto start = Clock::now();
            captures.push_back({pr.step, pr.elapsed, downloadWeights(net)});
            for (; next < checkpoints.size() && pr.elapsed >= checkpoints[next]; ++next)
                at[next] = static_cast<int>(captures.size()) - 1;
            entry.copySeconds += secondsSince(start);
        }
        if (observer.preview && observer.previewInterval > 0 &&
            pr.elapsed >= lastPreview + observer.previewInterval &&
            entry.previewSeconds <= observer.previewShare * pr.elapsed) {
            const auto start = Clock::now();
            lastPreview = pr.elapsed;
            observer.preview(tick, renderImage(net, m_task->geometry(), preview, nullptr));
            entry.previewSeconds += secondsSince(start);
        }
    };
    RunOutcome run = runModel(model, setup, hooks);
    if (!run.failure.empty()) throw EngineError(entry.layers + ": " + run.failure);
    const TrainResult& result = run.result;
    entry.steps = result.steps;
    entry.seconds = result.seconds;
    entry.reason = result.reason;
    entry.message = result.message;
    if (observer.trained) observer.trained();
    if (observer.preview) // the final weights, as the tile will stay
        observer.preview({entry.steps, entry.seconds, tick.trainLoss},
                         renderImage(net, m_task->geometry(), preview, nullptr));
}

void ImageRace::measure(Network& net, const std::vector<Capture>& captures,
                        const std::vector<int>& at, RaceEntry& entry)
{
    const auto psnrAndSsim = [&](QImage* reconstruction) {
        if (m_skipMeasuring) return std::pair<double, double>{NAN, NAN};
        const TaskMetrics m = m_task->measure(net, reconstruction);
        double psnr = NAN;
        io::doubleFromJson(m.values["psnr_db"], psnr); // "Infinity" for identical pictures
        return std::pair<double, double>{psnr, m.values["ssim"].toDouble(NAN)};
    };
    // The final weights first, with the reconstruction in the same pass over the picture.
    auto start = Clock::now();
    const std::vector<float> final = downloadWeights(net);
    const bool keep = m_settings.keepReconstruction && !m_skipMeasuring;
    std::tie(entry.psnr, entry.ssim) = psnrAndSsim(keep ? &entry.reconstruction : nullptr);
    const double onePass = secondsSince(start);
    entry.passSeconds = onePass;
    entry.measureSeconds = onePass;
    // Then the checkpoints in time order, each a pass like the last, while they fit in the
    // budget: on a large picture a pass can take far longer than a short race's training.
    std::vector<std::pair<double, double>> measured(captures.size(), {NAN, NAN});
    std::vector<bool> skipped(captures.size(), false);
    for (size_t c = 0; c < captures.size(); ++c) {
        if (m_skipMeasuring) break;
        if (captures[c].step == entry.steps) { // copied after the last step: the final weights
            measured[c] = {entry.psnr, entry.ssim};
            continue;
        }
        const double checkpointsSoFar = entry.measureSeconds - onePass;
        if (checkpointsSoFar + onePass > m_settings.seconds) { // the next would not fit
            skipped[c] = true;
            continue;
        }
        start = Clock::now();
        net.backend().upload(net.parameters(), captures[c].weights.data());
        measured[c] = psnrAndSsim(nullptr);
        entry.measureSeconds += secondsSince(start);
    }
    net.backend().upload(net.parameters(), final.data());
    const bool ranOut = entry.reason == StopReason::TimeBudget;
    for (const int c : at) {
        if (c >= 0) {
            const auto i = static_cast<size_t>(c);
            if (skipped[i]) ++entry.unmeasured;
            entry.psnrAt.push_back(measured[i].first);
            entry.ssimAt.push_back(measured[i].second);
            entry.stepsAt.push_back(captures[i].step);
            entry.secondsAt.push_back(captures[i].seconds);
        } else { // the budget ended first: the final weights; another stop: not reached
            entry.psnrAt.push_back(ranOut ? entry.psnr : NAN);
            entry.ssimAt.push_back(ranOut ? entry.ssim : NAN);
            entry.stepsAt.push_back(ranOut ? entry.steps : -1);
            entry.secondsAt.push_back(ranOut ? entry.seconds : NAN);
        }
    }
}

std::vector<double> sparseRaceCheckpoints(double seconds)
{
    std::vector<double> below;
    for (double decade = 0.01; decade < seconds; decade *= 10)
        for (const double m : {1.0, 2.0, 5.0})
            if (decade * m < seconds * (1 - 1e-9)) below.push_back(decade * m);
    std::vector<double> out(below.end() - std::min<size_t>(below.size(), 3), below.end());
    out.push_back(seconds);
    return out;
}

std::vector<double> evenRaceCheckpoints(double seconds, double every)
{
    std::vector<double> out;
    for (int i = 1; every > 0 && i * every < seconds * (1 - 1e-9); ++i)
        out.push_back(i * every);
    out.push_back(seconds);
    return out;
}

int raceWinner(const std::vector<RaceEntry>& entries)
{
    int best = -1;
    for (size_t i = 0; i < entries.size(); ++i)
        if (!std::isnan(entries[i].psnr) &&
            (best < 0 || entries[i].psnr > entries[static_cast<size_t>(best)].psnr))
            best = static_cast<int>(i);
    return best;
}

} // namespace il::tasks
