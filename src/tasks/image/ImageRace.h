// A race between image presets: each learns the same picture for the same wall-clock budget,
// one after the other, on the same CPU threads, from the same seed, with the image task's
// defaults (those `train` and the studio use). `ironlearn-cli race` and the studio's race view
// both run it through ImageRace.
//
// Fair measuring: at the first step boundary at or past each checkpoint time the weights are
// copied to the host (a memory copy, counted in the budget like any bookkeeping); they are
// measured after the preset's run, so rendering the picture for PSNR costs no training time and
// does not bend the time-stretched learning-rate schedule. A checkpoint thus holds the weights
// of the steps started before it, as the time budget itself counts steps.
//
// Measuring's own time is bounded too: after a preset's run the final weights are measured in
// one pass over the picture (drawing the reconstruction in the same pass), then the checkpoints
// in time order, each another such pass, only while their passes fit in the same budget again.
// So a preset takes at most about twice the budget plus one pass over the picture; checkpoints
// left out are NaN (RaceEntry::unmeasured says how many). A pass holds one band of rows, not the
// picture (ImageTask::measure). A live preview
// (RaceObserver::preview) is the one exception: it renders a small picture between two steps
// and its time counts in the budget (RaceEntry::previewSeconds says how much).
//
// Threads: run() trains on the caller's thread; cancel() may be called from any thread.
// Errors: run() throws EngineError (with the preset's layers in the message) when training
// fails, std::bad_alloc when memory runs out.
#pragma once

#include "ImageTask.h"

#include <QImage>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace il::tasks {

struct Model;

struct RaceSettings {
    double seconds = 10;             // training time per preset
    std::vector<double> checkpoints; // ascending, each in (0, seconds]
    int threads = 0;                 // CPU threads, 0: all cores
    uint64_t seed = 1;
    bool keepReconstruction = false; // fill RaceEntry::reconstruction
};

// One preset's run and what it reached.
struct RaceEntry {
    QString preset;
    std::string layers;
    int64_t parameters = 0;
    int64_t steps = 0;
    double seconds = 0;        // training time, the trainer's clock
    double copySeconds = 0;    // of which copying the weights at checkpoints
    double previewSeconds = 0; // of which rendering live previews
    double measureSeconds = 0; // measuring after training: the final weights and checkpoints
    double passSeconds = 0;    // of which the final weights' pass over the picture
    int unmeasured = 0;        // checkpoints left unmeasured (NaN): their passes were over budget
    StopReason reason = StopReason::TimeBudget;
    std::string message;
    // Per checkpoint of RaceSettings: NaN / -1 where the run stopped before it. When the budget
    // ran out before a checkpoint's step boundary (the last one), the final weights stand in.
    std::vector<double> psnrAt, ssimAt;
    std::vector<int64_t> stepsAt;
    std::vector<double> secondsAt; // when its weights were copied, the trainer's clock
    double psnr = NAN, ssim = NAN; // the final weights
    QImage reconstruction;         // the final weights at the training size (keepReconstruction)

    double stepsPerSecond() const { return seconds > 0 ? static_cast<double>(steps) / seconds : 0; }
};

// What the running preset reports to an observer, on the race's thread.
struct RaceTick {
    int64_t step = 0;
    double elapsed = 0;     // seconds, the trainer's clock
    double trainLoss = NAN; // MSE of the step's batch: 10 log10(1 / loss) estimates the PSNR
};

struct RaceObserver {
    // After every step: keep it cheap (no copies, no drawing), it runs inside the budget.
    std::function<void(const RaceTick&)> stepped;
    // At most every previewInterval seconds (0: never), and only while previews have taken at
    // most previewShare of the training time, the running weights drawn with the longest side
    // previewSide (a wide network's preview waits longer, so each preset pays the same share);
    // also once when training ended, with the final weights.
    std::function<void(const RaceTick&, const QImage&)> preview;
    double previewInterval = 0;
    double previewShare = 0.03;
    int previewSide = 96;
    // When training ended, before the measuring.
    std::function<void()> trained;
};

class ImageRace {
public:
    // task: the picture, at its training size; shared with the caller, who must not use it while
    // run() is going (evaluating it is not thread-safe).
    ImageRace(std::shared_ptr<ImageTask> task, RaceSettings settings);

    const RaceSettings& settings() const { return m_settings; }
    const ImageTask& task() const { return *m_task; }

    // Trains preset (a name of the image task's presets) for the budget and measures its
    // checkpoints and final weights. After cancel(): the run stops within one step and what it
    // reached is measured (reason Cancelled), unless measure was false: then nothing is (NaN);
    // later runs return at once with no steps.
    RaceEntry run(const QString& preset, const RaceObserver& observer = {});
    void cancel(bool measure = true)
    {
        if (!measure) m_skipMeasuring = true;
        m_cancel = true;
    }
    bool isCancelled() const { return m_cancel; }

private:
    struct Capture; // weights copied at a step boundary (ImageRace.cpp)
    // Trains for the budget, copying the weights at the first step boundary at or past each
    // checkpoint (at[i]: the capture of checkpoint i, -1: not reached).
    void train(Model& model, const RaceObserver& observer, std::vector<Capture>& captures,
               std::vector<int>& at, RaceEntry& entry);
    // Measures the captures and the final weights (left in net).
    void measure(Network& net, const std::vector<Capture>& captures, const std::vector<int>& at,
                 RaceEntry& entry);

    std::shared_ptr<ImageTask> m_task;
    RaceSettings m_settings;
    std::atomic<bool> m_cancel{false}, m_skipMeasuring{false};
};

// 1-2-5 steps below the budget (the last three), then the budget: 10 -> 1, 2, 5, 10.
std::vector<double> sparseRaceCheckpoints(double seconds);
// Every `every` seconds up to the budget, and the budget: dense enough to draw a curve.
std::vector<double> evenRaceCheckpoints(double seconds, double every);
// The entry with the highest final PSNR, -1 when none was measured.
int raceWinner(const std::vector<RaceEntry>& entries);

} // namespace il::tasks
