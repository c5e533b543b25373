// Nothing lost: the real MainWindow, offscreen, driven by object names. Every action that would
// replace a model with unsaved training asks Save / Discard / Cancel; Reset weights unlocks the
// data's options and clears what the old weights showed; the run button says "Start new model"
// when Start would not continue the trained weights. The Save / Discard / Cancel box is the
// real modal QMessageBox, found through QApplication::activeModalWidget() and clicked
// (BoxAnswerer); only the file name of a save comes through Dialogs::setNextFileName.
#include "StudioTestCase.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace il::app;
using namespace studiotest;

namespace {

const QString kIrisSpec = "dense:32,tanh,dense:32,tanh,dense,skip"; // iris's first preset

// Answers every modal QMessageBox that opens while it lives by clicking `button`, and counts
// them. A box nobody expected is answered too (the test then fails on the count, not by hanging).
class BoxAnswerer : public QObject {
public:
    explicit BoxAnswerer(QMessageBox::StandardButton button) : m_button(button)
    {
        m_timer.setInterval(10);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box || box == m_last) return;
            m_last = box;
            ++count;
            text = box->text();
            buttons = box->standardButtons();
            QAbstractButton* answer = box->button(m_button);
            if (!answer) answer = box->button(QMessageBox::Cancel);
            if (!answer) return box->reject();
            QTest::mouseClick(answer, Qt::LeftButton);
        });
        m_timer.start();
    }
    int count = 0;
    QString text; // of the last box
    QMessageBox::StandardButtons buttons;

private:
    QMessageBox::StandardButton m_button;
    QTimer m_timer;
    QMessageBox* m_last = nullptr;
};

} // namespace

class TestStudioSafety : public StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void openingOtherDataAsksToSaveTraining();
    void resetOpenModelAndQuitAskOnlyWithUnsavedTraining();
    void resetWeightsUnlocksRolesAndClearsMetrics();
    void evaluationOfResetWeightsIsNotShown();
    void runButtonSaysStartNewModelAfterAStackEdit();

private:
    void setSpec(const QString& spec);

    QTemporaryDir m_dir;
};

void TestStudioSafety::initTestCase()
{
    isolateSettings("testStudioSafety");
    QVERIFY(m_dir.isValid());
}

void TestStudioSafety::init()
{
    newWindow();
}

void TestStudioSafety::cleanup()
{
    session()->stop();
    {
        BoxAnswerer discard(QMessageBox::Discard);
        m_window->close();
    }
    delete m_window;
    m_window = nullptr;
}

void TestStudioSafety::setSpec(const QString& spec)
{
    auto* edit = find<QLineEdit>("specLineEdit");
    edit->setText(spec);
    emit edit->returnPressed();
    QCOMPARE(session()->spec(), spec);
}

// Item 1: Samples > another sample after training asks; Cancel keeps the model and the data,
// Save writes the file and then opens, Discard opens; nothing is asked with nothing to lose.
void TestStudioSafety::openingOtherDataAsksToSaveTraining()
{
    openSample("iris");
    train(30);
    QVERIFY(session()->hasUnsavedTraining());
    {
        BoxAnswerer cancel(QMessageBox::Cancel);
        openSample("xor");
        QCOMPARE(cancel.count, 1);
        QCOMPARE(cancel.buttons, QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
        QVERIFY2(cancel.text.contains("xor.csv") && cancel.text.contains("30 steps"),
                 qPrintable(cancel.text));
    }
    QVERIFY(session()->dataPath().endsWith("iris.csv"));
    QCOMPARE(session()->trainedSteps(), int64_t(30));
    QVERIFY(session()->hasUnsavedTraining());

    // Save, and the file dialog cancelled: the sample is not opened either.
    {
        BoxAnswerer save(QMessageBox::Save);
        Dialogs::setNextFileName("");
        openSample("xor");
        QCOMPARE(save.count, 1);
    }
    QVERIFY(session()->dataPath().endsWith("iris.csv"));
    QCOMPARE(session()->trainedSteps(), int64_t(30));

    // Save: the file is written, then the sample opens.
    const QString path = m_dir.filePath("iris-before-xor.safetensors");
    {
        BoxAnswerer save(QMessageBox::Save);
        Dialogs::setNextFileName(path);
        openSample("xor");
        QCOMPARE(save.count, 1);
        QTRY_VERIFY(session()->dataPath().endsWith("xor.csv"));
    }
    QVERIFY(QFile::exists(path));

    // Discard: the sample opens at once, the trained model is gone.
    train(20);
    {
        BoxAnswerer discard(QMessageBox::Discard);
        openSample("iris");
        QCOMPARE(discard.count, 1);
    }
    QVERIFY(session()->dataPath().endsWith("iris.csv"));
    QCOMPARE(session()->trainedSteps(), int64_t(0));

    // Nothing to lose: an untrained model, and a trained one just saved.
    const int asked = Dialogs::questionCount();
    BoxAnswerer none(QMessageBox::Cancel);
    openSample("xor");
    QVERIFY(session()->dataPath().endsWith("xor.csv"));
    train(20);
    saveAs(m_dir.filePath("xor.safetensors"));
    openSample("iris");
    QVERIFY(session()->dataPath().endsWith("iris.csv"));
    QCOMPARE(none.count, 0);
    QCOMPARE(Dialogs::questionCount(), asked);
}

// Item 1, the other actions: Reset weights and opening a model ask (Cancel keeps the model);
// quitting asks only while training is unsaved, and not after Reset weights threw it away.
void TestStudioSafety::resetOpenModelAndQuitAskOnlyWithUnsavedTraining()
{
    openSample("iris");
    train(30);
    const QString path = m_dir.filePath("iris-30.safetensors");
    saveAs(path);
    train(50); // Continue: 20 steps no file holds
    QVERIFY(session()->hasUnsavedTraining());
    {
        BoxAnswerer cancel(QMessageBox::Cancel);
        find<QPushButton>("resetButton")->click();
        QCOMPARE(cancel.count, 1);
        QVERIFY2(cancel.text.startsWith("Reset weights"), qPrintable(cancel.text));
        m_window->openFile(path);
        QCOMPARE(cancel.count, 2);
        QVERIFY2(cancel.text.contains("iris-30.safetensors"), qPrintable(cancel.text));
        QVERIFY(!m_window->close());
        QCOMPARE(cancel.count, 3);
    }
    QVERIFY(m_window->isVisible());
    QCOMPARE(session()->trainedSteps(), int64_t(50));
    {
        BoxAnswerer discard(QMessageBox::Discard);
        find<QPushButton>("resetButton")->click();
        QCOMPARE(discard.count, 1);
    }
    QCOMPARE(session()->trainedSteps(), int64_t(0));
    // Fresh weights: nothing to lose, so nothing is asked.
    BoxAnswerer none(QMessageBox::Cancel);
    QSignalSpy opened(session(), &Session::modelOpened);
    QVERIFY(m_window->openFile(path));
    QTRY_COMPARE(opened.count(), 1);
    QCOMPARE(session()->trainedSteps(), int64_t(30));
    QVERIFY(m_window->close());
    QCOMPARE(none.count, 0);
}

// Item 3: Reset weights unlocks the column roles and clears the metrics, predictions and
// confusion matrix of the weights it threw away.
void TestStudioSafety::resetWeightsUnlocksRolesAndClearsMetrics()
{
    openSample("iris");
    auto* columns = find<QTableWidget>("columnsTableWidget");
    auto* role = find<QComboBox>("roleComboBox0");
    auto* predictions = find<QTableWidget>("predictionsTableWidget");
    auto* confusion = find<QTableWidget>("confusionTableWidget");
    auto* metrics = find<QLabel>("metricsLabel");
    const QString untrained = metrics->text();
    train(30);
    QTRY_VERIFY(predictions->rowCount() > 0);
    QVERIFY(confusion->rowCount() > 0);
    QVERIFY(metrics->text() != untrained);
    QVERIFY(!columns->isEnabled());
    QVERIFY(!role->isEnabled());
    {
        BoxAnswerer discard(QMessageBox::Discard);
        find<QPushButton>("resetButton")->click();
        QCOMPARE(discard.count, 1);
    }
    QCOMPARE(session()->trainedSteps(), int64_t(0));
    QVERIFY(columns->isEnabled());
    QVERIFY(role->isEnabled());
    QVERIFY(columns->statusTip().isEmpty());
    QCOMPARE(predictions->rowCount(), 0);
    QCOMPARE(confusion->rowCount(), 0);
    QCOMPARE(metrics->text(), untrained);
    // The roles work again: ignoring a feature leaves 3 inputs.
    role->setCurrentIndex(2);
    QTRY_COMPARE(session()->inputWidth(), int64_t(3));
}

// Item 3, a late answer: the evaluation queued when a run ends, answered after Reset weights,
// describes weights that are gone and is not shown.
void TestStudioSafety::evaluationOfResetWeightsIsNotShown()
{
    openSample("iris");
    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(30);
    auto* predictions = find<QTableWidget>("predictionsTableWidget");
    auto gate = std::make_shared<QSemaphore>(0);
    int discarded = 0;
    // When the run ends, hold the worker: the evaluation the session queues next waits behind
    // it, and Reset weights comes first (then the worker goes on).
    auto held = std::make_shared<QMetaObject::Connection>();
    *held = connect(session(), &Session::trainingFinished, this, [&, gate, held] {
        disconnect(*held);
        session()->worker()->post([gate](ModelState&) { gate->acquire(); }, false);
        QTimer::singleShot(0, this, [&, gate] {
            BoxAnswerer discard(QMessageBox::Discard);
            find<QPushButton>("resetButton")->click();
            discarded = discard.count;
            gate->release();
        });
    });
    find<QPushButton>("startButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(discarded, 1, kTrainingWait);
    QCOMPARE(session()->trainedSteps(), int64_t(0));
    // Every answer the worker sent before this one has arrived.
    bool answered = false;
    session()->worker()->postAndReply(
        this, [](ModelState&) { return 0; }, [&answered](int) { answered = true; }, false);
    QTRY_VERIFY(answered);
    QCOMPARE(predictions->rowCount(), 0);
}

// Item 5: after a stack edit or a preset choice the run button and the Train menu say "Start
// new model" (the tooltip says the trained model is replaced); back on the trained stack they
// say Continue. Starting then asks, and Save keeps the trained weights in the file.
void TestStudioSafety::runButtonSaysStartNewModelAfterAStackEdit()
{
    openSample("iris");
    QCOMPARE(session()->spec(), kIrisSpec);
    train(30);
    auto* start = find<QPushButton>("startButton");
    auto* menuStart = find<QAction>("actionStart");
    QCOMPARE(start->text(), QString("&Continue"));
    QCOMPARE(menuStart->text(), QString("&Continue"));

    setSpec("dense:16,tanh,dense");
    QCOMPARE(start->text(), QString("&Start new model"));
    QCOMPARE(menuStart->text(), QString("&Start new model"));
    QVERIFY2(start->toolTip().contains("replaces the trained one"), qPrintable(start->toolTip()));
    QVERIFY(session()->hasTrained()); // the data options still wait for Reset weights
    setSpec(kIrisSpec);
    QCOMPARE(start->text(), QString("&Continue"));
    QCOMPARE(menuStart->text(), QString("&Continue"));
    QVERIFY2(!start->toolTip().contains("replace"), qPrintable(start->toolTip()));

    auto* presets = find<QComboBox>("presetComboBox");
    QVERIFY(presets->count() > 1);
    presets->setCurrentIndex(1);
    emit presets->activated(1);
    QVERIFY(session()->spec() != kIrisSpec);
    const QString newSpec = session()->spec();
    QCOMPARE(start->text(), QString("&Start new model"));
    QCOMPARE(menuStart->text(), QString("&Start new model"));

    // Start asks: Cancel starts nothing.
    {
        BoxAnswerer cancel(QMessageBox::Cancel);
        start->click();
        QCOMPARE(cancel.count, 1);
    }
    QCOMPARE(session()->runState(), Session::RunState::Idle);
    QCOMPARE(session()->trainedSteps(), int64_t(30));
    // Save writes the trained model (its own stack, 30 steps), then the new model trains.
    const QString path = m_dir.filePath("iris-before-preset.safetensors");
    QSignalSpy finished(session(), &Session::trainingFinished);
    {
        BoxAnswerer save(QMessageBox::Save);
        Dialogs::setNextFileName(path);
        menuStart->trigger();
        QCOMPARE(save.count, 1);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTrainingWait);
    }
    QVERIFY(session()->modelPath().isEmpty()); // the file holds the old model, not this one
    QCOMPARE(session()->spec(), newSpec);
    QCOMPARE(start->text(), QString("&Continue"));
    BoxAnswerer discard(QMessageBox::Discard);
    QSignalSpy opened(session(), &Session::modelOpened);
    QVERIFY(m_window->openFile(path));
    QTRY_COMPARE(opened.count(), 1);
    QCOMPARE(discard.count, 1); // the new model's training was unsaved
    QCOMPARE(session()->spec(), kIrisSpec);
    QCOMPARE(session()->trainedSteps(), int64_t(30));
}

QTEST_MAIN(TestStudioSafety)
#include "TestStudioSafety.moc"
