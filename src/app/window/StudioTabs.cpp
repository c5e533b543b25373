#include "StudioTabs.h"

#include "DatasetPanel.h"
#include "ModelPanel.h"
#include "NetworkPanel.h"
#include "RunListPanel.h"
#include "TrainingPanel.h"

namespace il::app {

namespace {

// A panel that follows the session.
template <class Panel> QWidget* sessionPanel(const StudioTabContext& context)
{
    auto* panel = new Panel;
    panel->setSession(context.session);
    return panel;
}

} // namespace

const std::vector<StudioTab>& studioTabs()
{
    static const std::vector<StudioTab> tabs = {
        {"data", "Data", "What the network learns from: a table, an image or a list of names.",
         "datasetPanel", sessionPanel<DatasetPanel>},
        {"model", "Model", "The layers the data flows through, from inputs to outputs.",
         "modelPanel", sessionPanel<ModelPanel>},
        {"training", "Training",
         "How the weights are adjusted: optimizer, learning rate, batches, budget.",
         "trainingPanel", sessionPanel<TrainingPanel>},
        {"runs", "Runs",
         "Every run of this session: its settings, curves and results; compare two side by side.",
         "runListPanel",
         [](const StudioTabContext& context) -> QWidget* {
             auto* panel = new RunListPanel;
             panel->setRuns(context.runs);
             return panel;
         }},
        {"network", "Network",
         "Inside the network: what each unit has learned, live while it trains.", "networkPanel",
         sessionPanel<NetworkPanel>},
    };
    return tabs;
}

QString studioTabTitle(size_t index)
{
    return QString("%1 \u00b7 %2").arg(index + 1).arg(studioTabs().at(index).title);
}

QString studioTabActionName(const StudioTab& tab)
{
    return "actionShow" + tab.id.left(1).toUpper() + tab.id.mid(1);
}

const StudioTab* studioTab(const QString& id)
{
    for (const StudioTab& tab : studioTabs())
        if (tab.id.compare(id, Qt::CaseInsensitive) == 0) return &tab;
    return nullptr;
}

QString studioTabIds()
{
    const std::vector<StudioTab>& tabs = studioTabs();
    QString ids;
    for (size_t i = 0; i < tabs.size(); ++i)
        ids += (i == 0 ? "" : i + 1 == tabs.size() ? " or " : ", ") + tabs[i].id;
    return ids;
}

} // namespace il::app
