#include "RunList.h"

#include "RunSettings.h"
#include "Session.h"

#include <QFileInfo>
#include <QIcon>
#include <QJsonArray>
#include <QLocale>
#include <QPainter>
#include <QPixmap>

namespace il::app {

namespace {

// Ghost colours, one a run in turn: distinct from the live curves' blue and orange.
const QColor kRunColours[] = {QColor(148, 103, 189), QColor(44, 160, 44),   QColor(214, 39, 40),
                              QColor(140, 86, 75),   QColor(227, 119, 194), QColor(127, 127, 127),
                              QColor(188, 189, 34),  QColor(23, 190, 207)};

// How a run ended, in a few words.
QString endingOf(const TrainingOutcome& outcome)
{
    if (outcome.failed && outcome.reason != StopReason::NonFinite) return "failed";
    switch (outcome.reason) {
    case StopReason::Finished:
        return "finished";
    case StopReason::TimeBudget:
        return "time limit";
    case StopReason::EarlyStopping:
        return "stopped early (validation)";
    case StopReason::TargetReached:
        return "target loss reached";
    case StopReason::Cancelled:
        return "stopped";
    case StopReason::NonFinite:
        return "diverged";
    case StopReason::DeviceFailure:
        return "device failed";
    }
    return {};
}

QIcon swatch(const QColor& colour)
{
    QPixmap pixmap(12, 12);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setPen(Qt::NoPen);
    p.setBrush(colour);
    p.drawRoundedRect(QRectF(1, 1, 10, 10), 2, 2);
    return QIcon(pixmap);
}

} // namespace

RunList::RunList(QObject* parent) : QAbstractTableModel(parent) {}

void RunList::setSession(Session* session)
{
    m_session = session;
    connect(session, &Session::runStateChanged, this, &RunList::onRunState);
    connect(session, &Session::progressed, this, &RunList::onProgress);
    connect(session, &Session::trainingFinished, this, &RunList::onFinished);
    connect(session, &Session::evaluated, this, &RunList::onEvaluated);
    connect(session, &Session::frameAdded, this, &RunList::onFrame);
    // The device's name comes from the worker's first answer, which a quick first Start can
    // overtake: the run's device is named again when it arrives.
    connect(session, &Session::devicesChanged, this, [this] {
        if (m_current < 0 || !m_runs[static_cast<size_t>(m_current)].running) return;
        m_runs[static_cast<size_t>(m_current)].device = m_session->deviceDescription();
        rowChanged(m_current);
    });
    // New data, another model, a new network or Reset weights: the next Start begins a run.
    // (A history cut back by a device failure mid-run keeps its run.)
    auto fresh = [this] {
        if (m_session->runState() != Session::RunState::Idle) return;
        if (m_current >= 0) {
            m_current = -1;
            emit ghostsChanged(); // the last run is an earlier run now
        }
    };
    connect(session, &Session::historyReset, this, fresh);
    connect(session, &Session::modelChanged, this, fresh);
}

QString RunList::currentDataKey() const
{
    if (!m_session || !m_session->task()) return {};
    const tasks::TaskOptions& o = m_session->taskOptions();
    const tasks::TaskType& type = m_session->task()->type();
    // What makes the task (its target, columns, channels, context), not how much of it trains.
    QStringList key{m_session->dataPath(), type.name(),       o.target, o.kind,
                    o.features.join(','),  o.ignore.join(',')};
    for (const tasks::KindSetting& s : type.settings())
        if (!s.amountOnly) key << s.name + "=" + QString::number(type.setting(o, s.name));
    return key.join('|');
}

void RunList::onRunState()
{
    const bool idle = m_session->runState() == Session::RunState::Idle;
    if (m_wasIdle && !idle) {
        if (m_current < 0)
            beginRun();
        else
            continueRun();
    }
    m_wasIdle = idle;
}

void RunList::beginRun()
{
    Run run;
    run.number = m_nextNumber++;
    run.dataKey = currentDataKey();
    run.dataName = QFileInfo(m_session->dataPath()).fileName();
    run.dataSummary = m_session->task() ? m_session->task()->description() : run.dataName;
    run.spec = m_session->spec();
    run.config = m_session->config();
    run.device = m_session->deviceDescription();
    run.firstStep = run.lastStep = m_session->trainedSteps();
    run.running = true;
    m_lastConfig = run.config;
    m_begunNow = true;
    run.colour = kRunColours[(run.number - 1) % std::size(kRunColours)];
    const int row = count();
    beginInsertRows({}, row, row);
    m_runs.push_back(std::move(run));
    m_current = row; // before the views hear of the row: it is the current run
    endInsertRows();
    emit ghostsChanged(); // the run before is an earlier run now
}

void RunList::continueRun()
{
    Run& run = m_runs[static_cast<size_t>(m_current)];
    // The settings that differ from the ones the run trained with last (the budget grows with
    // every Continue and is not a change). The run keeps the settings it began with.
    const TrainerConfig& now = m_session->config();
    const QLocale l;
    for (const RowPair& p : pairRows(configSettings(m_lastConfig), configSettings(now)))
        if (p.differs && p.key != "steps" && p.key != "epochs")
            run.changes << QString("at step %1: %2 %3 → %4")
                               .arg(l.toString(static_cast<qlonglong>(m_session->trainedSteps())),
                                    p.label, p.a, p.b);
    m_lastConfig = now;
    m_begunNow = false;
    run.config.steps = now.steps;
    run.config.epochs = now.epochs;
    run.running = true;
    run.ending.clear();
    rowChanged(m_current);
}

void RunList::onProgress(const TrainingUpdate& update)
{
    if (m_current < 0) return;
    Run& run = m_runs[static_cast<size_t>(m_current)];
    run.lastStep = update.step;
    m_lastElapsed = update.elapsed; // of this Continue; added to the run at its end
    if (!update.losses.empty()) run.trainLoss = update.losses.back().loss;
    for (const HistoryPoint& h : update.evaluations)
        run.valLoss = h.valLoss;
    emit dataChanged(index(m_current, StepsColumn), index(m_current, ResultColumn));
}

void RunList::onFinished(const TrainingOutcome& outcome)
{
    // (A Start refused before it ran, say for a broken stack, also ends with an outcome.)
    if (m_current < 0 || !m_runs[static_cast<size_t>(m_current)].running) return;
    Run& run = m_runs[static_cast<size_t>(m_current)];
    if (outcome.step == run.firstStep && m_begunNow) {
        // Not a step trained (the device could not start): no run to keep, the next Start
        // begins one.
        const int row = m_current;
        m_current = -1;
        beginRemoveRows({}, row, row);
        m_runs.erase(m_runs.begin() + row);
        endRemoveRows();
        --m_nextNumber;
        emit ghostsChanged();
        return;
    }
    run.running = false;
    run.ending = endingOf(outcome);
    run.lastStep = outcome.step;
    run.seconds += m_lastElapsed;
    m_lastElapsed = 0;
    if (!std::isnan(outcome.trainLoss)) run.trainLoss = outcome.trainLoss;
    if (!std::isnan(outcome.valLoss)) run.valLoss = outcome.valLoss;
    copyCurves(run);
    keepPicture(run);
    rowChanged(m_current);
    emit ghostsChanged();
}

void RunList::onEvaluated(const Evaluation& evaluation)
{
    if (m_current < 0) return; // a reopened model's first look: no run yet
    Run& run = m_runs[static_cast<size_t>(m_current)];
    run.metrics = evaluation.values;
    run.metricsSummary = evaluation.summary;
    run.names.clear();
    for (const QJsonValue& name : evaluation.values.value("examples").toArray())
        run.names << name.toString();
    rowChanged(m_current);
}

void RunList::onFrame()
{
    // The last picture of a run can come after its end; during a run the chart shows it live.
    if (m_current < 0 || m_runs[static_cast<size_t>(m_current)].running) return;
    keepPicture(m_runs[static_cast<size_t>(m_current)]);
    rowChanged(m_current);
}

void RunList::captureCurrent()
{
    if (m_current < 0) return;
    copyCurves(m_runs[static_cast<size_t>(m_current)]);
    keepPicture(m_runs[static_cast<size_t>(m_current)]);
}

void RunList::copyCurves(Run& run) const
{
    const LossHistory& h = m_session->history();
    run.train = h.trainSmoothed(kCurvePoints);
    run.validation = h.validation(kCurvePoints);
}

void RunList::keepPicture(Run& run) const
{
    const std::vector<TimelineFrame>& frames = m_session->timeline();
    if (frames.empty() || frames.back().image.isNull()) return;
    const QImage& image = frames.back().image;
    run.picture = image.width() > kPictureSide || image.height() > kPictureSide
                      ? image.scaled(kPictureSide, kPictureSide, Qt::KeepAspectRatio,
                                     Qt::SmoothTransformation)
                      : image;
}

std::vector<int> RunList::ghostRows() const
{
    std::vector<int> rows;
    if (!m_ghostsShown) return rows;
    const QString key = currentDataKey();
    for (int row = 0; row < count(); ++row) {
        const Run& run = m_runs[static_cast<size_t>(row)];
        if (row != m_current && run.ghost && run.dataKey == key && !run.train.isEmpty())
            rows.push_back(row);
    }
    return rows;
}

void RunList::setGhostsShown(bool shown)
{
    if (shown == m_ghostsShown) return;
    m_ghostsShown = shown;
    emit ghostsChanged();
}

void RunList::setGhost(int row, bool shown)
{
    Run& run = m_runs.at(static_cast<size_t>(row));
    if (run.ghost == shown) return;
    run.ghost = shown;
    emit dataChanged(index(row, NumberColumn), index(row, NumberColumn), {Qt::CheckStateRole});
    emit ghostsChanged();
}

void RunList::removeRun(int row)
{
    if (row < 0 || row >= count() || row == m_current) return; // the current run stays
    beginRemoveRows({}, row, row);
    m_runs.erase(m_runs.begin() + row);
    if (m_current > row) --m_current;
    endRemoveRows();
    emit ghostsChanged();
}

void RunList::rowChanged(int row)
{
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    emit runChanged(row);
}

// ---- the table ------------------------------------------------------------------------------

int RunList::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : count();
}

int RunList::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunList::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= count()) return {};
    const Run& run = m_runs[static_cast<size_t>(index.row())];
    const bool current = index.row() == m_current;
    switch (index.column()) {
    case NumberColumn:
        if (role == Qt::DisplayRole) return QString::number(run.number) + (current ? " ●" : "");
        if (role == Qt::CheckStateRole) return run.ghost ? Qt::Checked : Qt::Unchecked;
        if (role == Qt::DecorationRole) return swatch(run.colour);
        if (role == Qt::ToolTipRole)
            return current ? "The current run: the charts draw it live. Continue adds to it."
                           : "Tick to draw this run's loss curve faintly on the loss chart.";
        break;
    case StepsColumn:
        if (role == Qt::DisplayRole)
            return QLocale().toString(static_cast<qlonglong>(run.lastStep));
        if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case ResultColumn:
        if (role == Qt::DisplayRole) return run.running ? "training…" : runHeadline(run);
        if (role == Qt::ToolTipRole && !run.metricsSummary.isEmpty()) return run.metricsSummary;
        break;
    case SettingsColumn:
        if (role == Qt::DisplayRole) return run.dataName + " · " + runSummary(run);
        break;
    }
    if (role == Qt::ToolTipRole)
        return runTitle(run) + " on " + run.dataName + "\n" + runSummary(run) + "\n" + run.spec;
    return {};
}

bool RunList::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || index.column() != NumberColumn || role != Qt::CheckStateRole)
        return false;
    setGhost(index.row(), value.value<Qt::CheckState>() == Qt::Checked);
    return true;
}

Qt::ItemFlags RunList::flags(const QModelIndex& index) const
{
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    if (index.column() == NumberColumn) f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant RunList::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NumberColumn:
            return "Run";
        case StepsColumn:
            return "Steps";
        case ResultColumn:
            return "Result";
        case SettingsColumn:
            return "Data · settings";
        }
    }
    if (role == Qt::ToolTipRole && section == NumberColumn)
        return "Ticked runs are drawn faintly on the loss chart (with \"Show earlier runs\").";
    return {};
}

} // namespace il::app
