#include "RaceRunner.h"

#include "Errors.h"

#include <QElapsedTimer>

#include <cmath>

namespace il::app {

RaceRunner::RaceRunner(QObject* parent) : QThread(parent)
{
    qRegisterMetaType<il::app::RaceTickUpdate>();
    qRegisterMetaType<il::tasks::RaceEntry>();
}

RaceRunner::~RaceRunner()
{
    stop(false);
    wait();
}

bool RaceRunner::start(const RaceRequest& request)
{
    if (isRunning()) return false;
    {
        QMutexLocker lock(&m_mutex);
        m_request = request;
        m_stop = false;
    }
    QThread::start();
    return true;
}

void RaceRunner::stop(bool measure)
{
    QMutexLocker lock(&m_mutex);
    m_stop = true;
    if (m_race) m_race->cancel(measure);
}

std::vector<double> RaceRunner::checkpointsFor(double seconds)
{
    // Each checkpoint is measured on the whole picture after the run (a second or more for a
    // wide network at 512x512): at most about ten, at round times.
    double every = 60;
    for (const double step : {0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0})
        if (seconds / step <= 10.5) {
            every = step;
            break;
        }
    return tasks::evenRaceCheckpoints(seconds, every);
}

void RaceRunner::run()
{
    RaceRequest request;
    {
        QMutexLocker lock(&m_mutex);
        request = m_request;
    }
    QString error;
    try {
        std::shared_ptr<tasks::ImageTask> task = tasks::openImageTask(
            request.dataPath, request.dataBytes, request.options, nullptr, false, &error);
        if (!task) {
            emit raceFinished(m_stop,
                              error.isEmpty() ? request.dataPath + ": not an image" : error);
            return;
        }
        emit targetReady(task->trainingImage(), task->description());
        tasks::ImageRace race(
            task, {request.seconds, checkpointsFor(request.seconds), 0, request.seed, true});
        {
            QMutexLocker lock(&m_mutex);
            if (m_stop) race.cancel();
            m_race = &race;
        }
        runPresets(race);
    } catch (const std::bad_alloc&) {
        error = "the race ran out of memory";
    } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
    }
    {
        QMutexLocker lock(&m_mutex);
        m_race = nullptr;
    }
    emit raceFinished(m_stop, error);
}

void RaceRunner::runPresets(tasks::ImageRace& race)
{
    const QStringList presets = [this] {
        QMutexLocker lock(&m_mutex);
        return m_request.presets;
    }();
    for (int i = 0; i < presets.size() && !m_stop; ++i) {
        emit presetStarted(i, presets[i]);
        // The observer runs between two steps: a smoothed loss and a signal at most ten times
        // a second; previews at 96 pixels up to four times a second, as long as they take at
        // most 3% of the training time (ImageRace.h: their time counts in the budget).
        QElapsedTimer sinceTick;
        sinceTick.start();
        double smoothed = NAN;
        tasks::RaceObserver observer;
        observer.stepped = [&](const tasks::RaceTick& t) {
            if (std::isfinite(t.trainLoss) && t.trainLoss > 0)
                smoothed = std::isnan(smoothed) ? t.trainLoss : 0.9 * smoothed + 0.1 * t.trainLoss;
            if (sinceTick.elapsed() < 100) return;
            sinceTick.restart();
            emit ticked({i, t.step, t.elapsed,
                         std::isnan(smoothed) ? NAN : -10 * std::log10(smoothed),
                         t.elapsed > 0 ? static_cast<double>(t.step) / t.elapsed : 0});
        };
        observer.previewInterval = 0.25;
        observer.previewSide = 96;
        observer.previewShare = 0.03;
        observer.preview = [&](const tasks::RaceTick& t, const QImage& image) {
            emit previewReady(i, t.step, image);
        };
        observer.trained = [&] { emit presetTrained(i); };
        tasks::RaceEntry entry = race.run(presets[i], observer);
        emit presetFinished(i, entry);
    }
}

} // namespace il::app
