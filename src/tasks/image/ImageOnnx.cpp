// A picture's ONNX graph around its network (TaskType::onnxGraph, io::exportOnnx): pixel
// coordinates in, intensities out.
#include "OnnxGraph.h"

#include "ImageTask.h"

#include "Network.h"

#include <cmath>

namespace il::tasks {

using io::onnxexport::Refusal;
using io::onnxexport::TaskGraph;

// An image: pixel coordinates in, intensities out.
void imageOnnxGraph(TaskGraph& t)
{
    const int64_t channels = t.net.outputWidth();
    if (t.net.inputWidth() != 2 || (channels != 1 && channels != 3))
        throw Refusal{QStringLiteral("an image model maps 2 coordinates to 1 or 3 channels; "
                                     "this network has %1 inputs and %2 outputs")
                          .arg(t.net.inputWidth())
                          .arg(channels)};
    t.g.input("coordinates", onnx::TensorProto::FLOAT, {-1, 2},
              "(x, y) per pixel: pixel centres of the training picture's field of view, its "
              "longer side from -1 to 1 (model.py's image_coordinates)");
    t.lines << "input  coordinates  float [N, 2]: (x, y), the longer side of the picture "
               "from -1 to 1";
    const std::string z = t.network("coordinates", false);
    t.g.node("Clip", {z, t.g.scalar("low", 0.f), t.g.scalar("high", 1.f)}, "intensities",
             "intensities");
    t.g.output("intensities", onnx::TensorProto::FLOAT, {-1, channels},
               channels == 1 ? "grey level per pixel, 0 to 1"
                             : "red, green, blue per pixel, 0 to 1");
    t.lines << QStringLiteral("output intensities  float [N, %1]: %2, 0 to 1")
                   .arg(channels)
                   .arg(channels == 1 ? "grey" : "red, green, blue");
    for (const char* key : {"width", "height"}) {
        const QJsonValue v = t.task.value(QLatin1String(key));
        if (!v.isDouble() || v.toDouble() < 1 || v.toDouble() != std::floor(v.toDouble()))
            throw Refusal{
                QStringLiteral("task: \"%1\" is not a size in pixels").arg(QLatin1String(key))};
        t.metadata(std::string("training_") + key, QString::number(v.toInteger()));
    }
    t.metadata("coordinates",
               "x = (2i + 1 - W) / L, y = (2j + 1 - H) / L for the pixel in column i, row j of "
               "a W x H picture, L = max(W, H)");
}

} // namespace il::tasks
