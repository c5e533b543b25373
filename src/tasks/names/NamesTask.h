// Names: a character-level language model that invents names (the n-gram MLP of Bengio et al.
// 2003, as Iron Learn built it).
//
// Every name is padded with a boundary token that is not a character of the data (id 0, shown
// as "." unless the data uses it). A window of the previous N symbols (the context) predicts the
// next one; the boundary after the last character ends the name. For "rust", N = 3:
//     ... -> r    ..r -> u    .ru -> s    rus -> t    ust -> (end)
// The network sees the N ids through an embedding (the efficient form of one-hot x dense),
// hidden layers, and a softmax over the vocabulary. Names are split into training and
// validation by name (a held-out name is never seen whole or in part while training), and every
// metric sits next to a counting model of the same context (NgramBaseline), so a learner sees
// what the network adds over counting.
//
// Generation and the next-character inspector work from a saved model alone (NamesSchema keeps
// the vocabulary, the context and the training names), so the CLI and the GUI need no data
// file. Errors are returned as one-line messages, never thrown.
#pragma once

#include "Task.h"

#include <QSet>

#include <string>

namespace il::tasks {

// More distinct characters than this is not a names file (the output layer grows with it); a
// saved vocabulary is held to it too.
inline constexpr int64_t kMaxAlphabet = 10000;
// The longest context window (--context, and a saved model's): makemore's hierarchical models
// read 8 to 16 characters.
inline constexpr int kMaxNamesContext = 16;
// The names kind's settings (KindSetting, TaskOptions::settings): the characters that predict the
// next one (1 to kMaxNamesContext, 3 by default), and keeping upper and lower case apart.
inline const QString kContextSetting = QStringLiteral("context");
inline const QString kKeepCaseSetting = QStringLiteral("keep-case");

// The wavenet preset for a context window and vocabulary: an embedding of 24, then merges of
// consecutive positions (pairs while they divide the positions left, else all of them), each
// followed by dense:256, batchnorm, tanh, and the output layer.
QString wavenetSpec(int context, int64_t vocab);

// What a names model remembers (the model file's "task" metadata).
struct NamesSchema {
    int context = 3;
    bool keepCase = false;
    std::u32string alphabet; // sorted code points; id i + 1 is alphabet[i], id 0 the boundary
    QString boundarySymbol;  // how the boundary is shown: "." or another symbol not in the data
    double valSplit = 0.1;   // the split that produced trainingNames
    double testSplit = 0;    // ... and the share of distinct names held out for testing
    uint64_t splitSeed = 1;
    double ngramK = 1;         // add-k of the counting baseline, tuned on validation
    int longestName = 0;       // code points, over the training names
    QStringList trainingNames; // the names the network trained on, for NEW / SEEN
    QSet<QString> trainingSet; // the same, for lookups (built by fromJson / the task)
    // The names held out for validation, known while the data is open (a model file keeps only
    // its training names): a generated one is real, though the network never trained on it.
    QSet<QString> heldOutSet;

    int64_t vocabSize() const { return static_cast<int64_t>(alphabet.size()) + 1; }
    // The id of a code point, or -1 if it is not in the vocabulary.
    int idOf(char32_t c) const;
    // The symbol shown for an id (the boundary symbol for 0).
    QString symbol(int id) const;
    // Every symbol in id order: the vocabulary as the GUI shows it.
    QStringList vocabulary() const;
    // Applies the case handling (lowercase unless keepCase) and maps to ids; false + message
    // naming the character if one is not in the vocabulary.
    bool encode(const QString& text, std::vector<int32_t>& ids, QString* error) const;

    QJsonObject toJson() const;
    static bool fromJson(const QJsonObject& task, NamesSchema& out, QString* error);
};

// Appends the context windows of one name (ids without padding) to x (one row of `context`
// ids per window) and the next id to y, as floats for the engine: len + 1 rows.
void appendNameWindows(const std::vector<int32_t>& ids, int context, std::vector<float>& x,
                       std::vector<float>& y);

struct GenerationOptions {
    int count = 20;
    double temperature = 1.0; // logits / T before the softmax; clamped to 0.1 ... 3.0
    int topK = 0;             // sample among the K most likely symbols; 0 = all
    int maxLength = 32;       // code points; longer names are cut there
    uint64_t seed = 1;        // name i depends only on (seed, i): same seed, same names
    // Every name starts with these characters (case handled as the model's: lowered unless it
    // keeps case); the model draws the rest. Empty: the model draws the first character too.
    QString prefix;
};

struct GeneratedName {
    QString text;
    bool isNew = true;      // in neither the training names nor the held-out ones
    bool heldOut = false;   // one of the names held out for validation (in the file)
    bool truncated = false; // reached maxLength before the model ended it
};

struct GenerationResult {
    std::vector<GeneratedName> names;
    int newCount = 0;
    // Mean ln p of each drawn symbol (the end of the name included; a prefix's characters are
    // not drawn) under the model at T = 1, in nats per character: how likely the model itself
    // finds what it drew. Near minus the validation loss at T = 1; higher at low temperatures.
    double meanLogLikelihood = NAN;
    QString error; // non-empty: nothing was generated
    double innovationRate() const
    {
        return names.empty() ? NAN : static_cast<double>(newCount) / names.size();
    }
};

// Samples names one symbol at a time; all unfinished names of a step go through the network in
// one batch. The first symbol is never the end (an empty name is not a name). A prefix with a
// character outside the vocabulary, or as long as maxLength, is an error naming it.
GenerationResult generateNames(Network& net, const NamesSchema& schema,
                               const GenerationOptions& options);

// One temperature of a sweep: the innovation rate of options.count names drawn there (the same
// seeds at every temperature) and the mean log-likelihood of the drawn characters at T = 1.
struct SweepPoint {
    double temperature = 0;
    double innovationRate = NAN;
    int newCount = 0;
    double meanLogLikelihood = NAN;
};
// The sweep over temperatures (generate --sweep, the studio's sweep chart): cold sampling
// repeats the training list, hot sampling invents names the model finds unlikely. Stops at the
// first temperature whose generation fails, with error set (the points so far are returned).
std::vector<SweepPoint> temperatureSweep(Network& net, const NamesSchema& schema,
                                         GenerationOptions options,
                                         const std::vector<double>& temperatures,
                                         QString* error = nullptr);

// The probability of each vocabulary entry (id order; entry 0 = end of name) after prefix at
// temperature T: the GUI's next-character inspector. Empty + message if the prefix holds a
// character outside the vocabulary or the network does not fit the schema.
std::vector<float> nextCharProbabilities(Network& net, const NamesSchema& schema,
                                         const QString& prefix, double temperature,
                                         QString* error = nullptr);

// Mean -ln p(next) of the network over rows windows (nats per character, no smoothing).
double namesCrossEntropy(Network& net, const std::vector<float>& x, const std::vector<float>& y,
                         int64_t rows);

// The names task; also reachable as a Task through openTask / openTaskForModel.
// Names of the file a names task keeps for previews (DatasetPanel).
constexpr int kNamesPreviewCount = 2000;

class NamesTask : public Task {
public:
    virtual const NamesSchema& schema() const = 0;
    void lookInside(Network& net, const InsideRequest& request,
                    NetworkInside& inside) const override;
    void describeOptions(TaskOptions& options) const override
    {
        options.settings[kContextSetting] = schema().context;
        options.settings[kKeepCaseSetting] = schema().keepCase;
        options.valSplit = schema().valSplit;
    }
    // The names in the file, and the first kNamesPreviewCount of them as read (case handled).
    virtual int64_t nameCount() const = 0;
    virtual const QStringList& firstNames() const = 0;
};

// The description of names tasks (name, files, presets, metric); presets write VOCAB for the
// vocabulary size, which NamesTask::presetSpec fills in.
const TaskType& namesTaskType();
// Its ONNX graph around the network (NamesOnnx.cpp; its TaskType::onnxGraph).
void namesOnnxGraph(io::onnxexport::TaskGraph& t);

// savedTask: reopen with a saved model's vocabulary and context (resume or evaluate). A
// character outside that vocabulary is refused with its line.
std::unique_ptr<Task> openNamesTask(const QString& pathForMessages, const QByteArray& bytes,
                                    const TaskOptions& options, const QJsonObject* savedTask,
                                    bool forEvaluation, QString* error);

} // namespace il::tasks
