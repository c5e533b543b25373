// What the studio's test classes share: the real MainWindow, shown offscreen, its widgets found
// by object name, samples opened through their menu actions, short runs from the run button, and
// saves through File > Save As. The helpers check with QVERIFY / QTRY_*, so a failure inside
// one fails the test function that called it.
#pragma once

#include "Dialogs.h"
#include "MainWindow.h"
#include "Session.h"
#include "TrainingWorker.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QCoreApplication>
#include <QJsonObject>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>

namespace studiotest {

// Generous: a short run on a loaded 2-core machine (CI runs two tests at once). A passing test
// never waits this long.
inline constexpr int kTrainingWait = 120000; // ms
// A small SIREN for pictures: steps in milliseconds.
inline const QString kSmallImageSpec = "dense:32,sine:30,dense:32,sine:30,dense";

class StudioTestCase : public QObject {
protected:
    // For initTestCase: settings of this executable's own, empty, in QStandardPaths' test mode.
    static void isolateSettings(const char* applicationName)
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("IronLearnTests");
        QCoreApplication::setApplicationName(applicationName);
        QSettings().clear();
    }

    // A new window at 1280x800, shown and exposed.
    void newWindow()
    {
        m_window = new il::app::MainWindow;
        m_window->resize(1280, 800);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
    }

    // Stops a run, closes the window (unsaved training is discarded when the window asks)
    // and deletes it.
    void closeWindow()
    {
        if (!m_window) return;
        session()->stop();
        QTimer::singleShot(0, m_window, [] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget()))
                box->button(QMessageBox::Discard)->click();
        });
        m_window->close();
        delete m_window;
        m_window = nullptr;
    }

    // The widget or action of this name; a renamed one ends the test loudly.
    template <typename T> T* find(const QString& name) const
    {
        T* w = m_window->findChild<T*>(name);
        if (!w) qFatal("no %s named %s", T::staticMetaObject.className(), qPrintable(name));
        return w;
    }
    il::app::Session* session() const { return m_window->session(); }
    // What the worker's model trains with, read on the worker thread.
    il::TrainerConfig workerConfig() const
    {
        il::TrainerConfig c;
        session()->worker()->post([&c](il::app::ModelState& m) { c = m.config; });
        session()->worker()->waitForIdle();
        return c;
    }
    // The size an image trains at, from the task metadata (the open image's, or a model's).
    QSize imageTrainingSize() const
    {
        const QJsonObject task = session()->taskJson();
        return {task.value("width").toInt(), task.value("height").toInt()};
    }

    void openSample(const QString& baseName)
    {
        find<QAction>("actionSample_" + baseName)->trigger();
        QVERIFY(session()->task());
        if (!m_crossValidate) useValidationSplit();
    }
    // A small table is cross-validated by default; most studio tests check what a validation
    // split shows (its curve, early stopping's kept step, the overfitting mark), so openSample
    // turns it off through the Training tab (Cross-validation: Off) unless m_crossValidate.
    void useValidationSplit()
    {
        if (session()->task()->folds() == 0) return;
        auto* folds = find<QComboBox>("foldsComboBox");
        const int off = folds->findData(0);
        folds->setCurrentIndex(off);
        emit folds->activated(off);
        QTRY_COMPARE(session()->task()->folds(), 0);
    }
    bool m_crossValidate = false; // openSample keeps the default (cross-validation)
    // The image's training size (longest side) through the Data panel; waits for the re-read.
    void setTrainingSize(int px)
    {
        auto* size = find<QSpinBox>("trainingSizeSpinBox");
        size->setValue(px);
        emit size->editingFinished();
        QTRY_COMPARE(imageTrainingSize().width(), px);
    }
    // The camera at 64x64 and a small SIREN (kSmallImageSpec): steps of a few milliseconds.
    void openSmallImage()
    {
        openSample("camera");
        setTrainingSize(64);
        auto* spec = find<QLineEdit>("specLineEdit");
        spec->setText(kSmallImageSpec);
        emit spec->returnPressed();
        QCOMPARE(session()->spec(), kSmallImageSpec);
    }

    // Sets a budget of `steps` steps (0: keeps the budget), clicks the run button (Start or
    // Continue) and waits for the end of the run, and for its evaluation when asked to.
    void train(int steps, bool waitForEvaluation = false)
    {
        if (steps > 0) {
            find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
            find<QSpinBox>("budgetSpinBox")->setValue(steps);
        }
        QSignalSpy finished(session(), &il::app::Session::trainingFinished);
        QSignalSpy evaluated(session(), &il::app::Session::evaluated);
        find<QPushButton>("startButton")->click();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTrainingWait);
        QVERIFY(!finished.first().first().value<il::app::TrainingOutcome>().failed);
        if (waitForEvaluation) QTRY_VERIFY_WITH_TIMEOUT(evaluated.count() >= 1, kTrainingWait);
    }

    // File > Save As, the file name answered; waits until the worker wrote it.
    void saveAs(const QString& path)
    {
        QSignalSpy saved(session(), &il::app::Session::modelSaved);
        il::app::Dialogs::setNextFileName(path);
        find<QAction>("actionSaveModelAs")->trigger();
        QTRY_COMPARE(saved.count(), 1);
    }

    il::app::MainWindow* m_window = nullptr;
};

// The usual fixture: settings of the test's own, named after its class ("TestStudioSetup" reads
// and writes "testStudioSetup"'s), and a new window for every test function, closed after it.
// A test class that needs more declares its own initTestCase, init or cleanup: Qt Test calls the
// most derived one. Compiled once (StudioTestCase.cpp), for its meta-object.
class StudioWindowTestCase : public StudioTestCase {
    Q_OBJECT

protected slots: // Qt Test finds them by name; a test may call init and cleanup itself
    void initTestCase();
    void init() { newWindow(); }
    void cleanup() { closeWindow(); }
};

} // namespace studiotest
