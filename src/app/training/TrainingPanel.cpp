#include "TrainingPanel.h"
#include "ui_TrainingPanel.h"

#include "Counting.h"
#include "Errors.h"
#include "LayerSpec.h"
#include "Session.h"
#include "TabularTask.h"
#include "TrainingPanelExtras.h"

#include <QLocale>
#include <QStandardItemModel>
#include <QTimer>

#include <algorithm>

namespace il::app {

namespace {

constexpr const char* kWeightDecay = "weight_decay"; // the setting weightDecaySpinBox edits
constexpr const char* kGridGroup = "grid_tables";    // the group whose lr gridLrSpinBox edits

const ScheduleKind kSchedules[] = {ScheduleKind::Constant, ScheduleKind::StepDecay,
                                   ScheduleKind::Cosine};

template <typename T, size_t N> int indexOf(const T (&values)[N], T v)
{
    for (size_t i = 0; i < N; ++i)
        if (values[i] == v) return static_cast<int>(i);
    return 0;
}

} // namespace

TrainingPanel::TrainingPanel(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::TrainingPanel>())
{
    m_ui->setupUi(this);
    QComboBox* optimizers = m_ui->optimizerComboBox;
    QString optimizerTips = optimizers->toolTip();
    for (const OptimizerType& type : optimizerTypes()) {
        optimizers->addItem(QString::fromUtf8(type.label), QString::fromLatin1(type.name));
        optimizers->setItemData(optimizers->count() - 1, QString::fromUtf8(type.description),
                                Qt::ToolTipRole);
        optimizerTips +=
            QString("\n%1: %2")
                .arg(QString::fromUtf8(type.label), QString::fromUtf8(type.description));
    }
    optimizers->setToolTip(optimizerTips);
    m_ui->scheduleComboBox->addItems({"constant", "step decay", "cosine annealing"});
    if (const ParameterGroupType* grid = findParameterGroup(kGridGroup)) {
        QStringList settings;
        for (const auto& [key, value] : grid->settings)
            settings << QString("%1 %2").arg(key).arg(value);
        m_ui->gridLrLabel->setText(QString("%1' rate:").arg(grid->label));
        m_ui->gridLrSpinBox->setToolTip(
            QString("%1 Shown for a stack with a hash grid. Its tables also train with %2 (as in "
                    "Instant NGP): each row is read by few pixels, so it takes bigger steps "
                    "than the network after it. 0: the learning rate above.")
                .arg(grid->help, settings.join(", ")));
    }

    for (QComboBox* c : {m_ui->optimizerComboBox, m_ui->scheduleComboBox, m_ui->budgetUnitComboBox})
        connect(c, &QComboBox::currentIndexChanged, this, &TrainingPanel::edited);
    for (QSpinBox* s : {m_ui->warmupSpinBox, m_ui->budgetSpinBox, m_ui->batchSizeSpinBox,
                        m_ui->patienceSpinBox, m_ui->seedSpinBox})
        connect(s, &QSpinBox::valueChanged, this, &TrainingPanel::edited);
    for (QDoubleSpinBox* s : {m_ui->learningRateSpinBox, m_ui->gridLrSpinBox, m_ui->clipSpinBox,
                              m_ui->weightDecaySpinBox, m_ui->labelSmoothingSpinBox})
        connect(s, &QDoubleSpinBox::valueChanged, this, &TrainingPanel::edited);
    connect(m_ui->validationSplitSpinBox, &QSpinBox::editingFinished, this,
            &TrainingPanel::validationEdited);
    // Cross-validation (tables): automatic (by the table's size), off, or a number of folds.
    m_ui->foldsComboBox->addItem("Automatic", -1);
    m_ui->foldsComboBox->addItem("Off: one validation split", 0);
    for (int k : {3, 5, 10})
        m_ui->foldsComboBox->addItem(QString("%1 folds").arg(k), k);
    connect(m_ui->foldsComboBox, &QComboBox::activated, this, &TrainingPanel::foldsEdited);
    connect(m_ui->deviceComboBox, &QComboBox::currentIndexChanged, this,
            &TrainingPanel::deviceEdited);
    connect(m_ui->tf32CheckBox, &QCheckBox::toggled, this, &TrainingPanel::tf32Edited);
    connect(m_ui->balancedClassesCheckBox, &QCheckBox::toggled, this, &TrainingPanel::edited);
    m_ui->deviceNoteLabel->setForegroundRole(QPalette::PlaceholderText);
    m_deviceToolTip = m_ui->deviceComboBox->toolTip();
}

TrainingPanel::~TrainingPanel() = default;

void TrainingPanel::setSession(Session* session)
{
    m_session = session;
    new TrainingPanelExtras(m_ui->formLayout, m_ui->tf32CheckBox, m_ui->scheduleComboBox, session,
                            this);
    loadDevices();
    connect(session, &Session::devicesChanged, this, &TrainingPanel::loadDevices);
    connect(session, &Session::deviceChanged, this, &TrainingPanel::showDevice);
    connect(session, &Session::modelChanged, this, &TrainingPanel::load);
    connect(session, &Session::specChanged, this, &TrainingPanel::showGridLr);
    connect(session, &Session::runStateChanged, this, &TrainingPanel::updateEnabled);
    connect(session, &Session::historyReset, this, &TrainingPanel::updateEnabled);
    // Continue on a spent budget raises it (Session::budgetSpent).
    connect(session, &Session::configChanged, this, &TrainingPanel::showBudget);
    connect(session, &Session::recipeApplied, this, &TrainingPanel::load);
    connect(session, &Session::trainingFinished, this, [this](const TrainingOutcome& outcome) {
        // A recovery from a stall lowered the learning rate: show the rate the next run uses.
        if (outcome.recoveries > 0) load();
        updatePlan();
    });
    load();
}

void TrainingPanel::load()
{
    m_loading = true;
    const TrainerConfig& c = m_session->config();
    m_ui->optimizerComboBox->setCurrentIndex(
        std::max(0, m_ui->optimizerComboBox->findData(QString::fromStdString(c.optimizer.name()))));
    m_ui->learningRateSpinBox->setValue(c.schedule.lrMax);
    m_ui->gridLrSpinBox->setValue(c.optimizer.group(kGridGroup).lr);
    showGridLr();
    m_ui->scheduleComboBox->setCurrentIndex(indexOf(kSchedules, c.schedule.kind));
    m_ui->warmupSpinBox->setValue(static_cast<int>(c.schedule.warmupSteps));
    showBudget();
    m_ui->batchSizeSpinBox->setValue(static_cast<int>(c.batchSize));
    const double split = m_session->taskOptions().valSplit;
    m_ui->validationSplitSpinBox->setValue(split < 0 ? -1 : static_cast<int>(split * 100 + 0.5));
    showFolds();
    m_ui->patienceSpinBox->setValue(c.patience);
    m_ui->clipSpinBox->setValue(c.clipNorm);
    showWeightDecay(c.optimizer);
    m_ui->labelSmoothingSpinBox->setValue(c.labelSmoothing);
    m_ui->balancedClassesCheckBox->setChecked(c.classWeighting == ClassWeighting::Balanced);
    // Only classification tables have classes to weigh; a model opened without its data
    // still shows the setting it trained with.
    m_ui->formLayout->setRowVisible(
        m_ui->balancedClassesCheckBox,
        m_session->classWeightingApplies() ||
            (!m_session->task() && c.classWeighting != ClassWeighting::None));
    m_ui->seedSpinBox->setValue(static_cast<int>(std::min<uint64_t>(c.seed, INT32_MAX)));
    m_loading = false;
    updateEnabled();
    updatePlan();
}

void TrainingPanel::showBudget()
{
    const TrainerConfig& c = m_session->config();
    const bool bySteps = c.epochs <= 0 && c.steps > 0;
    const int value = static_cast<int>(bySteps ? c.steps : std::max<int64_t>(c.epochs, 1));
    if (m_ui->budgetUnitComboBox->currentIndex() == (bySteps ? 1 : 0) &&
        m_ui->budgetSpinBox->value() == value)
        return; // as shown (the usual case: the edit came from here)
    const bool loading = m_loading;
    m_loading = true;
    m_ui->budgetUnitComboBox->setCurrentIndex(bySteps ? 1 : 0);
    m_ui->budgetSpinBox->setValue(value);
    m_loading = loading;
    updatePlan();
}

void TrainingPanel::loadDevices()
{
    if (!m_session) return;
    m_loading = true;
    QComboBox* combo = m_ui->deviceComboBox;
    combo->clear();
    combo->addItem("CPU \u2014 " + m_session->cpuName(), "cpu");
    const BackendStatus& cuda = m_session->cudaStatus();
    const bool probed = m_session->cudaProbed();
    const QString reason = QString::fromStdString(cuda.reason);
    QString cudaText = "NVIDIA GPU (CUDA) \u2014 ";
    QString why; // why CUDA cannot be chosen, for the note and the tooltips
    if (!probed) {
        cudaText += "looking for one\u2026";
        why = "Looking for an NVIDIA GPU\u2026";
    } else if (cuda.available) {
        cudaText += QString::fromStdString(cuda.device);
    } else {
        cudaText += "unavailable";
        why = "CUDA unavailable: " + reason;
    }
    combo->addItem(cudaText, "cuda");
    combo->setItemData(0, "Train on the CPU: " + m_session->cpuName() + ".", Qt::ToolTipRole);
    combo->setItemData(
        1, cuda.available ? "Train on " + QString::fromStdString(cuda.device) + "." : why,
        Qt::ToolTipRole);
    if (auto* model = qobject_cast<QStandardItemModel*>(combo->model()))
        model->item(1)->setEnabled(probed && cuda.available);
    combo->setToolTip(why.isEmpty() ? m_deviceToolTip : m_deviceToolTip + "\n\n" + why);
    m_ui->deviceNoteLabel->setNote(why);
    m_loading = false;
    showDevice();
}

void TrainingPanel::showDevice()
{
    if (!m_session) return;
    m_loading = true;
    const bool cuda = m_session->device().backend == "cuda";
    m_ui->deviceComboBox->setCurrentIndex(cuda ? 1 : 0);
    // TF32 is a CUDA setting: shown off for the CPU, remembered for the GPU.
    m_ui->tf32CheckBox->setChecked(cuda && m_session->tf32Wanted());
    m_loading = false;
    updateEnabled();
}

void TrainingPanel::deviceEdited()
{
    if (m_loading || !m_session) return;
    QString backend = m_ui->deviceComboBox->currentData().toString();
    if (backend == "cuda" && !(m_session->cudaProbed() && m_session->cudaStatus().available))
        backend = "cpu"; // a disabled item chosen anyway (from code): stay on the CPU
    m_session->setDevice(backend, m_session->tf32Wanted());
    showDevice();
}

void TrainingPanel::tf32Edited(bool on)
{
    if (m_loading || !m_session) return;
    m_session->setDevice(m_session->device().backend, on);
}

void TrainingPanel::edited()
{
    if (m_loading || !m_session) return;
    TrainerConfig c = m_session->config();
    const OptimizerType* type =
        findOptimizer(m_ui->optimizerComboBox->currentData().toString().toStdString());
    if (type && type != &c.optimizer.type()) {
        c.optimizer = c.optimizer.switchedTo(*type);
        m_loading = true;
        showWeightDecay(c.optimizer);
        m_loading = false;
    } else if (c.optimizer.has(kWeightDecay)) {
        c.optimizer.set(kWeightDecay, static_cast<float>(m_ui->weightDecaySpinBox->value()));
    }
    c.schedule.lrMax = static_cast<float>(m_ui->learningRateSpinBox->value());
    c.optimizer.setGroupLr(kGridGroup, static_cast<float>(m_ui->gridLrSpinBox->value()));
    c.schedule.kind = kSchedules[m_ui->scheduleComboBox->currentIndex()];
    c.schedule.warmupSteps = m_ui->warmupSpinBox->value();
    const bool bySteps = m_ui->budgetUnitComboBox->currentIndex() == 1;
    c.epochs = bySteps ? 0 : m_ui->budgetSpinBox->value();
    c.steps = bySteps ? m_ui->budgetSpinBox->value() : 0;
    c.batchSize = m_ui->batchSizeSpinBox->value();
    c.patience = m_ui->patienceSpinBox->value();
    c.clipNorm = static_cast<float>(m_ui->clipSpinBox->value());
    c.labelSmoothing = static_cast<float>(m_ui->labelSmoothingSpinBox->value());
    c.classWeighting =
        m_ui->balancedClassesCheckBox->isChecked() && m_session->classWeightingApplies()
            ? ClassWeighting::Balanced
            : ClassWeighting::None;
    c.seed = static_cast<uint64_t>(m_ui->seedSpinBox->value());
    m_session->setConfig(c);
    updatePlan();
}

void TrainingPanel::showWeightDecay(const OptimizerConfig& optimizer)
{
    QDoubleSpinBox* box = m_ui->weightDecaySpinBox;
    if (const OptimizerSetting* s = optimizer.type().setting(kWeightDecay)) {
        box->setRange(s->min, s->max);
        box->setValue(optimizer.value(kWeightDecay));
    } else {
        box->setValue(0);
    }
    box->setEnabled(m_session && m_session->runState() == Session::RunState::Idle &&
                    optimizer.has(kWeightDecay));
}

void TrainingPanel::showGridLr()
{
    bool used = false;
    try { // the shape-only plan: no network is built
        const auto plans = planLayerSpec(m_session->spec().toStdString(),
                                         std::max<int64_t>(1, m_session->inputWidth()),
                                         m_session->outputWidth(), m_session->vocab());
        for (const LayerPlan& p : plans)
            used =
                used || std::find(p.groups.begin(), p.groups.end(), kGridGroup) != p.groups.end();
    } catch (const EngineError&) {
        // A stack that cannot be built yet trains nothing: nothing to show.
    }
    m_ui->formLayout->setRowVisible(m_ui->gridLrSpinBox, used);
}

void TrainingPanel::validationEdited()
{
    if (m_loading || !m_session || !m_session->task()) return;
    tasks::TaskOptions options = m_session->taskOptions();
    const int percent = m_ui->validationSplitSpinBox->value();
    const double split = percent < 0 ? -1 : percent / 100.0;
    if (split == options.valSplit) return;
    options.valSplit = split;
    // A validation split chosen: it replaces cross-validation chosen before.
    if (split > 0 && options.folds > 0) options.folds = 0;
    options.seed = m_session->config().seed;
    QTimer::singleShot(0, this, [this, options] { m_session->setTaskOptions(options); });
}

void TrainingPanel::showFolds()
{
    const auto task = m_session->task();
    const bool table = task && task->type().crossValidates();
    m_ui->formLayout->setRowVisible(m_ui->foldsComboBox, table);
    const int folds = m_session->taskOptions().folds;
    m_ui->foldsComboBox->setCurrentIndex(std::max(0, m_ui->foldsComboBox->findData(folds)));
    // What "Automatic" means for this table.
    const int chosen = task ? task->folds() : 0;
    m_ui->foldsComboBox->setItemText(0, !table ? QString("Automatic")
                                        : chosen > 0
                                            ? QString("Automatic: %1 folds here").arg(chosen)
                                            : QString("Automatic: off (a validation split)"));
}

void TrainingPanel::foldsEdited()
{
    if (m_loading || !m_session || !m_session->task()) return;
    tasks::TaskOptions options = m_session->taskOptions();
    const int folds = m_ui->foldsComboBox->currentData().toInt();
    if (folds == options.folds) return;
    options.folds = folds;
    // Folds hold every row out in turn: a validation split chosen before gives way to them.
    if (folds > 0) options.valSplit = -1;
    options.seed = m_session->config().seed;
    QTimer::singleShot(0, this, [this, options] { m_session->setTaskOptions(options); });
}

void TrainingPanel::updatePlan()
{
    if (!m_session) return;
    const TrainerConfig& c = m_session->config();
    const int64_t planned = m_session->plannedSteps();
    if (planned <= 0) {
        m_ui->planLabel->setText(m_session->task() ? QString() : "Open data to plan a run.");
        return;
    }
    const auto& d = m_session->task()->data();
    const int64_t batch =
        c.batchSize <= 0 || c.batchSize >= d.trainRows ? d.trainRows : c.batchSize;
    const int64_t perEpoch = Trainer::stepsPerEpoch(d.trainRows, c.batchSize);
    QLocale l;
    QString plan = QString("Plan: <b>%1</b> of %2 (%3 per epoch, %4)")
                       .arg(tasks::countOf(planned, "step", l), tasks::countOf(batch, "example", l),
                            l.toString(static_cast<qlonglong>(perEpoch)),
                            tasks::countOf(d.trainRows, "training example", l));
    if (m_session->trainedSteps() > 0)
        plan +=
            QString("; %1 done").arg(l.toString(static_cast<qlonglong>(m_session->trainedSteps())));
    else if (const int folds = m_session->task()->folds(); folds > 0)
        // The budget is each fold's; the run on every row is as long as the folds choose.
        plan += QString(" for each of %1 folds (early stopping ends most sooner), then the model "
                        "they choose trained on every row")
                    .arg(folds);
    m_ui->planLabel->setText(plan + ".");
}

void TrainingPanel::updateEnabled()
{
    if (!m_session) return;
    const bool idle = m_session->runState() == Session::RunState::Idle;
    for (QWidget* w : findChildren<QWidget*>())
        if (w != m_ui->planLabel && !qobject_cast<QLabel*>(w)) w->setEnabled(idle);
    const bool crossEntropy = m_session->config().loss == LossKind::CrossEntropy;
    m_ui->labelSmoothingSpinBox->setEnabled(idle && crossEntropy);
    m_ui->weightDecaySpinBox->setEnabled(idle && m_session->config().optimizer.has(kWeightDecay));
    m_ui->tf32CheckBox->setEnabled(idle && m_session->device().backend == "cuda");
    m_ui->balancedClassesCheckBox->setEnabled(idle && m_session->classWeightingApplies());
    m_ui->validationSplitSpinBox->setEnabled(idle && !m_session->hasTrained() && m_session->task());
    m_ui->foldsComboBox->setEnabled(idle && !m_session->hasTrained() && m_session->task());
    updatePlan();
}

} // namespace il::app
