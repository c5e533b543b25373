// The studio's race between image presets (tasks::ImageRace) on a thread of its own.
//
// The race trains models of its own on a copy of the picture (opened on this thread from the
// session's bytes and options), so the user's model, its training worker and its data are never
// touched. Shaped like the TrainingWorker: the request is copied in when start() is called,
// Stop is an atomic flag (the running preset stops within one step, what it reached is measured
// and reported unless the window is closing, the presets after it do not run), results leave as
// queued value signals, and the destructor stops and waits. The session makes sure it never runs
// next to a training run.
#pragma once

#include "ImageRace.h"

#include <QImage>
#include <QMetaType>
#include <QMutex>
#include <QStringList>
#include <QThread>

#include <atomic>
#include <memory>

namespace il::app {

struct RaceRequest {
    QString dataPath;           // for messages
    QByteArray dataBytes;       // the picture's file
    tasks::TaskOptions options; // its training size and colour, as the session opened it
    QStringList presets;
    double seconds = 10;
    uint64_t seed = 1;
};

// The running preset's progress, about ten times a second.
struct RaceTickUpdate {
    int index = 0; // of the preset in the request
    int64_t step = 0;
    double elapsed = 0;
    // 10 log10(1 / MSE) of the recent batches (smoothed): an estimate of the PSNR, drawn until
    // the preset's checkpoints are measured.
    double psnrEstimate = NAN;
    double stepsPerSecond = 0;
};

class RaceRunner : public QThread {
    Q_OBJECT
public:
    explicit RaceRunner(QObject* parent = nullptr);
    // Stops the race and waits for the thread.
    ~RaceRunner() override;

    // Starts a race; false (nothing started) while one is going.
    bool start(const RaceRequest& request);
    // The running preset stops within one step; raceFinished follows. measure: what it reached
    // is measured and reported (false when closing: the thread ends sooner).
    void stop(bool measure = true);
    bool isRacing() const { return isRunning(); }
    // The checkpoints a race of this length records: about ten, every 0.25, 0.5, 1, 2, 5... s.
    static std::vector<double> checkpointsFor(double seconds);

signals:
    // The picture as the race sees it (the training size), before the first preset.
    void targetReady(const QImage& image, const QString& description);
    void presetStarted(int index, const QString& preset);
    void ticked(const il::app::RaceTickUpdate& tick);
    void previewReady(int index, qint64 step, const QImage& image);
    // The preset's training ended; its checkpoints are being measured.
    void presetTrained(int index);
    // The preset's measured run (checkpoints, final PSNR and SSIM, reconstruction).
    void presetFinished(int index, const il::tasks::RaceEntry& entry);
    // The end: stopped (by stop()) or not; error: why the race could not run ("" none).
    void raceFinished(bool stopped, const QString& error);

protected:
    void run() override;

private:
    void runPresets(tasks::ImageRace& race);

    QMutex m_mutex;
    RaceRequest m_request;              // copied under m_mutex by start()
    tasks::ImageRace* m_race = nullptr; // while run() races, under m_mutex (for stop())
    std::atomic<bool> m_stop{false};
};

} // namespace il::app

Q_DECLARE_METATYPE(il::app::RaceTickUpdate)
Q_DECLARE_METATYPE(il::tasks::RaceEntry)
