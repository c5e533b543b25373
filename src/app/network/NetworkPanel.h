// The Network tab: what each unit of the network has learned (NetworkView draws it), for the
// open data and model. It asks the Session for a new picture (computed on the training worker
// between two steps) when the model or its weights change, and while a run trains at most every
// kRefreshMs: a paused or stopped run sends no progress, so the picture stays. Only while the tab
// is on screen, catching up when it is shown again.
#pragma once

#include "NetworkInside.h"

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include <memory>

namespace Ui {
class NetworkPanel;
}

namespace il::app {

class NetworkView;
class Session;

class NetworkPanel : public QWidget {
    Q_OBJECT
public:
    // The least time between two pictures while training.
    static constexpr int kRefreshMs = 500;

    explicit NetworkPanel(QWidget* parent = nullptr);
    ~NetworkPanel() override;

    void setSession(Session* session);
    NetworkView* view() const { return m_view; }
    // Pictures drawn so far (tests: the view updates during a run and stops when paused).
    int updates() const { return m_updates; }

protected:
    void showEvent(QShowEvent* event) override;

private:
    void request();
    void requestSoon();
    // A table of more than two features: the Draw boxes (histograms, or a plane of two numeric
    // features), refilled for new data; hidden for other data.
    void refillPlane();
    tasks::InsideRequest insideRequest() const;
    void onReady(const tasks::NetworkInside& inside);
    void exportPng();

    std::unique_ptr<Ui::NetworkPanel> m_ui;
    NetworkView* m_view = nullptr;
    Session* m_session = nullptr;
    bool m_stale = true; // a picture is owed (asked while hidden)
    int m_updates = 0;
    QElapsedTimer m_sinceRequest;
    QTimer m_later;
};

} // namespace il::app
