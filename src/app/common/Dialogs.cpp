#include "Dialogs.h"

#include <QFileDialog>

namespace il::app::Dialogs {

namespace {

QMessageBox::StandardButton g_nextAnswer = QMessageBox::NoButton;
QString g_nextFileName; // null: none set
QString g_lastSaveStart;
int g_questions = 0;

bool takeFileName(QString& out)
{
    if (g_nextFileName.isNull()) return false;
    out = g_nextFileName;
    g_nextFileName = QString();
    return true;
}

} // namespace

QMessageBox::StandardButton question(QWidget* parent, const QString& title, const QString& text,
                                     QMessageBox::StandardButtons buttons,
                                     QMessageBox::StandardButton defaultButton)
{
    ++g_questions;
    if (g_nextAnswer != QMessageBox::NoButton) {
        const auto answer = g_nextAnswer;
        g_nextAnswer = QMessageBox::NoButton;
        return answer;
    }
    return QMessageBox::question(parent, title, text, buttons, defaultButton);
}

void warning(QWidget* parent, const QString& title, const QString& text)
{
    ++g_questions;
    if (g_nextAnswer != QMessageBox::NoButton) {
        g_nextAnswer = QMessageBox::NoButton;
        return;
    }
    QMessageBox::warning(parent, title, text);
}

QString openFileName(QWidget* parent, const QString& caption, const QString& dir,
                     const QString& filter)
{
    QString name;
    if (takeFileName(name)) return name;
    return QFileDialog::getOpenFileName(parent, caption, dir, filter);
}

QString saveFileName(QWidget* parent, const QString& caption, const QString& dir,
                     const QString& filter)
{
    g_lastSaveStart = dir;
    QString name;
    if (takeFileName(name)) return name;
    return QFileDialog::getSaveFileName(parent, caption, dir, filter);
}

QString lastSaveStart()
{
    return g_lastSaveStart;
}

void setNextAnswer(QMessageBox::StandardButton answer)
{
    g_nextAnswer = answer;
}

void setNextFileName(const QString& fileName)
{
    g_nextFileName = fileName.isNull() ? QString("") : fileName;
}

int questionCount()
{
    return g_questions;
}

} // namespace il::app::Dialogs
