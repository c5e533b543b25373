#include "ScriptedRuns.h"

#include "MainWindow.h"
#include "ModelJson.h"
#include "RunCompareDialog.h"
#include "RunList.h"
#include "RunListPanel.h"
#include "Session.h"

#include <QApplication>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QTableView>
#include <QTimer>

#include <cstdio>

namespace il::app {

namespace {

// How long a run's evaluation may take to arrive before the script goes on without it.
constexpr int kEvaluationWaitMs = 30000;

// The keys of given that known does not have, at any depth ("schedule.lr_mxa").
QStringList unknownKeys(const QJsonObject& given, const QJsonObject& known, const QString& prefix)
{
    QStringList unknown;
    for (auto it = given.begin(); it != given.end(); ++it) {
        if (!known.contains(it.key()))
            unknown << prefix + it.key();
        else if (it.value().isObject() && known.value(it.key()).isObject())
            unknown << unknownKeys(it.value().toObject(), known.value(it.key()).toObject(),
                                   prefix + it.key() + '.');
    }
    return unknown;
}

} // namespace

bool applyRunOverride(const QJsonObject& entry, TrainerConfig& config, QString* error)
{
    TrainerConfig merged = config;
    if (!io::trainerConfigFromJson(entry, merged, error)) return false;
    // trainerConfigFromJson ignores keys it does not know (newer files); a script's typo is an
    // error. Checked against the merged settings, so another optimizer's keys are known.
    const QStringList unknown = unknownKeys(entry, io::trainerConfigToJson(merged), {});
    if (!unknown.isEmpty()) {
        if (error)
            *error = QString("unknown setting%1 %2")
                         .arg(unknown.size() > 1 ? "s" : "", unknown.join(", "));
        return false;
    }
    config = merged;
    return true;
}

bool parseRunOverrides(const QByteArray& json, const TrainerConfig& base,
                       QList<QJsonObject>& entries, QString* error)
{
    auto fail = [error](const QString& why) {
        if (error) *error = why;
        return false;
    };
    QJsonParseError parse;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parse);
    if (parse.error != QJsonParseError::NoError)
        return fail(
            QString("not JSON (%1 at character %2)").arg(parse.errorString()).arg(parse.offset));
    if (!doc.isArray() || doc.array().isEmpty())
        return fail("expected a JSON array of settings objects, e.g. "
                    "[{\"schedule\":{\"lr_max\":0.01}},{\"schedule\":{\"lr_max\":0.03}}]");
    QList<QJsonObject> read;
    const QJsonArray array = doc.array();
    for (qsizetype i = 0; i < array.size(); ++i) {
        if (!array[i].isObject()) return fail(QString("run %1 is not a JSON object").arg(i + 1));
        TrainerConfig config = base;
        QString why;
        if (!applyRunOverride(array[i].toObject(), config, &why))
            return fail(QString("run %1: %2").arg(i + 1).arg(why));
        read << array[i].toObject();
    }
    entries = read;
    return true;
}

ScriptedRuns::ScriptedRuns(MainWindow& window, QList<QJsonObject> entries, qint64 steps)
    : QObject(&window), m_window(window), m_entries(std::move(entries)), m_steps(steps)
{
    Session* session = window.session();
    connect(session, &Session::progressed, this, &ScriptedRuns::onProgress);
    connect(session, &Session::trainingFinished, this, &ScriptedRuns::onTrainingFinished);
    connect(session, &Session::evaluated, this, &ScriptedRuns::onEvaluated);
}

void ScriptedRuns::start()
{
    m_base = m_window.session()->config();
    m_base.steps = m_steps; // each run's budget: its schedule spans the N steps
    m_next = 0;
    startNext();
}

void ScriptedRuns::startNext()
{
    if (m_next >= m_entries.size()) return compareLastTwo();
    Session* session = m_window.session();
    TrainerConfig config = m_base;
    QString why;
    if (!applyRunOverride(m_entries[m_next], config, &why))
        return emit failed(QString("run %1: %2").arg(m_next + 1).arg(why));
    ++m_next;
    // A new model, as Reset weights then Start make one (the run list begins a run).
    if (session->hasTrained()) session->resetWeights();
    session->setConfig(config);
    m_training = true;
    session->start();
    if (session->runState() == Session::RunState::Idle) { // refused (its message says why)
        m_training = m_awaitingEvaluation = false;
        emit failed(QString("run %1 did not start").arg(m_next));
    }
}

void ScriptedRuns::onProgress()
{
    Session* session = m_window.session();
    if (m_training && session->trainedSteps() >= m_steps) session->stop();
}

void ScriptedRuns::onTrainingFinished()
{
    if (!m_training) return;
    m_training = false;
    m_awaitingEvaluation = true; // Session::onFinished asks for it
    const int run = m_next;
    QTimer::singleShot(kEvaluationWaitMs, this, [this, run] {
        if (m_awaitingEvaluation && m_next == run) onEvaluated();
    });
}

void ScriptedRuns::onEvaluated()
{
    if (!m_awaitingEvaluation) return;
    m_awaitingEvaluation = false;
    // After the run list has recorded the evaluation (it listens first), and not inside the
    // signal: the next run resets the weights.
    QTimer::singleShot(0, this, &ScriptedRuns::startNext);
}

void ScriptedRuns::compareLastTwo()
{
    auto* panel = m_window.findChild<RunListPanel*>("runListPanel");
    auto* view = m_window.findChild<QTableView*>("runsTableView");
    const int count = view && view->model() ? view->model()->rowCount() : 0;
    if (panel && count >= 2) {
        view->clearSelection();
        for (int row : {count - 2, count - 1})
            view->selectionModel()->select(view->model()->index(row, 0),
                                           QItemSelectionModel::Select | QItemSelectionModel::Rows);
        m_comparison = panel->compareSelected();
    }
    emit finished();
}

void runScriptedRuns(MainWindow& window, QList<QJsonObject> entries, qint64 steps,
                     const QString& screenshot, QSize size, bool quit)
{
    auto* script = new ScriptedRuns(window, std::move(entries), steps);
    QObject::connect(script, &ScriptedRuns::failed, &window, [](const QString& error) {
        std::fprintf(stderr, "ironlearn-studio: --runs: %s\n", error.toUtf8().constData());
        QApplication::exit(1);
    });
    QObject::connect(
        script, &ScriptedRuns::finished, &window, [&window, script, screenshot, size, quit] {
            auto* runs =
                qobject_cast<RunList*>(window.findChild<QTableView*>("runsTableView")->model());
            for (int row = 0; runs && row < runs->count(); ++row) {
                const Run& run = runs->run(row);
                std::fprintf(
                    stderr, "ironlearn-studio: run %d: %lld steps, lr_max %g, %s\n", run.number,
                    static_cast<long long>(run.lastStep - run.firstStep),
                    static_cast<double>(run.config.schedule.lrMax),
                    run.metricsSummary.section(QLatin1Char('\n'), 0, 0).toUtf8().constData());
            }
            QWidget* shown = script->comparison();
            if (!shown) {
                std::fprintf(stderr, "ironlearn-studio: --runs: fewer than two runs to compare\n");
                shown = &window;
            } else if (size.isValid()) {
                shown->resize(size);
            }
            // Time for the dialog to lay out and draw its charts.
            QTimer::singleShot(500, &window, [&window, shown, screenshot, quit] {
                if (!screenshot.isEmpty() && !shown->grab().save(screenshot))
                    std::fprintf(stderr, "ironlearn-studio: cannot write %s\n",
                                 screenshot.toUtf8().constData());
                if (quit) {
                    window.session()->stop();
                    QApplication::exit(0);
                }
            });
        });
    QTimer::singleShot(200, script, &ScriptedRuns::start);
}

} // namespace il::app
