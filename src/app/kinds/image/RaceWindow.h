// The race view (Train > Race presets…): the image presets learn the open picture one after the
// other for the same time (RaceRunner, tasks::ImageRace), shown as tiles side by side (the
// picture, then one per preset, live while it trains), one PSNR-vs-seconds chart (RaceChart) and
// a table of what each reached.
//
// The race never touches the user's model: it trains its own on its own thread. It does not
// start while the user's model trains (an inline message says why), and the session refuses to
// start training while it runs. Opening other data stops it; closing the view stops it too (the
// results stay for when it opens again); destroying it stops the race and waits.
#pragma once

#include <QPointer>
#include <QWidget>

#include <memory>
#include <vector>

namespace Ui {
class RaceWindow;
}

class QCheckBox;

namespace il::tasks {
struct RaceEntry;
}

namespace il::app {

class RaceChart;
class RaceRunner;
class RaceTile;
class Session;
struct RaceTickUpdate;

class RaceWindow : public QWidget {
    Q_OBJECT
public:
    explicit RaceWindow(Session* session, QWidget* parent = nullptr);
    ~RaceWindow() override;

    bool isRacing() const;
    // Starts a race with the checked presets; false, with the reason shown inline, when it
    // cannot (no picture, the model is training, no preset checked).
    bool startRace();
    void stopRace();
    RaceChart* chart() const { return m_chart; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void onTarget(const QImage& image, const QString& description);
    void onPresetStarted(int index, const QString& preset);
    void onTick(const RaceTickUpdate& tick);
    void onPreview(int index, qint64 step, const QImage& image);
    void onPresetTrained(int index);
    void onPresetFinished(int index, const tasks::RaceEntry& entry);
    void onRaceFinished(bool stopped, const QString& error);
    void onDataChanged();
    void showMessage(const QString& text, bool error);
    void clearResults();
    void addTableRow(const tasks::RaceEntry& entry);
    // The best final PSNR: its tile's title, its row in bold, the status line.
    void markWinner(bool stopped);
    void updateControls();

    std::unique_ptr<Ui::RaceWindow> m_ui;
    QPointer<Session> m_session;
    RaceRunner* m_runner;
    RaceChart* m_chart;
    std::vector<QCheckBox*> m_checks;
    RaceTile* m_target = nullptr;
    std::vector<RaceTile*> m_tiles;  // one per preset of the race
    QStringList m_presets;           // of the race shown
    std::vector<double> m_finalPsnr; // per preset, NaN until measured
    double m_seconds = 0;
    bool m_racing = false;        // from startRace to raceFinished
    int m_running = -1;           // the preset training now
    double m_lastEstimateAt = -1; // seconds of the last chart point of the running preset
};

} // namespace il::app
