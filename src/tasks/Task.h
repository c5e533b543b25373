// A task turns one kind of data (a table, an image, a list of names) into training tensors,
// sensible defaults, the metrics its users know, and the outputs they came for. The CLI and
// the GUI drive every task through this interface; each task adds its own outputs (render an
// image, generate names, predict rows) in its own header.
#pragma once

#include "Network.h"
#include "NetworkAverage.h"
#include "TaskType.h"
#include "Trainer.h"

#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

#include <cmath>
#include <memory>
#include <vector>

namespace il::tasks {

struct InsideRequest;
struct NetworkInside;

// Training tensors on the host, ready for one upload to the backend.
struct TaskData {
    int64_t inputWidth = 0;  // columns of x
    int64_t outputWidth = 0; // outputs of the network
    int64_t targetWidth = 0; // columns of y: outputWidth, or 1 for class ids
    int64_t vocab = 0;       // embedding vocabulary (names), 0 otherwise
    int64_t trainRows = 0, valRows = 0;
    std::vector<float> trainX, trainY, valX, valY;
};

// One row of a table model's predictions, in the file's units, next to the truth.
struct PredictionRow {
    QString actual, predicted;
    double confidence = NAN; // classification: the probability of the predicted class
    int correct = -1;        // 1 right, 0 wrong, -1 regression (see error)
    double error = NAN;      // regression: predicted - actual
    int64_t line = 0;        // where the row is in its file: a CSV line, a JSON example; 0: unknown
};

struct Predictions {
    bool classification = false;
    QString where; // "validation" or "training"
    std::vector<PredictionRow> rows;
};

struct TaskMetrics {
    QJsonObject values; // the keys of --metrics-json: "mse", "accuracy", "psnr_db", ...
    QString summary;    // one or more lines for people
};

// What Task::settle did at the end of a run.
struct Settled {
    bool replaced = false; // the network's weights were replaced by the simpler model's
    QString note;          // one line for people (empty when there was nothing to judge)
    // The kept model's losses on the training and validation rows when replaced (the
    // trainer's losses, without label smoothing; class-weighted like the run).
    double trainLoss = NAN, valLoss = NAN;
    // What it judged by, when it judged (the note says it): the mean validation loss per row of
    // the network and of the simpler model, on `rows` rows, the paired difference's standard
    // error, the margin (in standard errors) the network had to win by, and the simpler model's
    // name ("logistic regression"). The studio's verdict on a run (RunVerdict.h) reads them.
    bool judged = false;
    double networkLoss = NAN, simplerLoss = NAN, stdError = NAN, margin = NAN;
    int64_t rows = 0;
    QString simplerName;
    // Decided by cross-validation (CrossValidation.h) rather than on a validation split: the
    // folds (the figures above are over every row, each held out once), and the steps the kept
    // network then trained on every row (0: the simpler model was kept, untrained).
    int folds = 0;
    int64_t refitSteps = -1;
    // The folds' metric on their held-out rows (accuracy, or RMSE in the file's units): mean
    // and standard error over the folds.
    double foldMetric = NAN, foldMetricError = NAN;
    // The folds' own networks became the model, averaged and blended with the simpler one
    // (FoldModel::Averaged): the networks' share of the blend; NaN otherwise. valLoss is then
    // the blend's out-of-fold loss.
    double averagedShare = NAN;
};

// Who reads a task's messages: a message that names a setting names it the way its reader
// changes it, the CLI by its flag ("--missing drop"), the studio by its control.
enum class MessageReader { Cli, Studio };

// The text for the reader: the CLI's wording or the studio's.
inline QString forReader(MessageReader reader, const QString& cli, const QString& studio)
{
    return reader == MessageReader::Cli ? cli : studio;
}

// How to open data. Fields a task does not use are ignored.
struct TaskOptions {
    QString task; // "tabular", "image", "names"; empty: from the file type
    // The model file a saved task comes from (openTaskForModel): a refusal of the saved task
    // (a size over the limits, a broken field) names it. Empty: the message names the field only.
    QString modelPath;
    uint64_t seed = 1;
    // The seed of the validation and test splits; < 0: seed. (Published figures name theirs.)
    int64_t splitSeed = -1;
    uint64_t splitSeedOr(uint64_t fallback) const
    {
        return splitSeed >= 0 ? static_cast<uint64_t>(splitSeed) : fallback;
    }
    double valSplit = -1; // < 0: the task's default
    // tables
    QString target;                   // column name or number; empty: the last column
    QString kind = "auto";            // auto | regression | classification
    QString normalisation = "zscore"; // zscore | minmax
    // Missing cells in the columns used: fail | drop (their rows) | ignore (leave out the
    // features that have them) | mean (fill numeric features with the training rows' mean).
    QString missing = "fail";
    QStringList ignore;   // columns to leave out
    QStringList features; // feature columns (names, numbers, ranges); empty: all others
    double testSplit = 0; // fraction held out as a test split, reported apart (tables, names)
    // k-fold cross-validation (CrossValidation.h) instead of a validation split: < 0 the task's
    // choice (a small table: kDefaultFolds), 0 off, K >= 2 that many folds. Tables only.
    int folds = -1;
    // The settings only one kind reads (TaskType::settings: a picture's training size, the names'
    // context...), by name; one not set here takes its default (TaskType::setting reads it).
    QMap<QString, int> settings;
    MessageReader reader = MessageReader::Cli; // who reads the notes and errors
};

// The fractions of the rows held out for validation or testing (TaskOptions::valSplit and
// testSplit, and the splits saved with a model): the CLI's options and the saved task metadata
// are checked against it, and together the two must stay below 1 (rows left to train on).
inline constexpr ValueRange kSplitRange{0, 0.95, "a fraction of the rows"};

class Task {
public:
    virtual ~Task() = default;

    // What kind of task this is: its name, files, presets, metric and outputs.
    virtual const TaskType& type() const = 0;
    // type().name(): "tabular", "image" or "names" (for messages and JSON, not for branching:
    // ask type() or the task itself).
    QString kind() const { return type().name(); }
    // One line: what was read, e.g. "iris.csv: 150 rows, 4 features -> species (3 classes)".
    virtual QString description() const = 0;
    // Things worth telling the user (rows dropped, image downscaled...).
    virtual QStringList notes() const { return {}; }
    // What the network's outputs stand for, in words that follow their count (data().outputWidth):
    // "one score for each class of species". The Model panel says it where the output layer's
    // width, which always comes from the data, was written in the layer text. "": no words.
    virtual QString outputsMeaning() const { return {}; }
    virtual const TaskData& data() const = 0;
    virtual LossKind loss() const = 0;

    // The names of the type's layer presets.
    QStringList presets() const;
    // The preset a new model of this data starts from: the type's first, unless the data says
    // otherwise (a small regression table: its folds' networks averaged).
    virtual QString defaultPreset() const { return presets().value(0); }
    // Whether a stack of preset's (LayerPreset::averagesFolds), or any stack with --average-folds,
    // keeps the folds' networks averaged here (FoldModel::Averaged): the data has folds and
    // rowErrors (a regression table).
    virtual bool averagesFolds() const { return false; }
    // Whether a new model of preset's layer list, on this data, keeps its folds' networks
    // averaged: the preset averages them and the data can.
    bool averagesFoldsOf(const QString& preset) const;
    // The layer list of a preset for this data, or an empty string if the name is unknown.
    virtual QString presetSpec(const QString& name) const;
    // Hyperparameters that suit this task and data (called before user options apply).
    virtual void applyDefaults(TrainerConfig& config) const = 0;
    // The loss weight of each class under weighting w, from this task's training rows
    // (TrainerConfig::classWeights: one per class, two for a binary target); empty for None.
    // false with why when the task has no classes to weigh (regression tables, images, names).
    virtual bool classWeights(ClassWeighting w, std::vector<float>& out, QString* why) const;
    // The names of the classes the outputs score, in output order, as written in the data (a
    // classification table's labels); empty where the outputs are not classes.
    virtual QStringList classLabels() const { return {}; }
    // One line worth saying before a run of config on this data starts, or empty: a table
    // trained for hundreds of epochs with no validation rows, where nothing can see it overfit.
    virtual QString runNote(const TrainerConfig& config) const
    {
        (void)config;
        return {};
    }

    // Called after a new network's parameters are initialised (and after a reset): a task may
    // start parts of it from what its data says. A table starts a wide-and-deep stack (one
    // ending in dense then skip) at its linear or logistic baseline (TabularBaselines.h).
    virtual void warmStart(Network& net) const { (void)net; }

    // Called when a run ends on its own (its planned steps, early stopping, a target or the
    // time budget), not when the user stopped it or it failed: a task may keep a simpler model
    // that its validation rows cannot tell apart from the trained network. A wide-and-deep table
    // (a stack ending in dense, skip) goes back to its linear start unless the network beats it
    // on the validation rows by more than their noise (TabularTask.h: kSettleMargin).
    virtual Settled settle(Network& net, const TrainerConfig& config)
    {
        (void)net;
        (void)config;
        return {};
    }

    // ---- cross-validation (CrossValidation.h) -------------------------------------------------
    // The folds this task's data was opened for (TaskOptions::folds), 0 when it trains on a
    // validation split (or on every row without one). With folds, the task's training rows are
    // every row (no validation split): the folds take turns holding a fifth (say) of them out.
    virtual int folds() const { return 0; }
    // The task of fold `fold` (0 <= fold < folds()): the fold's rows validate, the other training
    // rows train (classes spread evenly over the folds). Null when the task has no folds.
    virtual std::unique_ptr<Task> foldTask(int fold) const
    {
        (void)fold;
        return nullptr;
    }
    // Per validation row, the loss of net (in the units it trains in, class-weighted by
    // classWeights when given) and, when the task has one for net, of its simpler model (a
    // table's linear or logistic baseline, fitted on the training rows; its name in
    // simplerName), in the same row order. What settle and cross-validation compare.
    virtual void rowLosses(Network& net, const std::vector<float>& classWeights,
                           std::vector<double>& network, std::vector<double>& simpler,
                           QString* simplerName)
    {
        (void)net;
        (void)classWeights;
        network.clear();
        simpler.clear();
        if (simplerName) simplerName->clear();
    }
    // For a task whose loss is the squared error (a regression table): per validation row and
    // output, net's error (its prediction less the target, in the units it trains in) and, in the
    // same order, its simpler model's. What cross-validation blends the folds' networks with the
    // simpler model by. False (and both empty) for other tasks.
    virtual bool rowErrors(Network& net, std::vector<double>& network, std::vector<double>& simpler)
    {
        (void)net;
        network.clear();
        simpler.clear();
        return false;
    }
    // The task's simpler model as a linear map of the network's inputs to its outputs (a table's
    // least squares or logistic regression, fitted on the training rows); false when it has none
    // that fits a network of these widths.
    virtual bool simplerLinear(int64_t inputs, int64_t outputs, LinearPart& out) const
    {
        (void)inputs;
        (void)outputs;
        (void)out;
        return false;
    }
    // Whether net can go back to the task's simpler model (a table's wide-and-deep stack, which
    // starts as its linear baseline: warmStart) when it does not beat it (settle).
    virtual bool canSettle(const Network& net) const
    {
        (void)net;
        return false;
    }

    // What net has learned on this data, as numbers the studio's Network tab draws
    // (NetworkInside.h: each kind fills its own view). The default draws nothing and says why.
    virtual void lookInside(Network& net, const InsideRequest& request,
                            NetworkInside& inside) const;
    // The inputs a plane of the Network tab may span (InsideRequest's axes), with their names,
    // and in inputCount how many inputs there are; none (and 0) when the kind offers no choice of
    // plane (the default).
    virtual std::vector<std::pair<int, QString>> insidePlaneAxes(int* inputCount) const
    {
        if (inputCount) *inputCount = 0;
        return {};
    }

    // What a model must remember about its data (the model file's "task" metadata).
    virtual QJsonObject toJson() const = 0;
    // Writes into options the values this task was read with (image training size, names
    // context, the validation split...), so a task reopened for a saved model shows the options
    // it was trained with, and reading the data again with them gives the same task.
    virtual void describeOptions(TaskOptions& options) const { (void)options; }

    // Metrics on the validation split (the training data when there is none): the keys of
    // --metrics-json and a summary for people.
    virtual TaskMetrics evaluate(Network& net) = 0;
    // The mean loss of the network over every validation row (evaluate: the whole file), in the
    // units the model trained in (no class weights). The default uploads data()'s validation
    // rows; a task that holds no rows (an image opened for evaluation) reads them in bands.
    virtual double validationLoss(Network& net, LossKind loss);
    // A second measure taken at each evaluation, where a task has one that shows what the
    // network is becoming (names: the innovation rate of 200 names drawn at T = 1, which falls as
    // a network memorises the training list); its --metrics-json key, or empty for none.
    virtual QString sideMetricKey() const { return {}; }
    virtual double sideMetric(Network& net)
    {
        (void)net;
        return NAN;
    }
    // A quick metric for the trainer's history and targets (accuracy, PSNR...), NaN if none.
    virtual double trainingMetric(Network& net)
    {
        (void)net;
        return NAN;
    }
    virtual bool metricLowerIsBetter() const { return false; }
    // false when trainingMetric is always NaN for this data, so the trainer need not call it.
    virtual bool hasTrainingMetric() const { return true; }
    // How the trainer watches this task's runs for a stall at the loss of predicting the mean
    // or a divergence (RunPolicy::watch, TrainingWatch.h), and whether a run may recover from
    // one. The default only reports: a table whose features do not predict its target, or
    // names as hard to guess as their letter frequencies, stall for reasons no rate cures.
    virtual WatchSettings watchSettings() const { return {}; }
    // Images: write the current reconstruction into directory as one frame of the training
    // timeline (e.g. step-000500.png). false + message on failure.
    virtual bool supportsSnapshots() const { return false; }
    virtual bool writeSnapshot(Network& net, int64_t step, const QString& directory, QString* error)
    {
        (void)net;
        (void)step;
        (void)directory;
        if (error) *error = kind() + " models have no snapshots";
        return false;
    }
    // One line per validation row when there are at most maxRows of them (e.g.
    // "Predicted: 0.9999, Actual: 1.0000, ✓"); empty when the task has no such view.
    virtual QStringList rowReport(Network& net, int maxRows)
    {
        (void)net;
        (void)maxRows;
        return {};
    }
    // The first maxRows validation rows (training rows when there is no validation split) as
    // the model predicts them, in the file's units; no rows when the task has no such view.
    virtual Predictions predictions(Network& net, int maxRows)
    {
        (void)net;
        (void)maxRows;
        return {};
    }
};

// A task's data in backend memory, uploaded once for a whole run, and the trainer's view of it
// (validation empty when the task has no validation rows).
struct UploadedData {
    Buffer trainX, trainY, valX, valY;
    TrainingData view;
};
UploadedData uploadTaskData(Backend& backend, const TaskData& data);

// Fills config.classWeights for config.classWeighting from the task's training rows, before a
// run (the trainer refuses a weighting without its weights). false, changing nothing, with why
// (one line naming the weighting) when the task cannot weigh its classes.
bool applyClassWeights(const Task& task, TrainerConfig& config, QString* why);

// After a run: Task::settle when the run ended on its own (not cancelled, failed or diverged);
// when the task replaced the weights, result's losses become the kept model's. The CLI and the
// studio both end their runs through here.
Settled settleRun(Task& task, Network& net, const TrainerConfig& config, TrainResult& result);

// Runs the network on host rows (rows x inputWidth) and returns its raw outputs
// (rows x outputWidth), in chunks so memory stays bounded.
std::vector<float> predictRows(Network& net, const std::vector<float>& x, int64_t rows);

// Opens a data file for training a new model. bytes: the file's contents (the caller reads
// files and bundled samples alike); pathForMessages names it in every error. Returns null
// with a one-line message naming the file and line/column, field or reason.
std::unique_ptr<Task> openTask(const QString& pathForMessages, const QByteArray& bytes,
                               const TaskOptions& options, QString* error);

// Opens a data file for a saved model: the model's task settings (columns, normalisation,
// vocabulary, image size) are kept. forEvaluation: every row goes to the validation split,
// so evaluate() measures the whole file; otherwise the saved split is reproduced (resume).
std::unique_ptr<Task> openTaskForModel(const QString& pathForMessages, const QByteArray& bytes,
                                       const QJsonObject& savedTask, bool forEvaluation,
                                       const TaskOptions& options, QString* error);

} // namespace il::tasks
