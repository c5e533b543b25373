// The request only image models answer: a picture at any size, rendered on the training worker
// (between two steps while training) and answered by renderReady.
#include "ImageRequests.h"

#include "ImageModelState.h"

namespace il::app {

void ImageRequests::render(QSize size)
{
    m_session.ask(
        this,
        [size](ModelState& m) {
            std::pair<QImage, QString> out; // the image, or why there is none
            if (!m.network)
                out.second = "There is no model yet: press Start to train one.";
            else if (const auto* task = imageTaskOf(m))
                out.first = task->render(*m.network, size, &out.second);
            else if (const auto* geometry = imageGeometryOf(m))
                out.first = tasks::renderImage(*m.network, *geometry, size, &out.second);
            else
                out.second = "Only image models render pictures.";
            return out;
        },
        [this](const std::pair<QImage, QString>& out) { emit renderReady(out.first, out.second); });
}

} // namespace il::app
