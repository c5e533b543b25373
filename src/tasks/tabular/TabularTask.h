// Tables: a CSV file (or an Iron Learn JSON dataset) becomes training tensors, and network
// outputs become predictions and metrics in the table's own units.
//
// Roles: the targets (the last column unless named; several for multi-output regression),
// the features (every other column unless named, minus --ignore). Numeric features pass
// through normalisation; text features with at most kMaxOneHot distinct values are one-hot
// encoded (their categories are kept in the model); other text features are refused.
// Kind: a text target, or one with a few distinct whole numbers, makes a classification task;
// anything else is regression. Missing cells (empty, NA, N/A, NaN, null) fail the load with
// their lines, drop their rows, leave out the features that have them, or are filled with the
// training rows' mean (numeric features; kept in the model). Normalisation (z-score or min-max) is
// fitted on the training split only and saved in the model; predictions and metrics are in the
// file's units.
#pragma once

#include "Backend.h"
#include "CsvTable.h"
#include "Task.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <cmath>
#include <memory>
#include <vector>

namespace il::tasks {

enum class TabularKind { Regression, Binary, MultiClass };

constexpr int kMaxOneHot = 20;      // distinct values of a text feature
constexpr int kMaxAutoClasses = 20; // distinct whole numbers that still make classes
constexpr int kMaxClasses = 1000;
// Tables of fewer rows get no validation split by default (TabularOptions::valSplit < 0).
constexpr int64_t kMinRowsForValidation = 20;

// A wide-and-deep network (a stack ending in dense, skip) keeps its trained weights at the end of
// a run only when its validation loss is below its linear start's by more than this many
// standard errors of the row-by-row difference; otherwise it goes back to the linear model
// (Task::settle). Chosen on the table corpus (docs/table-corpus.md).
constexpr double kSettleMargin = 2.0;
// Fewer validation rows than this cannot judge: the network is kept as trained.
constexpr int64_t kMinSettleRows = 10;
// Regression tables of at least kMinRowsForValidation and fewer rows than this are
// cross-validated by default (TabularOptions::folds < 0, "automatic"): kDefaultFolds folds, and
// the default stack (the ensemble preset) keeps their networks averaged and blended with least
// squares (FoldModel::Averaged). On held-out regression tables chosen before it was run this had
// 0.96x scikit-learn's better MLP's test error where a validation split and the wide stack had
// 1.10x (docs/cross-validation.md). Classification tables keep a validation split: the folds'
// refit did worse there.
constexpr int64_t kCrossValidateBelowRows = 5000;
constexpr int kDefaultFolds = 5;

struct TabularOptions {
    QString target;        // name or 1-based number, or several joined by commas; empty: last
    QStringList features;  // names, numbers or ranges ("2-5"); empty: every other column
    QStringList ignore;    // columns to leave out
    QString kind = "auto"; // auto | regression | classification
    QString normalisation = "zscore"; // zscore | minmax
    QString missing = "fail";         // fail | drop | ignore | mean (TaskOptions::missing)
    double valSplit = -1;             // fraction for validation; < 0: 0.2, or 0 below 20 rows
    // Cross-validation folds: < 0 (what openTask passes by default, TaskOptions::folds)
    // kDefaultFolds for a regression table of kMinRowsForValidation to kCrossValidateBelowRows
    // rows when no validation split is given, else 0; 0 off (the default here); K >= 2: K folds,
    // and no validation split (every row trains).
    int folds = 0;
    double testSplit = 0; // fraction held out for testing (JSON files with x_test have theirs)
    uint64_t seed = 1;
    MessageReader reader = MessageReader::Cli;
    // Resuming: keep this schema (roles, kind, classes, categories, normalisation) instead of
    // fitting a new one; only the split is recomputed (same seed and fractions, same rows).
    const struct TabularSchema* fixedSchema = nullptr;
};

// What a model remembers about its table (stored as the model's "task" metadata).
struct TabularSchema {
    QStringList features;                       // input columns, in order
    std::vector<QStringList> featureCategories; // per feature: one-hot categories; empty: number
    QString target;                             // the first target
    QStringList targets;                        // every target (regression may have several)
    TabularKind kind = TabularKind::Regression;
    QStringList classes;            // class labels as written in the file (classification)
    std::vector<float> classValues; // their numeric values, ascending (text labels: 0, 1, ...)
    bool textClasses = false;       // labels are text; rows are matched by label
    QString normalisation = "zscore";
    // input' = (input - offset) / scale, one pair per network input (one-hot inputs: 0 and 1).
    std::vector<float> inputOffset, inputScale;
    // Regression targets the same way, one pair per target; predictions are turned back.
    std::vector<float> targetOffset, targetScale;
    // How the rows were chosen and split, so a resumed run gets the same rows.
    double valSplit = 0, testSplit = 0;
    uint64_t splitSeed = 1;
    // Cross-validated (with valSplit 0): the folds the run was chosen on; 0 none.
    int folds = 0;
    QString missing = "fail";
    // Policy "mean": per feature, the value a missing cell stands for (a numeric feature's mean
    // over the training rows that have it; 0 for one-hot features). Empty otherwise.
    std::vector<float> missingFill;

    int64_t inputWidth() const;
    QStringList inputNames() const; // "bmi", "colour=red", ...
    int64_t outputWidth() const;
    int64_t targetWidth() const { return kind == TabularKind::Regression ? targets.size() : 1; }
    LossKind loss() const;
    bool isClassification() const { return kind != TabularKind::Regression; }
    QString kindName() const;

    QJsonObject toJson() const;
    static bool fromJson(const QJsonObject& task, TabularSchema& out, QString* error);
};

// Encoded rows, ready for the engine: x normalised (rows x inputWidth); y normalised targets
// (regression, rows x targets), 0/1 (binary) or class ids (multi-class, one column).
struct TabularSplit {
    int64_t rows = 0;
    std::vector<float> x, y;
    // In the file's units: regression rows x targets; classification the class value (numeric
    // labels) or index (text labels). Empty when the file has no target column (predict).
    std::vector<float> rawTarget;
    std::vector<int64_t> source; // the table row of each row
};

struct TabularDataset {
    TabularSchema schema;
    TabularSplit train, val, test;
    QStringList notes; // e.g. "dropped 3 rows with missing values (lines 4, 9, 12)"
};

// Reads a CSV table or a JSON dataset from bytes (CLI, samples) or streams a CSV file from
// disk (large files: memory stays near the size of the floats). false + one-line message.
bool readTable(const QString& pathForMessages, const QByteArray& bytes, io::CsvTable& out,
               QString* error);
bool readTableFile(const QString& pathForMessages, const QString& filePath, io::CsvTable& out,
                   QString* error);

// Builds schema and splits from a table. false + one-line message naming the file and the
// line and column (or the option) at fault.
bool prepareTabular(const io::CsvTable& table, const TabularOptions& options, TabularDataset& out,
                    QString* error);
// Encodes every row of another table with a saved schema (evaluate, predict); columns are
// found by name. withTargets: use the target columns when the file has them (evaluate);
// otherwise ignore them, even half empty (predict). missing: "fail", "drop" (dropped rows
// are left out of out.source and named in notes) or "mean" (the schema's missingFill).
bool encodeTabular(const io::CsvTable& table, const TabularSchema& schema, const QString& missing,
                   bool withTargets, TabularSplit& out, QStringList* notes, QString* error,
                   MessageReader reader = MessageReader::Cli);

// The missing cells of a table as a new model would read it (the roles of options), and what
// each policy (TaskOptions::missing) would do with them: for a front end that lets its user
// choose (the studio's Data tab).
struct MissingValues {
    int64_t rows = 0;           // rows of the table
    int64_t incompleteRows = 0; // rows with a missing cell in a used column: "drop" drops them
    QStringList features;       // features with missing cells: "ignore" leaves them out
    int64_t targetRows = 0;     // rows with a missing target: "ignore" drops them
    int64_t filledRows = 0;     // rows whose missing cells are numeric features: "mean" fills them
    int64_t unfillableRows = 0; // rows with a missing target or text feature: "mean" drops them
    bool any() const { return incompleteRows > 0; }
};
// false (error says why) when the file is not a table that can be read or its columns chosen.
bool findMissingValues(const QString& pathForMessages, const QByteArray& bytes,
                       const TaskOptions& options, MissingValues& out, QString* error);

struct ClassScores {
    double precision = 0, recall = 0, f1 = 0;
    int64_t support = 0; // rows of this class
};
struct RegressionScores {
    double mse = 0, rmse = 0, mae = 0, r2 = 0;
};

struct TabularMetrics {
    bool classification = false;
    int64_t rows = 0;
    // Regression, in the file's units: averaged over the targets, and per target.
    double mse = 0, rmse = 0, mae = 0, r2 = 0;
    // Regression: the MSE on the targets as the network sees them (z-scores or 0..1, the
    // schema's normalisation), i.e. on the scale of the MSE training loss; averaged over the
    // targets. NaN without target scales.
    double normalisedMse = NAN;
    bool minMax = false; // the targets are scaled to 0..1 rather than standardised
    QStringList targets;
    std::vector<RegressionScores> perTarget;
    // Classification.
    double accuracy = 0;
    // The mean recall of the classes that occur in these rows (scikit-learn's
    // balanced_accuracy_score): always answering the majority class scores 1 / classes.
    double balancedAccuracy = 0;
    double macroF1 = 0;
    QStringList classes;
    std::vector<ClassScores> perClass;
    std::vector<int64_t> confusion; // classes x classes, rows actual, columns predicted
    double rocAuc = NAN;            // binary, when both classes occur
};

// Predictions in the file's units: regression rows x targets; classification the class index.
std::vector<double> tabularPredictions(const TabularSchema& schema,
                                       const std::vector<float>& outputs);
// For classification, the probability of each class (rows x classes).
std::vector<double> tabularProbabilities(const TabularSchema& schema,
                                         const std::vector<float>& outputs);
TabularMetrics tabularMetrics(const TabularSchema& schema, const std::vector<float>& outputs,
                              const TabularSplit& data);
// Area under the ROC curve of scores for labels (1 positive, 0 negative); ties count half.
// NaN unless both labels occur.
double rocAuc(const std::vector<double>& scores, const std::vector<int>& labels);

// The metric keys of --metrics-json: mse, rmse, mae, r2 (and per_target); or accuracy,
// balanced_accuracy, per_class, confusion_matrix, classes, macro_f1 and, for two classes, roc_auc.
// And a summary for people (several lines for classification: per-class table, confusion matrix).
QJsonObject tabularMetricsJson(const TabularSchema& schema, const TabularMetrics& m,
                               const std::vector<float>& outputs, const TabularSplit& data);
QString describeTabularMetrics(const TabularMetrics& m, const QString& where);

// Rows of the file a table task keeps for previews (DatasetPanel).
constexpr int64_t kTablePreviewRows = 200;

// The table task; also reachable as a Task through openTask / openTaskForModel.
class TabularTask : public Task {
public:
    virtual const TabularSchema& schema() const = 0;
    // The split (the column roles are the schema's, which the Data panel shows).
    void lookInside(Network& net, const InsideRequest& request,
                    NetworkInside& inside) const override;
    // Its numeric features (boundaryAxes); inputCount: all its features.
    std::vector<std::pair<int, QString>> insidePlaneAxes(int* inputCount) const override;
    void describeOptions(TaskOptions& options) const override
    {
        options.valSplit = schema().valSplit;
        options.missing = schema().missing;
    }
    QStringList classLabels() const override
    {
        return schema().isClassification() ? schema().classes : QStringList();
    }
    // The file as read, cut to its first kTablePreviewRows rows: every column, with the
    // whole file's counts (missing cells, distinct values).
    virtual const io::CsvTable& head() const = 0;
};

// The description of table tasks (name, files, presets, metric).
const TaskType& tabularTaskType();
// Its ONNX graph around the network (TabularOnnx.cpp; its TaskType::onnxGraph).
void tabularOnnxGraph(io::onnxexport::TaskGraph& t);

// The table task behind the Task interface (CLI and GUI).
std::unique_ptr<Task> openTabularTask(const QString& pathForMessages, const QByteArray& bytes,
                                      const TaskOptions& options, const QJsonObject* savedTask,
                                      bool forEvaluation, QString* error);

} // namespace il::tasks
