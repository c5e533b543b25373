#include "Limits.h"

#include "Network.h"

#include <algorithm>

namespace il {

int64_t activationFloatsPerRow(const Network& net)
{
    int64_t width = net.inputWidth(), maxWidth = width, total = width;
    for (const auto& layer : net.layers()) {
        const int64_t out = layer->outputWidth(width);
        total += out + layer->workspaceCols(width);
        width = out;
        maxWidth = std::max(maxWidth, width);
    }
    return total + 2 * maxWidth;
}

int64_t inferenceChunkRows(const Network& net, int64_t maxRows, int64_t bytes)
{
    const int64_t perRow = std::max<int64_t>(1, activationFloatsPerRow(net)) * 4;
    return std::clamp<int64_t>(bytes / perRow, 1, std::max<int64_t>(maxRows, 1));
}

} // namespace il
