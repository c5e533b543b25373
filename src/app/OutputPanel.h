// The Output panel: what the trained network gives back, by task — pictures for images, new
// names for names, predictions for tables. A stack of one page per task, switched as data or
// models are opened.
#pragma once

#include <QWidget>

class QLabel;
class QStackedWidget;

namespace il::app {

class ImageOutputPage;
class NamesOutputPage;
class Session;
class TableOutputPage;

class OutputPanel : public QWidget {
    Q_OBJECT
public:
    explicit OutputPanel(QWidget* parent = nullptr);

    void setSession(Session* session);
    ImageOutputPage* imagePage() const { return m_image; }
    NamesOutputPage* namesPage() const { return m_names; }
    TableOutputPage* tablePage() const { return m_table; }

private:
    void switchPage();

    Session* m_session = nullptr;
    QStackedWidget* m_stack;
    QLabel* m_empty;
    ImageOutputPage* m_image;
    NamesOutputPage* m_names;
    TableOutputPage* m_table;
};

} // namespace il::app
