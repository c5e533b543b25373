// A table model's prediction over a plane of two features: the numbers behind the studio's
// decision-boundary view (what TensorFlow Playground draws). Two numeric features span the
// plane; every other feature is held at one value (its training mean, the most common
// category of a one-hot feature, or one training row's). Each grid point becomes a row in the
// file's units and is encoded and normalised with the schema exactly as a row of the file is,
// so the picture is the model's own answer for that row. The training and validation rows come
// along as points, in the file's units. No widgets: the studio calls boundaryGrid on its
// training worker between two steps and draws the result on the GUI thread.
#pragma once

#include "TabularTask.h"

#include <QString>
#include <QStringList>

#include <cmath>
#include <vector>

namespace il::tasks {

// Grid sides the view may ask for.
constexpr int kMinBoundarySide = 2, kMaxBoundarySide = 512;
// Points drawn at most (an evenly spaced subset of a larger split).
constexpr int64_t kMaxBoundaryTrainPoints = 1500, kMaxBoundaryValPoints = 500;

// Which plane, at what resolution, with the other features where.
struct BoundaryPlane {
    int featureA = 0, featureB = 1; // the axes: indices into schema.features, numeric ones only
    // One value per feature in the file's units (one-hot features: the category's index); the
    // axes' entries are ignored. Empty: boundaryHeldValues(schema, data, heldRow), i.e. the
    // training means (heldRow < 0) or that training row's values.
    std::vector<double> held;
    int64_t heldRow = -1;
    int width = 72, height = 72; // grid points along x (featureA) and y (featureB)
};

struct BoundaryPoint {
    double x = 0, y = 0;
    int label = 0;    // classification: the class index
    double value = 0; // regression: the first target, in the file's units
    bool validation = false;
};

// The prediction on a width x height grid of cells tiling [xMin, xMax] x [yMin, yMax] in the
// file's units: cell (i, j) is predicted at its centre (xAt(i), yAt(j)), i from left to right,
// j from the top (yMax) down, as an image is stored, so the grid drawn as an image stretched
// over the plot's axes puts each value where it belongs.
struct BoundaryGrid {
    int width = 0, height = 0;
    double xMin = 0, xMax = 1, yMin = 0, yMax = 1;
    QString xName, yName;
    bool classification = false;
    QStringList classes;
    // Classification: the probability of each class, (j * width + i) * classes + c.
    // Regression: the first target in the file's units, j * width + i.
    std::vector<float> values;
    // Regression: the training targets' range (the colour ramp's ends) and the target's name.
    double valueMin = 0, valueMax = 1;
    QString valueName;
    std::vector<double> held; // what every other feature was held at (file units / index)
    QString heldText;         // "age = 48.5, sex = female"; empty with two features
    std::vector<BoundaryPoint> points;
    int64_t trainRows = 0, valRows = 0; // rows in the splits (points may show fewer)

    double xAt(int i) const { return xMin + (xMax - xMin) * (i + 0.5) / width; }
    double yAt(int j) const { return yMax - (yMax - yMin) * (j + 0.5) / height; }
};

// The features an axis may show: the numeric ones (indices into schema.features).
std::vector<int> boundaryAxes(const TabularSchema& schema);

// Where the other features are held: trainRow < 0, the training rows' mean of each numeric
// feature and the most common category of each one-hot feature; otherwise that training row's
// values (0-based, clamped to the rows there are). One entry per feature, in the file's units.
std::vector<double> boundaryHeldValues(const TabularSchema& schema, const TaskData& data,
                                       int64_t trainRow);

// One row of feature values in the file's units (one-hot features: the category's index),
// encoded and normalised as the network sees a row of the file.
std::vector<float> encodeFeatureValues(const TabularSchema& schema,
                                       const std::vector<double>& values);

// The network's prediction over the plane, and the rows as points. The axes span the training
// and validation rows' range of each feature plus a margin. false + one-line message (a
// feature that is not numeric, the same feature twice, a grid side out of range).
bool boundaryGrid(Network& net, const TabularSchema& schema, const TaskData& data,
                  const BoundaryPlane& plane, BoundaryGrid& out, QString* error);

} // namespace il::tasks
