// The Data panel: what was opened and how it will be read. A table shows its first rows and a
// role per column (feature, target, ignore) with the task they imply; an image shows the
// picture with its size and training size; names show the list, the count, the vocabulary and
// the longest name. Loader errors (file and line) appear inline, above the previous data.
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

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void refresh();
    void showTable();
    void showImage();
    void showNames();
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
