// A table's view of its network's units (Task::lookInside, NetworkInside.h): the plane of two
// numeric features, or each unit's histogram over the rows.
#include "NetworkInside.h"
#include "TabularBoundary.h"
#include "TabularTask.h"

#include <algorithm>

namespace il::tasks {

// Long: judges the units on real rows, then fills the histograms or the plane's maps; both
// views fill the same columns from the same layers and widths.
void TabularTask::lookInside(Network& net, const InsideRequest& request,
                             NetworkInside& inside) const
{
    const TabularSchema& schema = this->schema();
    const TaskData& data = this->data();
    const std::vector<int> layers = unitview::columnLayers(net, false, request.maxColumns);
    const std::vector<int> axes = boundaryAxes(schema);
    const auto numeric = [&axes](int f) {
        return std::find(axes.begin(), axes.end(), f) != axes.end();
    };
    const bool chosen = request.featureA != request.featureB && numeric(request.featureA) &&
                        numeric(request.featureB);
    const bool plane = (schema.features.size() == 2 && axes.size() == 2) || chosen;
    // The rows the units are judged on (and, for other tables, counted over).
    const bool val = data.valRows > 0;
    int64_t rows = 0;
    const std::vector<float> x = unitview::someRows(
        val ? data.valX : data.trainX, val ? data.valRows : data.trainRows, data.inputWidth, rows);
    std::vector<int64_t> widths;
    const auto outputs = unitview::layerOutputs(net, x, rows, layers, widths);
    inside.columns = unitview::makeColumns(net, layers, widths, request.maxUnits);
    for (size_t k = 0; k < layers.size(); ++k)
        unitview::judgeUnits(inside.columns[k], outputs[k], rows, widths[k]);
    if (!plane) {
        inside.view = InsideView::Distributions;
        for (size_t k = 0; k < layers.size(); ++k)
            unitview::fillHistograms(inside.columns[k], outputs[k], rows, widths[k]);
        inside.note = QString("Each hidden unit's outputs over %1 %2 rows")
                          .arg(rows)
                          .arg(val ? "validation" : "training");
        return;
    }
    // The plane of the decision boundary: its grid, and the same points through every layer.
    BoundaryPlane p;
    if (chosen) {
        p.featureA = request.featureA;
        p.featureB = request.featureB;
    } else {
        p.featureA = axes[0];
        p.featureB = axes[1];
    }
    p.width = p.height = std::clamp(request.side, kMinBoundarySide, kMaxBoundarySide);
    BoundaryGrid grid;
    QString error;
    if (!boundaryGrid(net, schema, data, p, grid, &error)) {
        inside.view = InsideView::None;
        inside.note = error;
        return;
    }
    inside.view = InsideView::Plane;
    inside.mapWidth = grid.width;
    inside.mapHeight = grid.height;
    inside.xMin = grid.xMin;
    inside.xMax = grid.xMax;
    inside.yMin = grid.yMin;
    inside.yMax = grid.yMax;
    inside.inputNames = {grid.xName, grid.yName};
    const int64_t points = int64_t(grid.width) * grid.height;
    std::vector<float> gx;
    gx.reserve(static_cast<size_t>(points * net.inputWidth()));
    std::vector<double> values = grid.held;
    for (int j = 0; j < grid.height; ++j)
        for (int i = 0; i < grid.width; ++i) {
            values[static_cast<size_t>(p.featureA)] = grid.xAt(i);
            values[static_cast<size_t>(p.featureB)] = grid.yAt(j);
            const std::vector<float> row = encodeFeatureValues(schema, values);
            gx.insert(gx.end(), row.begin(), row.end());
        }
    const auto maps = unitview::layerOutputs(net, gx, points, layers, widths);
    for (size_t k = 0; k < layers.size(); ++k)
        unitview::fillMaps(inside.columns[k], maps[k], points, widths[k]);
    // The output: the winning class, or the value, at each point.
    inside.output.resize(static_cast<size_t>(points));
    if (grid.classification) {
        inside.classes = static_cast<int>(grid.classes.size());
        for (int64_t q = 0; q < points; ++q) {
            const float* probs = grid.values.data() + q * inside.classes;
            inside.output[static_cast<size_t>(q)] =
                static_cast<float>(std::max_element(probs, probs + inside.classes) - probs);
        }
        inside.outputLo = 0;
        inside.outputHi = static_cast<float>(std::max(1, inside.classes - 1));
    } else {
        std::copy_n(grid.values.begin(), points, inside.output.begin());
        inside.outputLo = static_cast<float>(grid.valueMin);
        inside.outputHi = static_cast<float>(grid.valueMax);
        if (!(inside.outputHi > inside.outputLo)) inside.outputHi = inside.outputLo + 1;
    }
    inside.note = QString("Each hidden unit's output over the plane of %1 and %2")
                      .arg(grid.xName, grid.yName);
    if (schema.features.size() > 2) inside.note += ", the other features at their training means";
}

std::vector<std::pair<int, QString>> TabularTask::insidePlaneAxes(int* inputCount) const
{
    const TabularSchema& s = schema();
    if (inputCount) *inputCount = static_cast<int>(s.features.size());
    std::vector<std::pair<int, QString>> axes;
    for (int f : boundaryAxes(s))
        axes.emplace_back(f, s.features[f]);
    return axes;
}

} // namespace il::tasks
