#include "StudioHelp.h"

#include "ConceptHelp.h"
#include "HelpDialogs.h"
#include "Samples.h"
#include "Session.h"
#include "StudioSettings.h"
#include "StudioTabs.h"
#include "WelcomePage.h"

#include <QAction>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace il::app {

namespace {

// Which controls lead to which concept page.
struct ConceptLink {
    const char* control;
    const char* page; // a Concept id
};
const ConceptLink kConceptLinks[] = {
    {"lossTitleLabel", "loss"},
    {"validationSplitSpinBox", "validation"},
    {"foldsComboBox", "cross-validation"},
    {"patienceSpinBox", "validation"},
    {"learningRateSpinBox", "learning-rate"},
    {"gridLrSpinBox", "learning-rate"},
    {"scheduleComboBox", "learning-rate"},
    {"warmupSpinBox", "learning-rate"},
    {"labelSmoothingSpinBox", "label-smoothing"},
    {"temperatureSlider", "temperature"},
    {"imageMetricLabel", "psnr"},
    {"balancedClassesCheckBox", "class-weights"},
    {"networkView", "hidden-units"},
};

} // namespace

StudioHelp::StudioHelp(QMainWindow* window, Session* session, QMenu* helpMenu)
    : QObject(window), m_window(window), m_session(session), m_stack(new QStackedWidget),
      m_welcome(new WelcomePage), m_links(new ConceptLinks(this))
{
    m_hint = makeHintBanner(); // (sets m_hintLabel too)
    setObjectName("studioHelp");
    // The studio's panels with the banner above them, and the welcome page, in one stack.
    auto* work = new QWidget;
    work->setObjectName("studioPage");
    auto* layout = new QVBoxLayout(work);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_hint);
    layout->addWidget(window->takeCentralWidget(), 1);
    m_stack->setObjectName("centralStackedWidget");
    m_stack->addWidget(work);
    m_stack->addWidget(m_welcome);
    window->setCentralWidget(m_stack);

    connect(m_welcome, &WelcomePage::sampleChosen, this, &StudioHelp::startGuided);
    connect(m_welcome, &WelcomePage::openFileRequested, this, [this] {
        if (auto* open = m_window->findChild<QAction*>("actionOpenDataset")) open->trigger();
    });
    connect(m_welcome, &WelcomePage::closeRequested, this, &StudioHelp::closeWelcome);
    // The View menu's tabs (Ctrl+1...) leave the welcome page.
    for (const StudioTab& tab : studioTabs())
        if (auto* show = window->findChild<QAction*>(studioTabActionName(tab)))
            connect(show, &QAction::triggered, this, &StudioHelp::closeWelcome);
    connect(m_session, &Session::datasetOpened, this, &StudioHelp::onDataOpened);
    // A file that fails says why in the Data panel: the welcome page makes way for it.
    connect(m_session, &Session::datasetFailed, this, &StudioHelp::closeWelcome);
    connect(m_session, &Session::modelFailed, this, &StudioHelp::closeWelcome);
    connect(m_session, &Session::modelOpened, this, [this] {
        m_guidedSample.clear();
        m_hint->hide();
        closeWelcome();
    });
    buildMenu(helpMenu);
    linkConcepts();
}

void StudioHelp::buildMenu(QMenu* helpMenu)
{
    QAction* about = helpMenu->actions().value(helpMenu->actions().size() - 1);
    auto add = [&](const char* name, const QString& text, auto slot) {
        auto* action = new QAction(text, m_window);
        action->setObjectName(name);
        connect(action, &QAction::triggered, this, slot);
        helpMenu->insertAction(about, action);
        return action;
    };
    add("actionWelcome", "&Welcome", [this] { showWelcome(); });
    add("actionConcepts", "&Concepts\u2026", [this] { showConcepts(); });
    QAction* more = add("actionHelpOnControl", "&Help on This Control",
                        [this] { showConcepts(ConceptLinks::conceptForHelpKey()); });
    more->setShortcut(Qt::Key_F1);
    more->setToolTip("Opens the concept page of the control in focus, or of the one under the "
                     "mouse while its tooltip shows.");
    add("actionKeyboardShortcuts", "&Keyboard Shortcuts\u2026", [this] { showShortcuts(); });
    if (about) helpMenu->insertSeparator(about);
}

QWidget* StudioHelp::makeHintBanner()
{
    // The frame sits in a holder with the margins, so the panels below keep theirs (and the
    // window its minimum width).
    auto* holder = new QWidget;
    holder->setObjectName("hintBanner");
    auto* frame = new QFrame;
    frame->setObjectName("hintFrame");
    frame->setStyleSheet("#hintFrame { background: palette(alternate-base); border: 1px solid "
                         "palette(highlight); border-radius: 4px; }");
    m_hintLabel = new QLabel;
    m_hintLabel->setObjectName("hintLabel");
    m_hintLabel->setWordWrap(true);
    m_hintLabel->setTextFormat(Qt::RichText);
    auto* close = new QToolButton;
    close->setObjectName("hintCloseButton");
    close->setText("\u2715");
    close->setAutoRaise(true);
    close->setToolTip("Dismiss this hint");
    close->setAccessibleName("Dismiss hint");
    close->setFocusPolicy(Qt::StrongFocus);
    connect(close, &QToolButton::clicked, holder, &QWidget::hide);
    auto* row = new QHBoxLayout(frame);
    row->setContentsMargins(10, 6, 4, 6);
    row->addWidget(m_hintLabel, 1);
    row->addWidget(close, 0, Qt::AlignTop);
    auto* margins = new QVBoxLayout(holder);
    margins->setContentsMargins(6, 6, 6, 0);
    margins->addWidget(frame);
    holder->hide();
    return holder;
}

void StudioHelp::linkConcepts()
{
    for (const ConceptLink& link : kConceptLinks) {
        auto* control = m_window->findChild<QWidget*>(link.control);
        if (control)
            m_links->link(control, link.page);
        else
            qWarning("StudioHelp: no control named %s for the concept %s", link.control, link.page);
    }
}

bool StudioHelp::showWelcomeOnFirstStart()
{
    if (settings::welcomeSeen()) return false;
    showWelcome();
    return true;
}

void StudioHelp::showWelcome()
{
    settings::setWelcomeSeen(true);
    m_stack->setCurrentWidget(m_welcome);
    m_welcome->setFocus();
}

void StudioHelp::closeWelcome()
{
    if (!isWelcomeShown()) return;
    m_stack->setCurrentIndex(0);
    if (auto* tabs = m_window->findChild<QWidget*>("setupTabWidget")) tabs->setFocus();
}

bool StudioHelp::isWelcomeShown() const
{
    return m_stack->currentWidget() == m_welcome;
}

void StudioHelp::startGuided(const QString& sample)
{
    auto* action = m_window->findChild<QAction*>("actionSample_" + sample);
    if (!action) return; // a build without samples: the welcome's text says what to open instead
    // Asks about unsaved training (and may open the sample only after a save), or, while
    // training, says in the status bar why nothing opens, as the Samples menu does; datasetOpened
    // shows the hint when it is this sample that opens.
    m_guidedSample = sample;
    action->trigger();
}

void StudioHelp::onDataOpened()
{
    const QString path = m_session->dataPath();
    const QString sample = io::isSamplePath(path) ? QFileInfo(path).completeBaseName() : "";
    const QString hint = sample == m_guidedSample ? hintFor(sample) : QString();
    m_guidedSample.clear();
    m_hintLabel->setText(hint);
    m_hint->setVisible(!hint.isEmpty());
    closeWelcome();
}

QString StudioHelp::hintFor(const QString& sample)
{
    if (sample == "iris")
        return "<b>Iris flowers.</b> Press <b>Start</b> (F5). Watch the loss fall on the chart; "
               "then the confusion matrix below the charts fills its diagonal, where every "
               "flower named right lands. The validation rows were kept out of training: they "
               "show how the network does on flowers it has not seen.";
    if (sample == "camera")
        return "<b>A photograph.</b> Press <b>Start</b> (F5). Watch the loss fall on the chart; "
               "the reconstruction on the right sharpens from a blur while its PSNR (in dB) "
               "climbs: around 30 dB it looks close to the original.";
    if (sample == "names-ssa2018")
        return "<b>Baby names.</b> Press <b>Start</b> (F5). Watch the training and validation "
               "loss fall together. Then press <b>Generate</b> and move the temperature: low "
               "gives familiar names, high ones wilder inventions; NEW marks names that are not "
               "in the training file.";
    return {};
}

ConceptsDialog* StudioHelp::showConcepts(const QString& id)
{
    if (!m_concepts) m_concepts = new ConceptsDialog(m_window);
    m_concepts->showConcept(id);
    m_concepts->show();
    m_concepts->raise();
    m_concepts->activateWindow();
    return m_concepts;
}

ShortcutsDialog* StudioHelp::showShortcuts()
{
    if (!m_shortcuts) m_shortcuts = new ShortcutsDialog(m_window);
    m_shortcuts->refresh();
    m_shortcuts->show();
    m_shortcuts->raise();
    m_shortcuts->activateWindow();
    return m_shortcuts;
}

} // namespace il::app
