// Help where you are: the real MainWindow, offscreen, driven by object names. The welcome page
// shows on the first start only and each guided start opens its sample and says what to look
// at; Help > Concepts has a page for every topic; F1 on a control opens its concept page and
// the control's tooltip says so; Help > Keyboard Shortcuts lists the actions' shortcuts as they
// are now; charts keep out of the Tab order and the image views show their focus and zoom from
// the keyboard. The window and the helpers are StudioTestCase.h's.
#include "ConceptHelp.h"
#include "HelpDialogs.h"
#include "ImageView.h"
#include "StudioHelp.h"
#include "StudioTabs.h"
#include "StudioTestCase.h"
#include "WelcomePage.h"

#include <QChartView>
#include <QCommandLinkButton>
#include <QDir>
#include <QFile>
#include <QHelpEvent>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QToolButton>
#include <QToolTip>

using namespace il::app;

class TestStudioHelp : public studiotest::StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase() { isolateSettings("testStudioHelp"); }
    void init() { newWindow(); }
    void cleanup() { closeWindow(); }

    void welcomeShowsOnTheFirstStartOnly();
    void guidedStartOpensItsSampleAndHint_data();
    void guidedStartOpensItsSampleAndHint();
    void guidedStartAsksBeforeReplacingTraining();
    void welcomeWorksFromTheKeyboard();
    void welcomeAndHintFitTheSmallestWindow();
    void everyConceptHasAPage();
    void helpKeyOpensTheConceptOfTheFocusedControl();
    void helpKeyOpensTheConceptOfTheHoveredControl();
    void linkedToolTipsSayF1();
    void shortcutListFollowsTheActions();
    void everySetupTabFollowsTheTabList();
    void chartsTakeNoFocusAndImageViewsShowIt();

private:
    StudioHelp* help() const { return m_window->help(); }
    void activate()
    {
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window));
    }
    // The (non-empty) rows of the shortcut table as "where|what|keys".
    QStringList shortcutRows(ShortcutsDialog* dialog) const;
};

// The welcome page shows on a first start (no settings), and not on the next one.
void TestStudioHelp::welcomeShowsOnTheFirstStartOnly()
{
    QSettings().clear();
    QVERIFY(help()->showWelcomeOnFirstStart());
    QVERIFY(help()->isWelcomeShown());
    QVERIFY(help()->welcomePage()->isVisible());
    QVERIFY(!find<QWidget>("setupTabWidget")->isVisible());

    closeWindow();
    newWindow();
    QVERIFY(!help()->showWelcomeOnFirstStart());
    QVERIFY(!help()->isWelcomeShown());
    QVERIFY(!help()->welcomePage()->isVisible());
    QVERIFY(find<QWidget>("setupTabWidget")->isVisible());

    // Help > Welcome brings it back at any time.
    find<QAction>("actionWelcome")->trigger();
    QVERIFY(help()->welcomePage()->isVisible());
}

void TestStudioHelp::guidedStartOpensItsSampleAndHint_data()
{
    QTest::addColumn<QString>("button");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("lookAt");
    QTest::newRow("table") << "tableStartButton"
                           << ":/samples/iris.csv"
                           << "confusion matrix";
    QTest::newRow("image") << "imageStartButton"
                           << ":/samples/camera.png"
                           << "PSNR";
    QTest::newRow("names") << "namesStartButton"
                           << ":/samples/names-ssa2018.txt"
                           << "temperature";
}

// A guided start opens its sample through the Samples menu's action, closes the welcome page
// and leaves a hint that goes when dismissed, or when other data opens.
void TestStudioHelp::guidedStartOpensItsSampleAndHint()
{
    QFETCH(QString, button);
    QFETCH(QString, path);
    QFETCH(QString, lookAt);
    help()->showWelcome();
    auto* banner = find<QWidget>("hintBanner");
    QVERIFY(!banner->isVisible());
    QSignalSpy sampleAction(find<QAction>("actionSample_" + QFileInfo(path).completeBaseName()),
                            &QAction::triggered);
    find<QCommandLinkButton>(button)->click();
    QCOMPARE(sampleAction.count(), 1);
    QCOMPARE(session()->dataPath(), path);
    QVERIFY(!help()->isWelcomeShown());
    QVERIFY(banner->isVisible());
    const QString hint = find<QLabel>("hintLabel")->text();
    QVERIFY2(hint.contains("Start") && hint.contains(lookAt), qPrintable(hint));

    find<QToolButton>("hintCloseButton")->click();
    QVERIFY(!banner->isVisible());

    // Again, then other data: the hint was about the sample, so it goes.
    help()->showWelcome();
    find<QCommandLinkButton>(button)->click();
    QVERIFY(banner->isVisible());
    openSample("xor");
    QVERIFY(!banner->isVisible());
}

// Help > Welcome over unsaved training: a guided start asks first, as the Samples menu does.
void TestStudioHelp::guidedStartAsksBeforeReplacingTraining()
{
    openSample("xor");
    train(5);
    QVERIFY(session()->hasUnsavedTraining());
    find<QAction>("actionWelcome")->trigger();
    const int asked = Dialogs::questionCount();
    Dialogs::setNextAnswer(QMessageBox::Cancel);
    find<QCommandLinkButton>("tableStartButton")->click();
    QCOMPARE(Dialogs::questionCount(), asked + 1);
    QCOMPARE(session()->dataPath(), QString(":/samples/xor.csv"));
    QVERIFY(help()->isWelcomeShown());
    QVERIFY(!find<QWidget>("hintBanner")->isVisible());

    Dialogs::setNextAnswer(QMessageBox::Discard);
    find<QCommandLinkButton>("tableStartButton")->click();
    QCOMPARE(Dialogs::questionCount(), asked + 2);
    QCOMPARE(session()->dataPath(), QString(":/samples/iris.csv"));
    QVERIFY(find<QWidget>("hintBanner")->isVisible());
}

// Keyboard: the first start has focus, Tab walks the starts, Esc goes to the studio; "Open your
// own file…" is File > Open's dialog.
void TestStudioHelp::welcomeWorksFromTheKeyboard()
{
    activate();
    help()->showWelcome();
    QTRY_COMPARE(QApplication::focusWidget(), find<QWidget>("tableStartButton"));
    QStringList order;
    for (int i = 0; i < 5; ++i) {
        order << QApplication::focusWidget()->objectName();
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    }
    QCOMPARE(order, QStringList({"tableStartButton", "imageStartButton", "namesStartButton",
                                 "openOwnFileButton", "closeWelcomeButton"}));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Escape);
    QVERIFY(!help()->isWelcomeShown());
    help()->showWelcome();
    QTest::keyClick(m_window, Qt::Key_2, Qt::ControlModifier); // a tab of the studio
    QVERIFY(!help()->isWelcomeShown());
    QCOMPARE(find<QTabWidget>("setupTabWidget")->currentWidget(), find<QWidget>("modelPanel"));

    // A file that cannot be read: the welcome page makes way for the Data panel's message.
    help()->showWelcome();
    Dialogs::setNextFileName(QDir::temp().filePath("no-such-file-here.csv"));
    QTest::keyClick(find<QWidget>("openOwnFileButton"), Qt::Key_Space);
    QVERIFY(!help()->isWelcomeShown());
    QCOMPARE(find<QTabWidget>("setupTabWidget")->currentWidget(), find<QWidget>("datasetPanel"));
    QVERIFY(find<QWidget>("datasetPanel")->isVisible());

    help()->showWelcome();
    Dialogs::setNextFileName(":/samples/wine.csv");
    QTest::keyClick(find<QWidget>("openOwnFileButton"), Qt::Key_Space);
    QCOMPARE(session()->dataPath(), QString(":/samples/wine.csv"));
    QVERIFY(!help()->isWelcomeShown());
    QVERIFY(!find<QWidget>("hintBanner")->isVisible()); // no hint for the user's own file
}

// The setup tabs are studioTabs(), in its order: each is a page of the tab widget under its
// numbered title, with a View action on Ctrl+N that shows it (and leaves the welcome page), a
// name for --tab, and its paragraph in the studio guide.
void TestStudioHelp::everySetupTabFollowsTheTabList()
{
    const std::vector<StudioTab>& tabs = studioTabs();
    auto* widget = find<QTabWidget>("setupTabWidget");
    QCOMPARE(widget->count(), int(tabs.size()));
    QFile file(IRONLEARN_FIXTURES "/../../docs/guide/studio.md");
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString guide = QString::fromUtf8(file.readAll());
    for (size_t i = 0; i < tabs.size(); ++i) {
        const int at = static_cast<int>(i);
        QWidget* page = widget->widget(at);
        QCOMPARE(page->objectName(), tabs[i].objectName);
        QCOMPARE(widget->tabText(at), studioTabTitle(i));
        QCOMPARE(widget->tabToolTip(at), tabs[i].toolTip);
        QCOMPARE(studioTab(tabs[i].id.toUpper()), &tabs[i]);
        help()->showWelcome();
        auto* show = find<QAction>(studioTabActionName(tabs[i]));
        QCOMPARE(show->shortcut(), QKeySequence(QString("Ctrl+%1").arg(i + 1)));
        show->trigger();
        QVERIFY(!help()->isWelcomeShown());
        QCOMPARE(widget->currentWidget(), page);
        QVERIFY2(
            guide.contains("**" + studioTabTitle(i) + ".**"),
            qPrintable("docs/guide/studio.md has no paragraph \"**" + studioTabTitle(i) + ".**\""));
    }
    QVERIFY(!studioTab("no-such-tab"));
}

// At 1024x700 every part of the welcome page shows whole, and a hint does not grow the window.
void TestStudioHelp::welcomeAndHintFitTheSmallestWindow()
{
    m_window->resize(1024, 700);
    help()->showWelcome();
    QTRY_COMPARE(m_window->size(), QSize(1024, 700));
    QWidget* page = help()->welcomePage();
    for (QWidget* w : page->findChildren<QWidget*>()) {
        if (!w->isVisible() || w->objectName().isEmpty() || w->objectName().endsWith("Column"))
            continue;
        const QRect inPage(w->mapTo(page, QPoint(0, 0)), w->size());
        QVERIFY2(page->rect().contains(inPage), qPrintable(w->objectName()));
        const int needed =
            w->hasHeightForWidth() ? w->heightForWidth(w->width()) : w->minimumSizeHint().height();
        QVERIFY2(w->height() >= needed, qPrintable(w->objectName()));
    }
    find<QCommandLinkButton>("imageStartButton")->click();
    auto* hint = find<QLabel>("hintLabel");
    QTRY_VERIFY(hint->isVisible());
    QApplication::processEvents();
    QCOMPARE(m_window->size(), QSize(1024, 700));
    QVERIFY(hint->height() >= hint->heightForWidth(hint->width()));
}

// Help > Concepts lists every topic, and each has a page of 80 to 200 words.
void TestStudioHelp::everyConceptHasAPage()
{
    const QStringList expected{"loss",       "validation",      "cross-validation", "learning-rate",
                               "psnr",       "label-smoothing", "class-weights",    "temperature",
                               "embeddings", "hidden-units"};
    QStringList ids;
    for (const Concept& c : concepts())
        ids << c.id;
    QCOMPARE(ids, expected);

    find<QAction>("actionConcepts")->trigger();
    auto* dialog = m_window->findChild<ConceptsDialog*>("conceptsDialog");
    QVERIFY(dialog && dialog->isVisible());
    auto* list = dialog->findChild<QListWidget*>("conceptsListWidget");
    auto* page = dialog->findChild<QTextBrowser*>("conceptTextBrowser");
    QCOMPARE(list->count(), static_cast<int>(concepts().size()));
    for (int i = 0; i < list->count(); ++i) {
        list->setCurrentRow(i);
        const QString text = page->toPlainText();
        const auto words = text.split(QRegularExpression("\\s+"), Qt::SkipEmptyParts).size();
        QVERIFY2(words >= 80 && words <= 200,
                 qPrintable(QString("%1: %2 words").arg(concepts()[i].id).arg(words)));
        QVERIFY2(text.startsWith(concepts()[i].title), qPrintable(text.left(60)));
    }
    // A "See also" link opens the page it names.
    list->setCurrentRow(0);
    QVERIFY(page->toHtml().contains("href=\"validation\""));
    emit page->anchorClicked(QUrl("validation"));
    QCOMPARE(dialog->currentConcept(), QString("validation"));
}

// F1 (Help > Help on This Control) opens the page of the control in focus.
void TestStudioHelp::helpKeyOpensTheConceptOfTheFocusedControl()
{
    openSample("iris"); // classification: label smoothing is enabled
    activate();
    QTest::keyClick(m_window, Qt::Key_3, Qt::ControlModifier); // the Training tab
    auto* rate = find<QWidget>("learningRateSpinBox");
    rate->setFocus();
    QTRY_VERIFY(rate->hasFocus());
    QTest::keyClick(rate, Qt::Key_F1);
    auto* dialog = m_window->findChild<ConceptsDialog*>("conceptsDialog");
    QVERIFY(dialog && dialog->isVisible());
    QCOMPARE(dialog->currentConcept(), QString("learning-rate"));
    QVERIFY(dialog->findChild<QTextBrowser*>()->toPlainText().contains("Cosine annealing"));

    dialog->close();
    activate();
    auto* smoothing = find<QWidget>("labelSmoothingSpinBox");
    QVERIFY(smoothing->isEnabled());
    smoothing->setFocus();
    QTRY_VERIFY(smoothing->hasFocus());
    QTest::keyClick(smoothing, Qt::Key_F1);
    QVERIFY(dialog->isVisible());
    QCOMPARE(dialog->currentConcept(), QString("label-smoothing"));
    QCOMPARE(find<QAction>("actionHelpOnControl")->shortcut(), QKeySequence(Qt::Key_F1));
}

// F1 while a linked control's tooltip shows opens that control's page, even when another linked
// control has focus: here the loss chart's title, which takes no focus at all.
void TestStudioHelp::helpKeyOpensTheConceptOfTheHoveredControl()
{
    activate();
    QTest::keyClick(m_window, Qt::Key_3, Qt::ControlModifier);
    auto* rate = find<QWidget>("learningRateSpinBox");
    rate->setFocus();
    QTRY_VERIFY(rate->hasFocus());
    auto* title = find<QWidget>("lossTitleLabel");
    const QPoint global = title->mapToGlobal(title->rect().center());
    QCursor::setPos(global);
    if (!QApplication::widgetAt(global)) // the offscreen platform at QT_SCALE_FACTOR=2
        QSKIP("this platform finds no window under a point");
    QTRY_COMPARE(QApplication::widgetAt(QCursor::pos()), title);
    QHelpEvent event(QEvent::ToolTip, title->rect().center(), global);
    QApplication::sendEvent(title, &event);
    QVERIFY(QToolTip::isVisible());
    QTest::keyClick(rate, Qt::Key_F1);
    auto* dialog = m_window->findChild<ConceptsDialog*>("conceptsDialog");
    QVERIFY(dialog && dialog->isVisible());
    QCOMPARE(dialog->currentConcept(), QString("loss"));
    QToolTip::hideText();
}

// A linked control's tooltip ends with the F1 line, also when its panel set the text later.
void TestStudioHelp::linkedToolTipsSayF1()
{
    openSample("iris"); // the Charts panel sets the loss title's tooltip for the task
    const std::pair<const char*, const char*> linked[] = {
        {"learningRateSpinBox", "Learning rate and schedules"},
        {"scheduleComboBox", "Learning rate and schedules"},
        {"labelSmoothingSpinBox", "Label smoothing"},
        {"balancedClassesCheckBox", "Class weights for rare classes"},
        {"temperatureSlider", "Temperature"},
        {"imageMetricLabel", "PSNR and SSIM"},
        {"lossTitleLabel", "Loss"},
    };
    for (const auto& [name, title] : linked) {
        auto* control = find<QWidget>(name);
        QCOMPARE(ConceptLinks::conceptOf(control).isEmpty(), false);
        QHelpEvent event(QEvent::ToolTip, QPoint(2, 2), control->mapToGlobal(QPoint(2, 2)));
        QApplication::sendEvent(control, &event);
        const QString tip = QToolTip::text();
        QVERIFY2(tip.contains(QString("F1: more on ") + title), qPrintable(name + (": " + tip)));
        QVERIFY2(tip.contains(control->toolTip().left(20).toHtmlEscaped()), qPrintable(tip));
        QToolTip::hideText();
    }
}

QStringList TestStudioHelp::shortcutRows(ShortcutsDialog* dialog) const
{
    auto* table = dialog->findChild<QTableWidget*>("shortcutsTableWidget");
    QStringList rows;
    for (int r = 0; r < table->rowCount(); ++r)
        rows << table->item(r, 0)->text() + "|" + table->item(r, 1)->text() + "|" +
                    table->item(r, 2)->text();
    return rows;
}

// Help > Keyboard Shortcuts lists the actions' shortcuts (Ctrl+S, Ctrl+1, F1...), read from the
// actions each time it opens: a changed shortcut shows.
void TestStudioHelp::shortcutListFollowsTheActions()
{
    find<QAction>("actionKeyboardShortcuts")->trigger();
    auto* dialog = m_window->findChild<ShortcutsDialog*>("shortcutsDialog");
    QVERIFY(dialog && dialog->isVisible());
    auto native = [](const char* keys) {
        return QKeySequence(keys).toString(QKeySequence::NativeText);
    };
    QStringList rows = shortcutRows(dialog);
    const QString all = rows.join('\n');
    QVERIFY2(rows.contains("File|Save Model|" + native("Ctrl+S")), qPrintable(all));
    QVERIFY2(rows.contains("View|1 · Data|" + native("Ctrl+1")), qPrintable(all));
    QVERIFY2(rows.contains("Train|Start|" + native("F5")), qPrintable(all));
    QVERIFY2(rows.contains("Help|Help on This Control|" + native("F1")), qPrintable(all));
    QVERIFY2(all.contains("Zoom in"), qPrintable(all)); // the image views' own keys

    dialog->close();
    find<QAction>("actionSaveModel")->setShortcut(QKeySequence("Ctrl+Alt+S"));
    find<QAction>("actionKeyboardShortcuts")->trigger();
    rows = shortcutRows(dialog);
    QVERIFY(rows.contains("File|Save Model|" + native("Ctrl+Alt+S")));
    QVERIFY(!rows.contains("File|Save Model|" + native("Ctrl+S")));
}

// No chart is a Tab stop (it would take focus and show nothing); the image views are, and draw
// a frame while they have focus, and zoom with + / - and fit with 0.
void TestStudioHelp::chartsTakeNoFocusAndImageViewsShowIt()
{
    activate();
    openSample("camera");
    QList<QWidget*> tabStops;
    for (QWidget* w = m_window->nextInFocusChain(); w != m_window; w = w->nextInFocusChain())
        if (w->isVisible() && w->isEnabled() && (w->focusPolicy() & Qt::TabFocus)) tabStops << w;
    for (QChartView* chart : m_window->findChildren<QChartView*>())
        QVERIFY2(!tabStops.contains(chart), qPrintable(chart->objectName()));
    int views = 0;
    for (ImageView* view : m_window->findChildren<ImageView*>()) {
        QVERIFY2(tabStops.contains(view), qPrintable(view->objectName()));
        auto* other = find<QWidget>("startButton");
        other->setFocus();
        QTRY_VERIFY(other->hasFocus());
        const QImage unfocused = view->grab().toImage();
        view->setFocus();
        QTRY_VERIFY(view->hasFocus());
        QVERIFY2(view->grab().toImage() != unfocused, qPrintable(view->objectName()));
        ++views;
    }
    QCOMPARE(views, 2);

    auto* view = find<ImageView>("originalImageView");
    view->setFocus();
    const double fitted = view->transform().m11();
    QTest::keyClick(view, Qt::Key_Plus);
    QCOMPARE(view->transform().m11(), fitted * 1.25);
    QTest::keyClick(view, Qt::Key_Minus);
    QTest::keyClick(view, Qt::Key_Minus);
    QVERIFY(view->transform().m11() < fitted);
    QTest::keyClick(view, Qt::Key_0);
    QCOMPARE(view->transform().m11(), fitted);
}

QTEST_MAIN(TestStudioHelp)
#include "TestStudioHelp.moc"
