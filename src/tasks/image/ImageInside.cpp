// A picture's view of its network's units (Task::lookInside, NetworkInside.h): the first feature
// layers' units over the picture's field of view.
#include "ImageTask.h"
#include "NetworkInside.h"

#include <algorithm>

namespace il::tasks {

void ImageTask::lookInside(Network& net, const InsideRequest& request, NetworkInside& inside) const
{
    const ImageGeometry& g = geometry();
    const int side = std::max(2, request.side);
    const QSize size = g.width >= g.height
                           ? QSize(side, std::max(2, side * g.height / std::max(1, g.width)))
                           : QSize(std::max(2, side * g.width / std::max(1, g.height)), side);
    const std::vector<int> layers = unitview::columnLayers(net, true, request.maxColumns);
    const std::vector<float> x = imageCoordinates(g, size);
    const int64_t points = int64_t(size.width()) * size.height();
    std::vector<int64_t> widths;
    const auto outputs = unitview::layerOutputs(net, x, points, layers, widths);
    inside.view = InsideView::Picture;
    inside.mapWidth = size.width();
    inside.mapHeight = size.height();
    inside.columns = unitview::makeColumns(net, layers, widths, request.maxUnits);
    for (size_t k = 0; k < layers.size(); ++k) {
        unitview::fillMaps(inside.columns[k], outputs[k], points, widths[k]);
        unitview::judgeUnits(inside.columns[k], outputs[k], points, widths[k]);
    }
    inside.note = "Each unit's output over the picture";
}

} // namespace il::tasks
