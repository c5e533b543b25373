#include "RaceWindow.h"

#include "Counting.h"
#include "ImageTask.h"
#include "RaceChart.h"
#include "RaceRunner.h"
#include "RaceTile.h"
#include "Session.h"
#include "ui_RaceWindow.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QFileInfo>
#include <QHeaderView>
#include <QLineSeries>

#include <cmath>

namespace il::app {

namespace {

enum Column { PresetColumn, ParametersColumn, RateColumn, PsnrColumn, SsimColumn, LayersColumn };

QString dB(double v)
{
    return std::isfinite(v) ? QString::number(v, 'f', 2) + " dB" : QString("–");
}

} // namespace

RaceWindow::RaceWindow(Session* session, QWidget* parent)
    : QWidget(parent, Qt::Window), m_ui(std::make_unique<Ui::RaceWindow>()), m_session(session),
      m_runner(new RaceRunner(this))
{
    m_ui->setupUi(this);
    m_chart = new RaceChart(m_ui->psnrChartView, this);
    for (const tasks::LayerPreset& preset : tasks::imageTaskType().presets()) {
        auto* box = new QCheckBox(preset.name, this);
        box->setObjectName(QString(preset.name).remove('-') + "PresetCheckBox");
        box->setProperty("preset", preset.name);
        box->setChecked(true);
        box->setToolTip(preset.note.isEmpty() ? preset.layers : preset.note + ": " + preset.layers);
        connect(box, &QCheckBox::toggled, this, &RaceWindow::updateControls);
        m_ui->presetsLayout->addWidget(box);
        m_checks.push_back(box);
    }
    QTableWidget* table = m_ui->resultsTableWidget;
    table->setColumnCount(6);
    table->setHorizontalHeaderLabels(
        {"Preset", "Parameters", "Steps/s", "Final PSNR", "SSIM", "Layers"});
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setSectionResizeMode(LayersColumn, QHeaderView::Stretch);
    table->setWordWrap(false);

    connect(m_ui->startButton, &QPushButton::clicked, this, &RaceWindow::startRace);
    connect(m_ui->stopButton, &QPushButton::clicked, this, &RaceWindow::stopRace);
    connect(m_runner, &RaceRunner::targetReady, this, &RaceWindow::onTarget);
    connect(m_runner, &RaceRunner::presetStarted, this, &RaceWindow::onPresetStarted);
    connect(m_runner, &RaceRunner::ticked, this, &RaceWindow::onTick);
    connect(m_runner, &RaceRunner::previewReady, this, &RaceWindow::onPreview);
    connect(m_runner, &RaceRunner::presetTrained, this, &RaceWindow::onPresetTrained);
    connect(m_runner, &RaceRunner::presetFinished, this, &RaceWindow::onPresetFinished);
    connect(m_runner, &RaceRunner::raceFinished, this, &RaceWindow::onRaceFinished);
    connect(session, &Session::datasetOpened, this, &RaceWindow::onDataChanged);
    connect(session, &Session::modelChanged, this, &RaceWindow::onDataChanged);
    connect(session, &Session::runStateChanged, this, &RaceWindow::updateControls);
    updateControls();
}

RaceWindow::~RaceWindow()
{
    disconnect(m_runner, nullptr, this, nullptr);
    m_runner->stop(false);
    m_runner->wait();
    if (m_session) m_session->setRacing(false);
}

bool RaceWindow::isRacing() const
{
    return m_racing;
}

bool RaceWindow::startRace()
{
    if (isRacing() || !m_session) return false;
    if (!m_session->isKind(tasks::imageTaskType()) || !m_session->task()) {
        showMessage("Open a picture first (File > Open Dataset or Samples): the presets race on "
                    "it.",
                    true);
        return false;
    }
    if (m_session->runState() != Session::RunState::Idle) {
        showMessage("Your model is training. Stop it first so the race has the CPU to itself; "
                    "your model and its training stay as they are.",
                    true);
        return false;
    }
    RaceRequest request;
    for (QCheckBox* box : m_checks)
        if (box->isChecked()) request.presets << box->property("preset").toString();
    if (request.presets.isEmpty()) {
        showMessage("Check at least one preset.", true);
        return false;
    }
    request.dataPath = m_session->dataPath();
    request.dataBytes = m_session->dataBytes();
    request.options = m_session->taskOptions();
    request.seconds = m_ui->secondsSpinBox->value();
    request.seed = m_session->config().seed;
    clearResults();
    m_presets = request.presets;
    m_seconds = request.seconds;
    m_finalPsnr.assign(static_cast<size_t>(m_presets.size()), NAN);
    for (const QString& preset : m_presets) {
        auto* tile = new RaceTile(preset, m_ui->tilesWidget);
        tile->setCaption("waits its turn");
        m_ui->tilesLayout->addWidget(tile, 1);
        m_tiles.push_back(tile);
    }
    m_chart->reset(m_presets, m_seconds);
    m_runner->wait(); // the last race's thread, ending after its final signal
    m_racing = m_runner->start(request);
    m_session->setRacing(m_racing);
    showMessage({}, false);
    m_ui->statusLabel->setText("Opening the picture…");
    updateControls();
    return true;
}

void RaceWindow::stopRace()
{
    if (!isRacing()) return;
    m_runner->stop();
    m_ui->statusLabel->setText("Stopping…");
}

void RaceWindow::closeEvent(QCloseEvent* event)
{
    stopRace();
    event->accept();
}

void RaceWindow::onTarget(const QImage& image, const QString& description)
{
    m_target = new RaceTile("Picture", m_ui->tilesWidget);
    m_target->setImage(image);
    m_target->setCaption(QString("%1×%2, the target").arg(image.width()).arg(image.height()));
    m_target->setToolTip(description);
    m_ui->tilesLayout->insertWidget(0, m_target, 1);
}

void RaceWindow::onPresetStarted(int index, const QString& preset)
{
    m_running = index;
    m_lastEstimateAt = -1;
    m_tiles[static_cast<size_t>(index)]->setHighlighted(true);
    m_tiles[static_cast<size_t>(index)]->setCaption("starting…");
    m_ui->statusLabel->setText(
        QString("Racing <b>%1</b> (%2 of %3)").arg(preset).arg(index + 1).arg(m_presets.size()));
}

void RaceWindow::onTick(const RaceTickUpdate& tick)
{
    if (tick.index != m_running) return;
    RaceTile* tile = m_tiles[static_cast<size_t>(tick.index)];
    tile->setCaption(QString("%1 s of %2 s · %3%4")
                         .arg(tick.elapsed, 0, 'f', 1)
                         .arg(m_seconds, 0, 'g', 4)
                         .arg(tasks::countOf(tick.step, "step"))
                         .arg(std::isfinite(tick.psnrEstimate)
                                  ? QString(" · ≈%1 dB").arg(tick.psnrEstimate, 0, 'f', 1)
                                  : QString()));
    // A chart point every ~0.1 s of training (the ticks come ten times a second).
    if (tick.elapsed >= m_lastEstimateAt + 0.09) {
        m_lastEstimateAt = tick.elapsed;
        m_chart->addEstimate(tick.index, tick.elapsed, tick.psnrEstimate);
    }
}

void RaceWindow::onPresetTrained(int index)
{
    m_ui->statusLabel->setText(QString("Measuring <b>%1</b>'s checkpoints…").arg(m_presets[index]));
}

void RaceWindow::onPreview(int index, qint64 step, const QImage& image)
{
    (void)step;
    if (index >= 0 && index < static_cast<int>(m_tiles.size()))
        m_tiles[static_cast<size_t>(index)]->setImage(image);
}

void RaceWindow::onPresetFinished(int index, const tasks::RaceEntry& entry)
{
    RaceTile* tile = m_tiles[static_cast<size_t>(index)];
    tile->setHighlighted(false);
    if (!entry.reconstruction.isNull()) tile->setImage(entry.reconstruction);
    const bool measured = std::isfinite(entry.psnr);
    const QString steps = tasks::countOf(entry.steps, "step");
    QString caption = measured ? QString("<b>%1</b> · SSIM %2 · %3")
                                     .arg(dB(entry.psnr))
                                     .arg(entry.ssim, 0, 'f', 3)
                                     .arg(steps)
                               : steps + ", not measured";
    if (entry.reason == StopReason::Cancelled)
        caption += QString("<br>stopped at %1 s").arg(entry.seconds, 0, 'f', 1);
    else if (entry.reason != StopReason::TimeBudget)
        caption += "<br>" + QString::fromStdString(entry.message).toHtmlEscaped();
    tile->setCaption(caption);
    if (measured) {
        m_chart->setMeasured(index, entry);
        m_finalPsnr[static_cast<size_t>(index)] = entry.psnr;
        addTableRow(entry);
    } else {
        m_chart->clearEstimates(index);
    }
    m_running = -1;
}

void RaceWindow::onRaceFinished(bool stopped, const QString& error)
{
    m_racing = false;
    m_running = -1;
    for (size_t i = 0; i < m_tiles.size(); ++i)
        if (m_tiles[i]->caption() == "waits its turn") m_tiles[i]->setCaption("did not run");
    if (m_session) m_session->setRacing(false);
    if (!error.isEmpty()) {
        showMessage("The race failed: " + error, true);
        m_ui->statusLabel->setText("Failed");
    } else {
        markWinner(stopped);
    }
    updateControls();
}

void RaceWindow::markWinner(bool stopped)
{
    int best = -1;
    for (size_t i = 0; i < m_finalPsnr.size(); ++i)
        if (std::isfinite(m_finalPsnr[i]) &&
            (best < 0 || m_finalPsnr[i] > m_finalPsnr[static_cast<size_t>(best)]))
            best = static_cast<int>(i);
    if (best < 0) {
        m_ui->statusLabel->setText("Stopped before any preset was measured");
        return;
    }
    const QString name = m_presets[best];
    m_tiles[static_cast<size_t>(best)]->setTitle(name + (stopped ? "" : " — sharpest"));
    const QString psnr = dB(m_finalPsnr[static_cast<size_t>(best)]);
    m_ui->statusLabel->setText(
        stopped ? QString("Stopped; best so far: <b>%1</b> at %2").arg(name, psnr)
                : QString("<b>%1</b> is sharpest: %2 after %3 s")
                      .arg(name, psnr)
                      .arg(m_seconds, 0, 'g', 4));
    QTableWidget* table = m_ui->resultsTableWidget;
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->item(r, PresetColumn)->text() == name)
            for (int c = 0; c < table->columnCount(); ++c) {
                QFont font = table->item(r, c)->font();
                font.setBold(true);
                table->item(r, c)->setFont(font);
            }
}

void RaceWindow::addTableRow(const tasks::RaceEntry& entry)
{
    QTableWidget* table = m_ui->resultsTableWidget;
    const int row = table->rowCount();
    table->insertRow(row);
    const auto set = [&](int column, const QString& text, bool right) {
        auto* item = new QTableWidgetItem(text);
        if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table->setItem(row, column, item);
        return item;
    };
    set(PresetColumn, entry.preset, false);
    set(ParametersColumn, QLocale().toString(qint64(entry.parameters)), true);
    set(RateColumn, QString::number(entry.stepsPerSecond(), 'f', 1), true);
    set(PsnrColumn, dB(entry.psnr), true);
    set(SsimColumn, QString::number(entry.ssim, 'f', 4), true);
    set(LayersColumn, QString::fromStdString(entry.layers), false)
        ->setToolTip(QString::fromStdString(entry.layers));
}

void RaceWindow::onDataChanged()
{
    if (isRacing()) {
        stopRace();
        showMessage("Stopped: other data was opened. The results so far stay below.", false);
    }
    updateControls();
}

void RaceWindow::clearResults()
{
    for (RaceTile* tile : m_tiles)
        delete tile;
    m_tiles.clear();
    delete m_target;
    m_target = nullptr;
    m_ui->resultsTableWidget->setRowCount(0);
    m_presets.clear();
    m_finalPsnr.clear();
}

void RaceWindow::showMessage(const QString& text, bool error)
{
    m_ui->messageLabel->setText(text);
    m_ui->messageLabel->setStyleSheet(error ? "color: #d33;" : QString());
    m_ui->messageLabel->setVisible(!text.isEmpty());
}

void RaceWindow::updateControls()
{
    const bool racing = isRacing();
    bool any = false;
    for (QCheckBox* box : m_checks) {
        box->setEnabled(!racing);
        any = any || box->isChecked();
    }
    const bool image = m_session && m_session->isKind(tasks::imageTaskType()) && m_session->task();
    m_ui->secondsSpinBox->setEnabled(!racing);
    m_ui->startButton->setEnabled(!racing && any && image);
    m_ui->stopButton->setEnabled(racing);
    if (!racing && m_session)
        setWindowTitle("Race presets — " + QFileInfo(m_session->dataPath()).fileName());
}

} // namespace il::app
