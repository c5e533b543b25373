#include "TrainingPanelExtras.h"

#include "Session.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSpinBox>
#include <QThread>

namespace il::app {

namespace {

int rowOf(QFormLayout* form, QWidget* widget)
{
    int row = -1;
    QFormLayout::ItemRole role;
    form->getWidgetPosition(widget, &row, &role);
    return row;
}

} // namespace

TrainingPanelExtras::TrainingPanelExtras(QFormLayout* form, QWidget* deviceRowWidget,
                                         QWidget* scheduleWidget, Session* session, QWidget* parent)
    : QObject(parent), m_form(form), m_session(session)
{
    const int cores = std::max(1, QThread::idealThreadCount());
    m_threads = new QSpinBox(parent);
    m_threads->setObjectName("cpuThreadsSpinBox");
    m_threads->setRange(0, std::max(cores, 64));
    m_threads->setSpecialValueText(QString("all cores (%1)").arg(cores));
    m_threads->setToolTip(
        "How many threads the CPU trains with. All cores is fastest on a "
        "quiet machine; fewer leave cores for other work. The weights a run ends with do not "
        "depend on it. Takes effect when the next run starts.");
    form->insertRow(rowOf(form, deviceRowWidget) + 1, "CPU threads:", m_threads);

    m_stepRow = new QWidget(parent);
    m_stepRow->setObjectName("stepDecayRow");
    auto* row = new QHBoxLayout(m_stepRow);
    row->setContentsMargins(0, 0, 0, 0);
    m_stepEvery = new QSpinBox(m_stepRow);
    m_stepEvery->setObjectName("stepEverySpinBox");
    m_stepEvery->setRange(1, 100000000);
    m_stepEvery->setPrefix("every ");
    m_stepEvery->setSuffix(" steps");
    m_stepEvery->setToolTip("Step decay: the learning rate drops every this many steps.");
    m_gamma = new QDoubleSpinBox(m_stepRow);
    m_gamma->setObjectName("gammaSpinBox");
    m_gamma->setRange(0.01, 1);
    m_gamma->setDecimals(2);
    m_gamma->setSingleStep(0.05);
    m_gamma->setPrefix("× ");
    m_gamma->setToolTip("Step decay: the factor γ the learning rate is multiplied by at each "
                        "drop: 0.5 halves it.");
    row->addWidget(m_stepEvery, 1);
    row->addWidget(m_gamma, 1);
    form->insertRow(rowOf(form, scheduleWidget) + 1, "Step decay:", m_stepRow);

    connect(m_threads, &QSpinBox::valueChanged, this,
            [this](int threads) { m_session->setCpuThreads(threads); });
    connect(m_stepEvery, &QSpinBox::valueChanged, this, &TrainingPanelExtras::edited);
    connect(m_gamma, &QDoubleSpinBox::valueChanged, this, &TrainingPanelExtras::edited);
    connect(session, &Session::configChanged, this, &TrainingPanelExtras::load);
    connect(session, &Session::modelChanged, this, &TrainingPanelExtras::load);
    connect(session, &Session::runStateChanged, this, &TrainingPanelExtras::load);
    load();
}

void TrainingPanelExtras::load()
{
    m_loading = true;
    const ScheduleConfig& s = m_session->config().schedule;
    m_threads->setValue(m_session->cpuThreads());
    m_stepEvery->setValue(static_cast<int>(std::min<int64_t>(s.stepEvery, m_stepEvery->maximum())));
    m_gamma->setValue(s.gamma);
    m_form->setRowVisible(m_stepRow, s.kind == ScheduleKind::StepDecay);
    const bool idle = m_session->runState() == Session::RunState::Idle;
    m_threads->setEnabled(idle);
    m_stepRow->setEnabled(idle);
    m_loading = false;
}

void TrainingPanelExtras::edited()
{
    if (m_loading) return;
    TrainerConfig c = m_session->config();
    c.schedule.stepEvery = m_stepEvery->value();
    c.schedule.gamma = static_cast<float>(m_gamma->value());
    m_session->setConfig(c);
}

} // namespace il::app
