// Tables: a CSV file becomes training tensors, and network outputs become predictions and
// metrics in the table's own units.
//
// Issue #2 scope: numeric columns with a header; the target is the last column unless named;
// classification when the target holds few distinct whole numbers (or when asked), otherwise
// regression. Features (and regression targets) are z-score normalised with statistics fitted
// on the training split only and saved in the model.
#pragma once

#include "Backend.h"
#include "CsvTable.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <vector>

namespace il::tasks {

enum class TabularKind { Regression, Binary, MultiClass };

struct TabularOptions {
    QString target;        // column name or 1-based number; empty: the last column
    QString kind = "auto"; // auto | regression | classification
    double valSplit = -1;  // fraction for validation; < 0: 0.2, or 0 below 20 rows
    uint64_t seed = 1;
    // Resuming: keep this schema (kind, classes, normalisation) instead of fitting a new one;
    // only the split is recomputed (same seed and fraction give the same rows).
    const struct TabularSchema* fixedSchema = nullptr;
};

// What a model remembers about its table (stored as the model's "task" metadata).
struct TabularSchema {
    QStringList features;
    QString target;
    TabularKind kind = TabularKind::Regression;
    QStringList classes;            // class labels as written in the file (classification)
    std::vector<float> classValues; // their numeric values, ascending (text labels: 0, 1, ...)
    bool textClasses = false;       // labels are text; rows are matched by label
    std::vector<float> featureMean, featureStd;
    float targetMean = 0.f, targetStd = 1.f; // regression only

    int64_t inputWidth() const { return features.size(); }
    int64_t outputWidth() const;
    LossKind loss() const;
    bool isClassification() const { return kind != TabularKind::Regression; }
    QString kindName() const;
    // The options that produced the split, so a resumed run splits the same way.
    double valSplit = 0;
    uint64_t splitSeed = 1;

    QJsonObject toJson() const;
    static bool fromJson(const QJsonObject& task, TabularSchema& out, QString* error);
};

// Encoded rows, ready for the engine: x normalised (rows x features); y normalised targets
// (regression), 0/1 (binary) or class ids (multi-class), one column.
struct TabularSplit {
    int64_t rows = 0;
    std::vector<float> x, y;
    std::vector<float> rawTarget; // target in the file's units
    std::vector<int64_t> lines;   // file line of each row
};

struct TabularDataset {
    TabularSchema schema;
    TabularSplit train, val;
    QString note; // e.g. "4 rows: no validation split"
};

// Builds schema and splits from a table. false + one-line message (file:line:column) on error.
bool prepareTabular(const io::CsvTable& table, const TabularOptions& options, TabularDataset& out,
                    QString* error);
// Encodes another table (evaluate, predict) with a saved schema; columns are found by name.
bool encodeTabular(const io::CsvTable& table, const TabularSchema& schema, TabularSplit& out,
                   QString* error);

struct TabularMetrics {
    bool classification = false;
    double mse = 0, rmse = 0, mae = 0, r2 = 0; // regression, original units
    double accuracy = 0;                       // classification
    int64_t rows = 0;
};

// Prediction per row in the file's units: the regression value, or the class index.
std::vector<double> tabularPredictions(const TabularSchema& schema,
                                       const std::vector<float>& outputs);
// For classification, the probability of each class (rows x classes).
std::vector<double> tabularProbabilities(const TabularSchema& schema,
                                         const std::vector<float>& outputs);
TabularMetrics tabularMetrics(const TabularSchema& schema, const std::vector<float>& outputs,
                              const TabularSplit& data);

// The metric keys of --metrics-json (mse, rmse, mae, r2 or accuracy) and a summary line.
QJsonObject tabularMetricsJson(const TabularSchema& schema, const TabularMetrics& m,
                               const std::vector<float>& outputs, const TabularSplit& data);
QString describeTabularMetrics(const TabularMetrics& m, const QString& where);

// Defaults for a new model of this table.
QString defaultTabularSpec(const TabularSchema& schema);

} // namespace il::tasks

#include "Task.h"

namespace il::tasks {

// The table task behind the Task interface (CLI and GUI).
std::unique_ptr<Task> openTabularTask(const QString& pathForMessages, const QByteArray& bytes,
                                      const TaskOptions& options, const QJsonObject* savedTask,
                                      bool forEvaluation, QString* error);

} // namespace il::tasks
