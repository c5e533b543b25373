// The Session's request that only image models answer: a picture at any size, rendered on the
// training worker (between two steps while training) and answered by renderReady.
#include "Session.h"

namespace il::app {

void Session::render(QSize size)
{
    m_worker->postAndReply(
        this,
        [size](ModelState& m) {
            std::pair<QImage, QString> out; // the image, or why there is none
            if (!m.network)
                out.second = "There is no model yet: press Start to train one.";
            else if (const auto* task = m.imageTask())
                out.first = task->render(*m.network, size, &out.second);
            else if (const auto* geometry = m.imageGeometry())
                out.first = tasks::renderImage(*m.network, *geometry, size, &out.second);
            else
                out.second = "Only image models render pictures.";
            return out;
        },
        [this](const std::pair<QImage, QString>& out) { emit renderReady(out.first, out.second); });
}

} // namespace il::app
