// What each unit of a network has learned, as numbers the studio's Network tab draws (no
// widgets here): computed on the training worker between two steps from the weights of that
// moment, then handed to the GUI thread.
//
// - A table of two numeric features, or two chosen numeric features of a larger table (the others
//   held at their training means): every hidden unit's output over the plane of the two (the
//   decision boundary's plane, TabularBoundary.h), the dense weights that feed each layer, and the
//   output's own map, as TensorFlow Playground draws its toy data.
// - Any other table: each hidden unit's outputs over the validation rows as a histogram.
// - A picture: the units of the first feature layers (Fourier features, sine, hash grid,
//   activations) over the picture's field of view.
// - Names: the character embeddings projected on their two principal axes.
//
// In every kind a unit is marked dead when it gives the same output on every row (a ReLU stuck
// at 0) and saturated when a tanh or sigmoid sits at its ends on nearly every row.
#pragma once

#include "Network.h"

#include <QString>
#include <QStringList>

#include <cmath>
#include <string>
#include <vector>

namespace il::tasks {

class Task;

enum class InsideView {
    None,          // nothing to show: note says why
    Plane,         // a table of two numeric features: unit maps over the plane
    Distributions, // another table: unit histograms over the validation rows
    Picture,       // an image: unit maps over the picture
    Embedding,     // names: the characters' embeddings in 2-D
};

// One layer's units, drawn as a column of the view.
struct UnitColumn {
    int layer = 0;     // index in the network
    std::string kind;  // the layer's kind: "tanh", "relu", "sine", "fourier"...
    int64_t units = 0; // the layer's output width
    int shown = 0;     // units drawn: the first `shown` (InsideRequest::maxUnits)...
    int stride = 1;    // ...every stride-th: a hash grid's first feature of each level
    // Plane and Picture: one map of mapWidth x mapHeight values per shown unit, unit-major, rows
    // from the top: maps[(u * mapHeight + j) * mapWidth + i]; lo, hi: the values' range over all
    // of this column's maps.
    std::vector<float> maps;
    // Distributions: kInsideBins counts per shown unit over [lo, hi].
    std::vector<int> histograms;
    float lo = 0, hi = 0;
    // Per shown unit: the same output on every row (dead), or at a tanh's or sigmoid's ends on
    // at least 95% of the rows (saturated); judged on the validation rows (training rows when
    // there are none), for a picture on the map's points.
    std::vector<char> dead, saturated;
    // The dense layer that feeds this column from the one before (the inputs for the first):
    // weights[o * fanIn + i] from unit i before to unit o here (o < shown, every i: the view
    // draws those between shown units; PyTorch's layout); empty when no dense layer lies
    // between the two, or its inputs are not the previous column's units.
    std::vector<float> weights;
    int64_t fanIn = 0;
};

inline constexpr int kInsideBins = 24;

struct NetworkInside {
    InsideView view = InsideView::None;
    QString note; // None: why not; otherwise a line saying what is drawn
    int64_t step = 0;
    int mapWidth = 0, mapHeight = 0;
    std::vector<UnitColumn> columns;
    QStringList inputNames; // Plane: the two features; Distributions: every input column
    // Plane: the axes' ranges (file units) and the output's map: the winning class per point
    // (classes > 0) or the first output's value (classes == 0), with its range.
    double xMin = 0, xMax = 1, yMin = 0, yMax = 1;
    std::vector<float> output;
    int classes = 0;
    float outputLo = 0, outputHi = 1;
    // Embedding: one point per vocabulary entry (the name boundary first), on the first two
    // principal axes of the embedding rows; explained: their share of the variance.
    QStringList letters;
    std::vector<float> x, y;
    double explained = NAN;
    // Per letter: the three letters whose embeddings are nearest (in every dimension, not
    // only the two drawn), nearest first.
    std::vector<QStringList> nearest;
};

struct InsideRequest {
    // A table of more than two features: the two numeric features (indices into the schema's
    // features) whose plane the units are drawn over, the others held at their training means;
    // -1: histograms over the rows. A table of two numeric features always gets its plane.
    int featureA = -1, featureB = -1;
    int side = 32;      // map points along the longer side
    int maxUnits = 16;  // units drawn per layer at most
    int maxColumns = 4; // layers drawn at most (a picture's first feature layers)
};

// What net has learned on task's data (see the top of this file): Task::lookInside, where each
// kind fills its own view. Throws what the backend throws.
NetworkInside lookInside(const Task& task, Network& net, const InsideRequest& request = {});

// The parts every kind's view is built from (Task::lookInside in each kind's folder).
namespace unitview {

// The layers drawn as columns: element-wise activations (tanh, relu, sine...), and with
// features also the feature layers (fourier, hashgrid); never the last layer (the output's).
std::vector<int> columnLayers(const Network& net, bool features, int maxColumns);
// The outputs of `layers` for rows of x (rows x net.inputWidth()), each rows x widths[k].
std::vector<std::vector<float>> layerOutputs(Network& net, const std::vector<float>& x,
                                             int64_t rows, const std::vector<int>& layers,
                                             std::vector<int64_t>& widths);
// Evenly spaced rows of x (rows x width), at most 2,000; kept: how many.
std::vector<float> someRows(const std::vector<float>& x, int64_t rows, int64_t width,
                            int64_t& kept);
// Columns for `layers` with their kinds, widths and shown counts (at most maxUnits each), and
// the dense weights between them.
std::vector<UnitColumn> makeColumns(const Network& net, const std::vector<int>& layers,
                                    const std::vector<int64_t>& widths, int maxUnits);
// Dead and saturated marks of the first c.shown units from their outputs (rows x width).
void judgeUnits(UnitColumn& c, const std::vector<float>& out, int64_t rows, int64_t width);
// Maps of the first c.shown units (out: points x width, points = mapWidth x mapHeight).
void fillMaps(UnitColumn& c, const std::vector<float>& out, int64_t points, int64_t width);
// Histograms of the first c.shown units over their outputs (rows x width).
void fillHistograms(UnitColumn& c, const std::vector<float>& out, int64_t rows, int64_t width);

} // namespace unitview

// The two principal axes of rows (n x d, row-major) and each row's position on them (x, y);
// returns their share of the total variance (NaN for fewer than 2 rows). Deterministic.
double principalPlane(const std::vector<float>& rows, int64_t n, int64_t d, std::vector<float>& x,
                      std::vector<float>& y);

} // namespace il::tasks
