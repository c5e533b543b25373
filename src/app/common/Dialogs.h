// Every modal question the studio asks goes through here, so tests can answer it instead of a
// person (as KeePassXC's MessageBox::setNextAnswer does): set the next answer or file name, and
// the following call returns it without opening a dialog.
#pragma once

#include <QMessageBox>
#include <QString>

class QWidget;

namespace il::app::Dialogs {

QMessageBox::StandardButton question(QWidget* parent, const QString& title, const QString& text,
                                     QMessageBox::StandardButtons buttons,
                                     QMessageBox::StandardButton defaultButton);
void warning(QWidget* parent, const QString& title, const QString& text);
QString openFileName(QWidget* parent, const QString& caption, const QString& dir,
                     const QString& filter);
QString saveFileName(QWidget* parent, const QString& caption, const QString& dir,
                     const QString& filter);

// Tests: the answer of the next question() (NoButton: ask for real), the result of the next
// openFileName()/saveFileName() (a null string: ask for real; an empty one: cancelled).
void setNextAnswer(QMessageBox::StandardButton answer);
void setNextFileName(const QString& fileName);
// Tests: the folder or file name the last saveFileName() started in.
QString lastSaveStart();
// Tests: how many questions and warnings were asked so far.
int questionCount();

} // namespace il::app::Dialogs
