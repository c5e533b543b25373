// What the studio shows for one kind of task (a tasks::TaskType): its page on the Data tab (how
// the file will be read, with the kind's own reading options) and its page on the Output tab
// (what the trained network gives back). studioKinds() is the one list of the kinds the studio
// knows; the Data and Output panels make one page of each kind at start and show the one whose
// task is open. Each kind's pages, and everything else only that kind shows, live in its own
// folder here (tabular/, image/, names/): a new kind is a new folder, which defines
// `const StudioKind& <folder>StudioKind()`; the list is made from the folders (StudioKinds.inc).
#pragma once

#include <QImage>
#include <QMap>
#include <QString>
#include <QWidget>

#include <initializer_list>
#include <vector>

namespace il::tasks {
class TaskType;
struct TaskOptions;
} // namespace il::tasks

namespace il::app {

class Session;
struct ModelState;

// A page one kind of task contributes to a panel.
class StudioPage : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

    // Gives the page the session (once, when its panel is given one).
    void setSession(Session* session)
    {
        m_session = session;
        connectSession(session);
    }
    // Data pages: show the open data (called when data opens and when its options change).
    virtual void refresh() {}
    // Data pages: whether the reading options may change now (not once the model has trained on
    // the data as it is read), and why not, for their status tips.
    void setEditable(bool editable, const QString& why);

protected:
    // A page that follows the session's signals connects them here.
    virtual void connectSession(Session*) {}
    // The widgets of the page's reading options (setEditable locks them).
    void setOptionWidgets(std::initializer_list<QWidget*> widgets) { m_optionWidgets = widgets; }
    // Reads the data again with options, after the edit's own signal has returned; a refusal
    // (the session says why) puts the page back as it was.
    void reopenWith(Session* session, const tasks::TaskOptions& options);

    Session* m_session = nullptr;

private:
    std::vector<QWidget*> m_optionWidgets;
};

// What a kind adds to the studio beyond its two pages.
struct StudioKindExtras {
    // Its models draw pictures: what the network draws now (ModelState::picture: the live
    // preview while training, the timeline's frames, the kept weights' picture), with its longest
    // side at most longestSide, or at the size it trains at for 0; null when it cannot. Set:
    // File > Export Reconstruction and Train > Race Presets apply.
    QImage (*picture)(ModelState& model, int longestSide) = nullptr;
    // After a scripted run (--train-steps, before --screenshot), given the main window: show what
    // the run made (names: generate a few). Null: nothing to do.
    void (*afterScriptedRun)(QWidget* window) = nullptr;
    // The kind's settings (TaskType::settings) that the studio opens its data with where they
    // differ from the kind's defaults (the CLI's), by name.
    QMap<QString, int> studioSettings = {};
};

class StudioKind {
public:
    virtual ~StudioKind() = default;

    virtual const tasks::TaskType& type() const = 0;
    virtual const StudioKindExtras& extras() const = 0;
    // The pages, made once when the panel is made (parent: the panel's page stack). Object
    // names: "<kind>Page" on the Data tab (tablePage...), "<kind>OutputPage" on the Output tab.
    virtual StudioPage* makeDataPage(QWidget* parent) const = 0;
    virtual StudioPage* makeOutputPage(QWidget* parent) const = 0;
};

// A kind whose pages are a DataPage and an OutputPage, each made from its parent.
template <class DataPage, class OutputPage> class StudioKindOf final : public StudioKind {
public:
    StudioKindOf(const tasks::TaskType& type, const char* outputPageName,
                 StudioKindExtras extras = {})
        : m_type(type), m_outputPageName(outputPageName), m_extras(extras)
    {
    }
    const tasks::TaskType& type() const override { return m_type; }
    const StudioKindExtras& extras() const override { return m_extras; }
    StudioPage* makeDataPage(QWidget* parent) const override { return new DataPage(parent); }
    StudioPage* makeOutputPage(QWidget* parent) const override
    {
        auto* page = new OutputPage(parent);
        page->setObjectName(m_outputPageName);
        return page;
    }

private:
    const tasks::TaskType& m_type;
    const char* m_outputPageName;
    StudioKindExtras m_extras;
};

// Every kind, in the order of tasks::taskTypes().
const std::vector<const StudioKind*>& studioKinds();
// The position in studioKinds() of a task type's kind; -1 for none (and for a null type).
int studioKindIndex(const tasks::TaskType* type);
// The kind of a task type; nullptr for none (and for a null type).
const StudioKind* studioKindOf(const tasks::TaskType* type);

} // namespace il::app
