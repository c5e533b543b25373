// Asks before an action replaces a model whose training no file holds (open data or a model, a
// sample, Reset weights, Start after a stack change): Save / Discard / Cancel, through
// Dialogs::question. Save goes through the window's own save (which may ask for a file name);
// the action then waits for the worker to write the file, and is dropped when the save is
// cancelled or fails. Nothing is asked when there is nothing to lose (Session::
// hasUnsavedTraining() is false).
#pragma once

#include <QObject>
#include <QString>

#include <functional>

class QWidget;

namespace il::app {

class Session;

class UnsavedModelGuard : public QObject {
    Q_OBJECT
public:
    // save: the window's Save; false when it was cancelled or refused at once (saveFailed).
    UnsavedModelGuard(Session* session, QWidget* window, std::function<bool()> save);

    enum class Answer {
        Proceed,   // nothing to lose, or Discard: the caller goes on now
        AfterSave, // Save: afterSave runs once the file is written (never if the save fails)
        Cancelled, // Cancel, or a save that was cancelled or refused
    };
    // what: the action as the question names it, capitalised ("Opening iris.csv").
    Answer ask(const QString& what, std::function<void()> afterSave);
    // Asks, then runs action now (Proceed) or after the save; false when cancelled.
    bool run(const QString& what, const std::function<void()>& action);

private:
    Session* m_session;
    QWidget* m_window;
    std::function<bool()> m_save;
    std::function<void()> m_afterSave; // waiting for modelSaved
};

} // namespace il::app
