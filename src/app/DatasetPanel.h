// The Data panel: what was opened and how it will be read. A table shows its first rows and a
// role per column (feature, target, ignore) with the task they imply; an image shows the
// picture with its size and training size; names show the list, the count, the vocabulary and
// the longest name. Loader errors (file and line) appear inline, above the previous data; a
// table that fails for its missing cells offers there what to do with them (drop the rows,
// ignore the columns, fill with the mean), each with the rows it affects, and the table page
// keeps the choice changeable.
#pragma once

#include <QWidget>

#include <memory>

namespace Ui {
class DatasetPanel;
}

namespace il::app {

class CsvPreviewModel;
class Session;

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

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void refresh();
    void showTable();
    void showImage();
    void showNames();
    // The Data tab's choice for the open table's missing cells (hidden when it has none).
    void showMissing();
    void missingEdited();
    // The error bar's choices for a table that failed for its missing cells.
    void showMissingChoices();
    void updateEnabled();
    void rolesEdited();
    void optionsEdited();
    void fitImage();

    std::unique_ptr<Ui::DatasetPanel> m_ui;
    Session* m_session = nullptr;
    CsvPreviewModel* m_preview;
    QPixmap m_pixmap;
    bool m_updating = false;
};

} // namespace il::app
