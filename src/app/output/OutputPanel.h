// The Output panel: what the trained network gives back, by task — pictures for images, new
// names for names, predictions for tables. A stack of one page per kind of task (StudioKind),
// switched as data or models are opened.
#pragma once

#include <QWidget>

#include <vector>

class QLabel;
class QStackedWidget;

namespace il::app {

class Session;
class StudioPage;

class OutputPanel : public QWidget {
    Q_OBJECT
public:
    explicit OutputPanel(QWidget* parent = nullptr);

    void setSession(Session* session);
    // The page of the kind whose page is a Page (ImageOutputPage...), or null.
    template <class Page> Page* page() const
    {
        for (StudioPage* p : m_pages)
            if (auto* found = qobject_cast<Page*>(p)) return found;
        return nullptr;
    }

private:
    void switchPage();

    Session* m_session = nullptr;
    QStackedWidget* m_stack;
    QLabel* m_empty;
    std::vector<StudioPage*> m_pages; // one per studioKinds() entry, in its order
};

} // namespace il::app
