#include "ModelFile.h"

#include "LayerRegistry.h"

#include "LayerSpec.h"
#include "Limits.h"
#include "PrintableText.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <map>

namespace il::io {

namespace {

constexpr double kMaxExactInteger = 9007199254740992.0; // 2^53

QString compactJson(const QJsonObject& o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

bool fail(QString* error, const QString& message)
{
    if (error) *error = message;
    return false;
}

// The shape a tensor has in the file: biases are 1-D as in PyTorch (nn.Linear's bias is [out]),
// everything else keeps the engine's rows x cols.
std::vector<int64_t> fileShape(const std::string& name, const Shape& s)
{
    const bool bias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    if (bias && s.rows == 1) return {s.cols};
    return {s.rows, s.cols};
}

bool shapeFits(const std::vector<int64_t>& stored, const Shape& s)
{
    return stored == std::vector<int64_t>{s.rows, s.cols} ||
           (s.rows == 1 && stored == std::vector<int64_t>{s.cols});
}

bool isOptimizerTensor(const std::string& name)
{
    return name.starts_with("optimizer.");
}

// A JSON object stored as a metadata string. Missing: an empty object if optional.
bool metadataObject(const QMap<QString, QString>& meta, const QString& key, bool required,
                    QJsonObject& out, QString& problem)
{
    if (!meta.contains(key)) {
        if (required) problem = QStringLiteral("no \"%1\" in its metadata").arg(key);
        return !required;
    }
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(meta.value(key).toUtf8(), &perr);
    if (perr.error != QJsonParseError::NoError || !doc.isObject()) {
        problem = QStringLiteral("metadata \"%1\" is not a JSON object").arg(key);
        return false;
    }
    out = doc.object();
    return true;
}

bool widthField(const QJsonObject& arch, const char* key, int64_t min, int64_t& out,
                QString& problem)
{
    const QJsonValue v = arch.value(QLatin1String(key));
    const double d = v.toDouble(-1);
    // Refused before anything is sized by it (Limits.h).
    if (!v.isDouble() || std::floor(d) != d || d < static_cast<double>(min) ||
        d > static_cast<double>(kMaxWidth)) {
        problem = QStringLiteral("invalid architecture: \"%1\" must be an integer from %2 to %3")
                      .arg(QLatin1String(key))
                      .arg(min)
                      .arg(kMaxWidth);
        return false;
    }
    out = static_cast<int64_t>(d);
    return true;
}

// Everything but the tensors, from the metadata. problem: the reason, without the file name.
bool parseInfo(const QMap<QString, QString>& meta, ModelInfo& info, QString& problem)
{
    if (meta.value(QStringLiteral("format")) != QLatin1String("ironlearn")) {
        problem = QStringLiteral("not an Iron Learn model (its metadata has no "
                                 "\"format\": \"ironlearn\")");
        return false;
    }
    const QString version = meta.value(QStringLiteral("format_version"));
    bool ok = false;
    const int v = version.toInt(&ok);
    if (!ok || v < 1) {
        problem =
            QStringLiteral("format_version %1 is not a version number").arg(quoted(version, 20));
        return false;
    }
    if (v > kModelFormatVersion) {
        problem = QStringLiteral("format_version %1 is newer than this build supports (%2); "
                                 "update Iron Learn Studio to open it")
                      .arg(v)
                      .arg(kModelFormatVersion);
        return false;
    }
    info.formatVersion = v;
    info.createdBy = meta.value(QStringLiteral("created_by"));

    QJsonObject arch;
    if (!metadataObject(meta, QStringLiteral("architecture"), true, arch, problem)) return false;
    const QJsonValue spec = arch.value(QLatin1String("spec"));
    if (!spec.isString() || spec.toString().trimmed().isEmpty()) {
        problem = QStringLiteral("invalid architecture: \"spec\" is missing or not a string");
        return false;
    }
    info.spec = spec.toString().toStdString();
    info.vocab = 0;
    if (!widthField(arch, "input_width", 1, info.inputWidth, problem) ||
        !widthField(arch, "output_width", 1, info.outputWidth, problem) ||
        (arch.contains(QLatin1String("vocab")) &&
         !widthField(arch, "vocab", 0, info.vocab, problem)))
        return false;
    info.architecture = arch;

    if (!metadataObject(meta, QStringLiteral("task"), false, info.task, problem)) return false;
    QJsonObject json;
    if (!metadataObject(meta, QStringLiteral("hyperparameters"), false, json, problem) ||
        !trainerConfigFromJson(json, info.config, &problem))
        return false;
    json = {};
    if (!metadataObject(meta, QStringLiteral("training"), false, json, problem) ||
        !trainingStateFromJson(json, info.state, &problem))
        return false;
    info.optimizer = meta.value(QStringLiteral("optimizer"),
                                QString::fromStdString(info.config.optimizer.name()));
    return true;
}

// The number of floats the architecture will allocate, from the spec alone (no memory yet).
int64_t architectureFloats(const ModelInfo& info)
{
    auto layers = parseLayerSpec(info.spec, info.outputWidth, info.vocab);
    RowLayout layout{info.inputWidth, 1, 0};
    double total = 0;
    for (const auto& layer : layers) {
        const RowLayout out = layOut(*layer, info.inputWidth, layout);
        for (const ParamSpec& p : layer->parameters(layout.width))
            total += static_cast<double>(p.shape.rows) * static_cast<double>(p.shape.cols);
        layout = out;
    }
    return total > kMaxExactInteger ? static_cast<int64_t>(kMaxExactInteger)
                                    : static_cast<int64_t>(total);
}

// The values a run can have saved: finite (the trainer never keeps a non-finite step) and, in
// the optimizer state its OptimizerType says is never negative (Adam's v), not negative; a file
// that holds others was damaged or made by hand, and training on would spread them. problem
// names the tensor and the first value at fault.
bool checkValues(const ModelInfo& info, const SafeTensorsFile& file, QString& problem)
{
    const OptimizerType* type = findOptimizer(info.optimizer.toStdString());
    for (const StoredTensor& t : file.tensors) {
        bool nonNegative = false;
        if (type && isOptimizerTensor(t.name))
            for (const char* state : type->nonNegativeState)
                nonNegative = nonNegative || t.name == std::string("optimizer.") + state;
        for (size_t i = 0; i < t.data.size(); ++i) {
            const float v = t.data[i];
            if (std::isfinite(v) && !(nonNegative && v < 0)) continue;
            const QString why =
                nonNegative ? QStringLiteral("%1 keeps a running mean of squares there, never "
                                             "negative")
                                  .arg(QLatin1String(type->name))
                            : QStringLiteral("a saved model never holds NaN or infinite values");
            // One arg() call: text from the file must not be searched for %3 and the like.
            problem = QStringLiteral("tensor %1 holds %2 (value %3 of %4); %5")
                          .arg(quoted(QString::fromStdString(t.name), 80), QString::number(v),
                               QString::number(i), QString::number(t.data.size()), why);
            return false;
        }
    }
    return true;
}

// Builds the network and checks the file's tensors against it, name by name.
std::unique_ptr<Network> buildChecked(const ModelInfo& info, const SafeTensorsFile& file,
                                      Backend& backend, QString& problem)
{
    const QString mismatch = QStringLiteral("an architecture that does not match its tensors: ");
    // The spec as the file has it, shortened: a hostile one can be megabytes long.
    const QString archName = quoted(QString::fromStdString(info.spec), 80);
    int64_t stored = 0;
    for (const StoredTensor& t : file.tensors)
        stored += static_cast<int64_t>(t.data.size());
    std::unique_ptr<Network> net;
    try {
        // A hostile architecture could ask for terabytes before the tensor check below can run.
        // A real one needs no more values than the file holds; the slack keeps the precise,
        // per-tensor message for files that merely miss a tensor or two.
        const int64_t needed = architectureFloats(info);
        if (needed > 2 * stored + (int64_t(1) << 24)) {
            problem =
                mismatch + QStringLiteral("%1 needs %2 values, the file holds %3")
                               .arg(archName, QString::number(needed), QString::number(stored));
            return nullptr;
        }
        net = std::make_unique<Network>(backend, info.inputWidth, info.spec, info.outputWidth,
                                        info.vocab);
        // One row must fit the inference bound (Limits.h), or no chunk of rows would.
        const int64_t rowBytes = activationFloatsPerRow(*net) * 4;
        if (rowBytes > kInferenceActivationBytes) {
            problem = QStringLiteral("invalid architecture \"%1\": one row takes %2 MB of "
                                     "activations, over the limit of %3 MB")
                          .arg(archName.left(200))
                          .arg(rowBytes >> 20)
                          .arg(kInferenceActivationBytes >> 20);
            return nullptr;
        }
    } catch (const std::exception& e) {
        problem = QStringLiteral("invalid architecture %1: %2")
                      .arg(archName, printable(QString::fromUtf8(e.what()), 200));
        return nullptr;
    }

    std::map<std::string, const StoredTensor*> byName;
    for (const StoredTensor& t : file.tensors)
        byName[t.name] = &t;
    for (const NamedTensor& nt : net->namedTensors()) {
        const auto it = byName.find(nt.name);
        const QString name = printable(QString::fromStdString(nt.name), 80);
        if (it == byName.end()) {
            problem = mismatch + QStringLiteral("tensor \"%1\" is missing").arg(name);
            return nullptr;
        }
        if (!shapeFits(it->second->shape, nt.tensor.shape)) {
            problem = mismatch + QStringLiteral("tensor \"%1\" is %2 in the file, %3 needs %4")
                                     .arg(name, shapeToString(it->second->shape), archName,
                                          shapeToString(fileShape(nt.name, nt.tensor.shape)));
            return nullptr;
        }
        byName.erase(it);
    }
    for (const auto& [name, t] : byName) {
        if (!isOptimizerTensor(name)) {
            problem = mismatch + QStringLiteral("tensor \"%1\" is not part of %2")
                                     .arg(printable(QString::fromStdString(name), 80), archName);
            return nullptr;
        }
    }
    // Sizes now match the (bounded) file, so the uploads are safe.
    try {
        for (const NamedTensor& nt : net->namedTensors())
            backend.upload(nt.tensor, file.find(nt.name)->data.data());
    } catch (const std::exception& e) {
        problem = QStringLiteral("cannot load the weights: %1").arg(QString::fromUtf8(e.what()));
        return nullptr;
    }
    return net;
}

} // namespace

QString createdByString()
{
    return QStringLiteral("Iron Learn Studio " IRONLEARN_VERSION);
}

bool saveModel(const QString& path, const Network& network, const Optimizer* optimizer,
               const TrainerConfig& config, const TrainingState& state, const QJsonObject& task,
               QString* error)
{
    SafeTensorsFile file;
    QJsonArray layers;
    int64_t vocab = 0;
    try {
        Backend& backend = network.backend();
        for (const NamedTensor& nt : network.namedTensors()) {
            StoredTensor t{nt.name, fileShape(nt.name, nt.tensor.shape),
                           std::vector<float>(static_cast<size_t>(nt.tensor.size()))};
            backend.download(t.data.data(), nt.tensor);
            file.tensors.push_back(std::move(t));
        }
        if (optimizer) {
            for (const auto& [name, tensor] : optimizer->state()) {
                // Flat, like the parameter vector it mirrors.
                StoredTensor t{
                    name, {tensor.size()}, std::vector<float>(static_cast<size_t>(tensor.size()))};
                backend.download(t.data.data(), tensor);
                file.tensors.push_back(std::move(t));
            }
        }
        for (const LayerSummary& s : network.summary())
            layers.append(QJsonObject{{"index", s.index},
                                      {"spec", QString::fromStdString(s.spec)},
                                      {"output_width", qint64(s.outputWidth)},
                                      {"parameters", qint64(s.parameters)}});
        // The vocabulary: the resolved value of a layer argument the data supplies as one
        // (the layer registry says which: the embedding's V).
        for (const auto& layer : network.layers()) {
            const std::vector<LayerArg>& args = layer->type().args;
            for (size_t i = 0; i < args.size() && i < layer->item().args.size(); ++i)
                if (args[i].fromData == DataValue::Vocabulary)
                    vocab = static_cast<int64_t>(layer->item().args[i]);
        }
    } catch (const std::exception& e) {
        return fail(error, path + QStringLiteral(": cannot save: ") + QString::fromUtf8(e.what()));
    }

    const QJsonObject arch{{"spec", QString::fromStdString(network.spec())},
                           {"input_width", qint64(network.inputWidth())},
                           {"output_width", qint64(network.outputWidth())},
                           {"vocab", qint64(vocab)},
                           {"parameters", qint64(network.parameterCount())},
                           {"layers", layers}};
    const std::string kind = optimizer ? optimizer->config().name() : config.optimizer.name();
    file.metadata = {{"format", "ironlearn"},
                     {"format_version", QString::number(kModelFormatVersion)},
                     {"architecture", compactJson(arch)},
                     {"task", compactJson(task)},
                     {"hyperparameters", compactJson(trainerConfigToJson(config))},
                     {"training", compactJson(trainingStateToJson(state))},
                     {"optimizer", QString::fromStdString(kind)},
                     {"created_by", createdByString()}};
    const IoResult r = writeSafeTensors(path, file);
    return r.ok || fail(error, r.error);
}

bool readModelInfo(const QString& path, ModelInfo& info, QString* error)
{
    SafeTensorsFile file;
    const IoResult r = readSafeTensorsHeader(path, file);
    if (!r) return fail(error, r.error);
    ModelInfo parsed;
    QString problem;
    if (!parseInfo(file.metadata, parsed, problem))
        return fail(error, path + QStringLiteral(": ") + problem);
    info = std::move(parsed);
    return true;
}

std::unique_ptr<LoadedModel> openModel(const QString& path, Backend& backend, QString* error)
{
    SafeTensorsFile file;
    const IoResult r = readSafeTensors(path, file);
    if (!r) {
        fail(error, r.error);
        return nullptr;
    }
    auto model = std::make_unique<LoadedModel>();
    QString problem;
    if (parseInfo(file.metadata, model->info, problem) && checkValues(model->info, file, problem))
        model->network = buildChecked(model->info, file, backend, problem);
    if (!model->network) {
        fail(error, path + QStringLiteral(": ") + problem);
        return nullptr;
    }
    for (StoredTensor& t : file.tensors)
        if (isOptimizerTensor(t.name)) model->optimizerState.push_back(std::move(t));
    return model;
}

bool restoreOptimizer(const LoadedModel& model, Backend& backend, Optimizer& optimizer,
                      QString* error)
{
    const QString kind = QString::fromStdString(optimizer.config().name());
    if (model.info.optimizer != kind)
        return fail(error, QStringLiteral("the saved optimizer state is for %1, not %2")
                               .arg(printable(model.info.optimizer, 40), kind));
    const auto state = optimizer.state();
    if (model.optimizerState.empty() && !state.empty())
        return fail(error, QStringLiteral("the model has no saved optimizer state"));
    // Check everything before changing anything, so a failure leaves the optimizer as it was.
    std::vector<const StoredTensor*> sources;
    for (const auto& [name, tensor] : state) {
        const StoredTensor* found = nullptr;
        for (const StoredTensor& t : model.optimizerState)
            if (t.name == name) found = &t;
        if (!found)
            return fail(error, QStringLiteral("the model has no optimizer state \"%1\"")
                                   .arg(QString::fromStdString(name)));
        if (static_cast<int64_t>(found->data.size()) != tensor.size())
            return fail(error, QStringLiteral("optimizer state \"%1\" has %2 values, the "
                                              "optimizer needs %3")
                                   .arg(QString::fromStdString(name))
                                   .arg(found->data.size())
                                   .arg(tensor.size()));
        sources.push_back(found);
    }
    if (sources.size() != model.optimizerState.size())
        return fail(error, QStringLiteral("the saved optimizer state has tensors that %1 does "
                                          "not use")
                               .arg(kind));
    try {
        for (size_t i = 0; i < state.size(); ++i)
            backend.upload(state[i].second, sources[i]->data.data());
    } catch (const std::exception& e) {
        return fail(error, QStringLiteral("cannot restore the optimizer state: %1")
                               .arg(QString::fromUtf8(e.what())));
    }
    return true;
}

} // namespace il::io
