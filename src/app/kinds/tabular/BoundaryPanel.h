// The Boundary tab of the table output: the decision-boundary picture (DecisionBoundaryView)
// and what it shows — which two numeric features span the plane, where the other features are
// held (their training mean or one training row), the legend. It asks the Session for a grid
// (computed on the training worker) when the plane changes, when a run reports progress (at
// most every kRefreshMs, so a picture costs the run little), when a run ends and when the
// weights are replaced; only while it is on screen, catching up when it is shown again.
#pragma once

#include "TabularBoundary.h"

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include <memory>

namespace Ui {
class BoundaryPanel;
}

namespace il::app {

class DecisionBoundaryView;
class Session;

class BoundaryPanel : public QWidget {
    Q_OBJECT
public:
    // The least time between two pictures while training.
    static constexpr int kRefreshMs = 250;
    // Grid points a side: smooth once stretched over the plot, a few milliseconds of the worker.
    static constexpr int kGridSide = 80;

    explicit BoundaryPanel(QWidget* parent = nullptr);
    ~BoundaryPanel() override;

    void setSession(Session* session);
    // The open data has two numeric features to span a plane (the tab is usable).
    bool isAvailable() const { return m_available; }
    // Why not, for the tab's tooltip ("" when available).
    QString unavailableReason() const { return m_unavailable; }
    DecisionBoundaryView* view() const;

signals:
    // After each refill (other data or model): isAvailable() and unavailableReason() are new.
    void availabilityChanged(bool available);

protected:
    void showEvent(QShowEvent* event) override;

private:
    // The open data's features into the axis boxes (kept by name when they are still there).
    void refill();
    // Asks for a picture now (later when hidden).
    void request();
    // While training: at most one request every kRefreshMs, the last one never lost.
    void requestSoon();
    void onReady(qint64 step, const tasks::BoundaryGrid& grid, const QString& error);
    void keepAxesApart(bool xChanged);
    void updateHeldControls();
    tasks::BoundaryPlane plane() const;

    std::unique_ptr<Ui::BoundaryPanel> m_ui;
    Session* m_session = nullptr;
    bool m_available = false;
    QString m_unavailable;
    bool m_stale = true; // a picture is owed (asked while hidden)
    int m_features = 0;
    QElapsedTimer m_sinceRequest;
    QTimer m_later;
};

} // namespace il::app
