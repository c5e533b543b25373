// Help where you are, wired into the main window from outside it: the welcome page (in a stack
// with the studio's own central widget), the "what to look at" banner a guided start leaves
// above the panels, the Help menu's Welcome, Concepts, Help on This Control (F1) and Keyboard
// Shortcuts, and the links from controls to their concept pages. Guided starts and "Open your
// own file…" trigger the window's own Samples and File > Open actions, so they ask about unsaved
// training exactly as the menus do.
#pragma once

#include <QObject>
#include <QString>

class QLabel;
class QMainWindow;
class QMenu;
class QStackedWidget;
class QWidget;

namespace il::app {

class ConceptLinks;
class ConceptsDialog;
class Session;
class ShortcutsDialog;
class WelcomePage;

class StudioHelp : public QObject {
    Q_OBJECT
public:
    // Adds its actions to helpMenu (before its last action, About) and takes the window's
    // central widget into its stack. A child of window.
    StudioHelp(QMainWindow* window, Session* session, QMenu* helpMenu);

    // The first start with no file to open: shows the welcome page unless it was shown once
    // (in this user's settings). Returns whether it shows it.
    bool showWelcomeOnFirstStart();
    void showWelcome();
    void closeWelcome();
    bool isWelcomeShown() const;
    WelcomePage* welcomePage() const { return m_welcome; }

    // Help > Concepts, on concept id's page ("": the page it showed last).
    ConceptsDialog* showConcepts(const QString& id = {});
    ShortcutsDialog* showShortcuts();
    // The banner's text for a sample's guided start ("" for other files).
    static QString hintFor(const QString& sample);

private:
    void buildMenu(QMenu* helpMenu);
    QWidget* makeHintBanner();
    // The controls with a concept page, found by object name.
    void linkConcepts();
    void startGuided(const QString& sample);
    void onDataOpened();

    QMainWindow* m_window;
    Session* m_session;
    QStackedWidget* m_stack;
    WelcomePage* m_welcome;
    QWidget* m_hint;     // made in the constructor's body by makeHintBanner
    QLabel* m_hintLabel; // ditto
    ConceptLinks* m_links;
    ConceptsDialog* m_concepts = nullptr;   // made on first use
    ShortcutsDialog* m_shortcuts = nullptr; // made on first use
    QString m_guidedSample;                 // the sample a guided start is opening ("" none)
};

} // namespace il::app
