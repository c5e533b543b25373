// The Data panel: what was opened and how it will be read. Above, the file and what was read
// from it; below, the page of its kind of task (StudioKind: a table's column roles and first
// rows, an image's picture and training size, the names and their vocabulary). Loader errors (file
// and line) appear inline, above the previous data; a table that fails for its missing cells offers
// there what to do with them (drop the rows, ignore the columns, fill with the mean), each with the
// rows it affects, and the table page keeps the choice changeable.
#pragma once

#include <QWidget>

#include <memory>
#include <vector>

namespace Ui {
class DatasetPanel;
}

namespace il::app {

class Session;
class StudioPage;

class DatasetPanel : public QWidget {
    Q_OBJECT
public:
    explicit DatasetPanel(QWidget* parent = nullptr);
    ~DatasetPanel() override;

    void setSession(Session* session);
    void showError(const QString& message, const QString& title = "Could not open the data.");
    void clearError();

signals:
    void openRequested();
    // A choice on the error bar of a table that failed for its missing cells: open path with
    // this policy (tasks::TaskOptions::missing).
    void missingChoiceMade(const QString& path, const QString& missing);

private:
    void refresh();
    // The error bar's choices for a table that failed for its missing cells.
    void showMissingChoices();
    void updateEnabled();

    std::unique_ptr<Ui::DatasetPanel> m_ui;
    Session* m_session = nullptr;
    std::vector<StudioPage*> m_pages; // one per studioKinds() entry, in its order
    bool m_editable = true;           // whether the pages' reading options may change now
};

} // namespace il::app
