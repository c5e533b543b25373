// The request only table models answer (TableRequests.cpp): the decision boundary over a plane
// of two features.
#pragma once

#include "LatestRequest.h"
#include "Session.h"
#include "TabularBoundary.h"

#include <QObject>

#include <utility>
#include <vector>

namespace il::app {

class TableRequests : public QObject {
    Q_OBJECT
public:
    explicit TableRequests(Session* session) : QObject(session), m_session(*session) {}
    // The session's (Session::part).
    static TableRequests& of(Session& session) { return session.part<TableRequests>(); }

    // The model's prediction over a plane of two features, computed on the training worker
    // (between two steps while training, so the grid sees one consistent set of weights),
    // answered by boundaryReady: one request in flight, the latest one waiting (a burst of
    // requests while training costs the worker one grid at a time).
    void requestBoundary(const tasks::BoundaryPlane& plane);

signals:
    // step: the weights' step; error: why there is no grid (no model yet, not a table...).
    void boundaryReady(qint64 step, const il::tasks::BoundaryGrid& grid, const QString& error);

private:
    void sendBoundary(const tasks::BoundaryPlane& plane);

    Session& m_session;
    LatestRequest<tasks::BoundaryPlane> m_boundary;
};

} // namespace il::app

Q_DECLARE_METATYPE(il::tasks::BoundaryGrid)
