#include "UnsavedModelGuard.h"

#include "Counting.h"
#include "Dialogs.h"
#include "Session.h"

#include <QLocale>

namespace il::app {

UnsavedModelGuard::UnsavedModelGuard(Session* session, QWidget* window, std::function<bool()> save)
    : QObject(window), m_session(session), m_window(window), m_save(std::move(save))
{
    connect(session, &Session::modelSaved, this, [this] {
        if (auto then = std::exchange(m_afterSave, {})) then();
    });
    connect(session, &Session::saveFailed, this, [this] { m_afterSave = {}; });
}

UnsavedModelGuard::Answer UnsavedModelGuard::ask(const QString& what,
                                                 std::function<void()> afterSave)
{
    if (!m_session->hasUnsavedTraining()) return Answer::Proceed;
    const QString steps = tasks::countOf(m_session->trainedSteps(), "step", QLocale());
    const auto answer = Dialogs::question(
        m_window, "Save the trained model?",
        QString("%1 throws away the trained model: %2 of training that no file holds. "
                "Save it first?")
            .arg(what, steps),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Discard) return Answer::Proceed;
    if (answer != QMessageBox::Save) return Answer::Cancelled;
    // Set before saving: a save that fails at once (saveFailed) clears it again.
    m_afterSave = std::move(afterSave);
    if (!m_save()) {
        m_afterSave = {};
        return Answer::Cancelled;
    }
    return Answer::AfterSave;
}

bool UnsavedModelGuard::run(const QString& what, const std::function<void()>& action)
{
    const Answer answer = ask(what, action);
    if (answer == Answer::Proceed) action();
    return answer != Answer::Cancelled;
}

} // namespace il::app
