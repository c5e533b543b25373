// The studio's setup tabs, in the order their numbers give them: the one list that the main
// window's tab widget and its View menu (Ctrl+1, Ctrl+2...), the studio's --tab and --list-tabs,
// the welcome page's shortcuts and the layout test read. A new tab is its panel (a form in
// forms/ and its .h/.cpp) and one entry in studioTabs().
#pragma once

#include <QString>

#include <functional>
#include <vector>

class QWidget;

namespace il::app {

class RunList;
class Session;

// What a tab's panel may be given when the window makes it.
struct StudioTabContext {
    Session* session = nullptr;
    RunList* runs = nullptr; // the session's runs (the Runs tab and the loss chart share them)
};

struct StudioTab {
    QString id;         // "training": --tab and the View action's name (actionShowTraining)
    QString title;      // "Training": the tab reads "3 · Training"
    QString toolTip;    // what the tab is for, in a sentence
    QString objectName; // the panel's object name ("trainingPanel"), as tests and scripts find it
    std::function<QWidget*(const StudioTabContext&)> make;
};

const std::vector<StudioTab>& studioTabs();

// "3 · Training" for the third tab: the tab's text and, with an &, its View action's.
QString studioTabTitle(size_t index);
// "actionShowTraining".
QString studioTabActionName(const StudioTab& tab);
// The tab whose id is id (exactly, in any case); nullptr for none.
const StudioTab* studioTab(const QString& id);
// "data, model, training, runs or network".
QString studioTabIds();

} // namespace il::app
