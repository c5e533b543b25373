// A picture's ONNX graph around its network (TaskType::onnxGraph, io::exportOnnx): pixel
// coordinates in, intensities out.
#include "OnnxGraph.h"

#include "ImageTask.h"

#include "Network.h"

#include <cmath>

namespace il::tasks {

#ifdef IRONLEARN_HAVE_ONNX

namespace {

using io::onnxexport::Graph;
using io::onnxexport::Refusal;
using io::onnxexport::TaskGraph;

// An image: pixel coordinates in, intensities out.
void imageGraph(TaskGraph& t)
{
    Graph& g = t.g;
    const QJsonObject& task = t.task;
    const Network& net = t.net;
    QStringList& lines = t.lines;
    const int64_t channels = net.outputWidth();
    if (net.inputWidth() != 2 || (channels != 1 && channels != 3))
        throw Refusal{QStringLiteral("an image model maps 2 coordinates to 1 or 3 channels; "
                                     "this network has %1 inputs and %2 outputs")
                          .arg(net.inputWidth())
                          .arg(channels)};
    g.input("coordinates", onnx::TensorProto::FLOAT, {-1, 2},
            "(x, y) per pixel: pixel centres of the training picture's field of view, its "
            "longer side from -1 to 1 (model.py's image_coordinates)");
    lines << "input  coordinates  float [N, 2]: (x, y), the longer side of the picture "
             "from -1 to 1";
    const std::string z = t.network("coordinates", false);
    g.node("Clip", {z, g.scalar("low", 0.f), g.scalar("high", 1.f)}, "intensities", "intensities");
    g.output("intensities", onnx::TensorProto::FLOAT, {-1, channels},
             channels == 1 ? "grey level per pixel, 0 to 1" : "red, green, blue per pixel, 0 to 1");
    lines << QStringLiteral("output intensities  float [N, %1]: %2, 0 to 1")
                 .arg(channels)
                 .arg(channels == 1 ? "grey" : "red, green, blue");
    for (const char* key : {"width", "height"}) {
        const QJsonValue v = task.value(QLatin1String(key));
        if (!v.isDouble() || v.toDouble() < 1 || v.toDouble() != std::floor(v.toDouble()))
            throw Refusal{
                QStringLiteral("task: \"%1\" is not a size in pixels").arg(QLatin1String(key))};
        t.metadata((std::string("training_") + key).c_str(), QString::number(v.toInteger()));
    }
    t.metadata("coordinates",
               "x = (2i + 1 - W) / L, y = (2j + 1 - H) / L for the pixel in column i, row j of "
               "a W x H picture, L = max(W, H)");
}

} // namespace

TaskType::OnnxGraph imageOnnxGraph()
{
    return imageGraph;
}

#else

TaskType::OnnxGraph imageOnnxGraph()
{
    return nullptr; // this build has no ONNX export
}

#endif

} // namespace il::tasks
