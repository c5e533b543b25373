// The Help menu's windows: Concepts (a topic list beside the page of the chosen topic, whose
// "See also" links lead to other topics) and
// Keyboard Shortcuts (a table made from the window's actions each time it opens, so it cannot go
// stale). Both are non-modal children of the main window, made once and shown again.
#pragma once

#include <QDialog>

class QListWidget;
class QTableWidget;
class QTextBrowser;

namespace il::app {

class ConceptsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ConceptsDialog(QWidget* parent = nullptr);
    // Shows concept id's page ("" or an unknown id: keeps the page shown).
    void showConcept(const QString& id);
    // The id of the page shown.
    QString currentConcept() const;

private:
    QListWidget* m_topics;
    QTextBrowser* m_page;
};

class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    // Lists the shortcuts of window's actions (their menus' titles as the section).
    explicit ShortcutsDialog(QWidget* window);
    // Reads the actions again.
    void refresh();

private:
    QWidget* m_window;
    QTableWidget* m_table;
};

} // namespace il::app
