// The Runs tab: the session's runs (RunList) as a table, a tick per run for its ghost on the
// loss chart and "Show earlier runs" for all of them (here rather than above the chart, whose
// title row has no room left at 1024 px), the selected run's settings, results and output,
// and Compare for two selected
// runs (RunCompareDialog, one at a time, not modal so training and the charts stay usable).
#pragma once

#include <QPointer>
#include <QWidget>

#include <memory>

namespace Ui {
class RunListPanel;
}

namespace il::app {

class RunCompareDialog;
class RunList;

class RunListPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunListPanel(QWidget* parent = nullptr);
    ~RunListPanel() override;

    void setRuns(RunList* runs);
    // Shows the comparison of the two selected runs (the Compare button); null unless exactly
    // two are selected.
    RunCompareDialog* compareSelected();
    // The comparison on screen, if any.
    RunCompareDialog* compareDialog() const;

private:
    QList<int> selectedRows() const;
    void updateButtons();
    void showDetails();
    void removeSelected();

    std::unique_ptr<Ui::RunListPanel> m_ui;
    RunList* m_runs = nullptr;
    QPointer<RunCompareDialog> m_compare;
};

} // namespace il::app
