// Names' view of their network (Task::lookInside, NetworkInside.h): the characters' embeddings
// on their two principal axes, with each one's nearest neighbours.
#include "NamesTask.h"
#include "NetworkInside.h"

#include <algorithm>

namespace il::tasks {

void NamesTask::lookInside(Network& net, const InsideRequest& request, NetworkInside& inside) const
{
    (void)request;
    if (net.layers().empty() || net.layers().front()->kind() != "embedding") {
        inside.note = "The network has no embedding to draw: its first layer is " +
                      QString::fromStdString(net.layers().empty() ? std::string("missing")
                                                                  : net.layers().front()->kind());
        return;
    }
    const NamesSchema& schema = this->schema();
    for (const NamedTensor& t : net.namedTensors()) {
        if (t.name != "layers.0.weight") continue;
        const int64_t n = t.tensor.rows(), d = t.tensor.cols();
        std::vector<float> rows(static_cast<size_t>(t.tensor.size()));
        net.backend().download(rows.data(), t.tensor);
        inside.explained = principalPlane(rows, n, d, inside.x, inside.y);
        inside.letters << schema.boundarySymbol;
        for (char32_t c : schema.alphabet)
            inside.letters << QString::fromUcs4(&c, 1);
        while (inside.letters.size() < n)
            inside.letters << "?";
        while (inside.letters.size() > n)
            inside.letters.removeLast();
        inside.nearest.assign(static_cast<size_t>(n), {});
        for (int64_t i = 0; i < n; ++i) {
            std::vector<std::pair<double, int64_t>> byDistance;
            for (int64_t k = 0; k < n; ++k) {
                if (k == i) continue;
                double d2 = 0;
                for (int64_t j = 0; j < d; ++j) {
                    const double e =
                        rows[static_cast<size_t>(i * d + j)] - rows[static_cast<size_t>(k * d + j)];
                    d2 += e * e;
                }
                byDistance.emplace_back(d2, k);
            }
            const size_t keep = std::min<size_t>(3, byDistance.size());
            std::partial_sort(byDistance.begin(), byDistance.begin() + static_cast<long>(keep),
                              byDistance.end());
            for (size_t k = 0; k < keep; ++k)
                inside.nearest[static_cast<size_t>(i)]
                    << inside.letters[static_cast<int>(byDistance[k].second)];
        }
        inside.view = InsideView::Embedding;
        inside.note = QString("The %1 characters' embeddings (%2 numbers each) on their two "
                              "principal axes")
                          .arg(n)
                          .arg(d);
        return;
    }
    inside.note = "The embedding's table was not found";
}

} // namespace il::tasks
