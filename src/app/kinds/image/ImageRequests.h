// The request only image models answer: a picture at any size (ImageRequests.cpp).
#pragma once

#include "Session.h"

#include <QImage>
#include <QObject>
#include <QSize>

namespace il::app {

class ImageRequests : public QObject {
    Q_OBJECT
public:
    explicit ImageRequests(Session* session) : QObject(session), m_session(*session) {}
    // The session's (Session::part).
    static ImageRequests& of(Session& session) { return session.part<ImageRequests>(); }

    // The model's picture at size, rendered on the training worker (between two steps while
    // training); renderReady answers.
    void render(QSize size);

signals:
    void renderReady(const QImage& image, const QString& error);

private:
    Session& m_session;
};

} // namespace il::app
