// Model files: save -> open gives the same network bit for bit, broken files are refused naming
// what is wrong, and a run saved halfway and resumed matches a run that never stopped.
#include "AtomicFile.h"
#include "ModelFile.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <functional>

using namespace il;
using namespace il::io;

namespace {

bool sameBits(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

bool sameDouble(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

QByteArray readBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QString compact(const QJsonObject& o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

// Host data in backend memory.
struct Matrix {
    Buffer buffer;
    Tensor view;
    Matrix(Backend& b, int64_t rows, int64_t cols, const std::vector<float>& values)
        : buffer(&b, static_cast<size_t>(rows * cols)), view(buffer.view(rows, cols))
    {
        b.upload(view, values.data());
    }
};

std::vector<float> inputsFor(const Network& net, int64_t rows, int64_t vocab)
{
    Rng rng(11);
    std::vector<float> x(static_cast<size_t>(rows * net.inputWidth()));
    for (float& v : x)
        v = vocab > 0 ? static_cast<float>(rng.below(static_cast<uint64_t>(vocab)))
                      : static_cast<float>(rng.uniform(-1, 1));
    return x;
}

std::vector<float> predict(Network& net, const std::vector<float>& x)
{
    Backend& b = net.backend();
    const int64_t rows = static_cast<int64_t>(x.size()) / net.inputWidth();
    Matrix in(b, rows, net.inputWidth(), x);
    Buffer out(&b, static_cast<size_t>(rows * net.outputWidth()));
    net.predict(in.view, out.view(rows, net.outputWidth()));
    return b.toHost(out.view(rows, net.outputWidth()));
}

std::vector<float> allTensors(const Network& net)
{
    std::vector<float> all;
    for (const NamedTensor& t : net.namedTensors()) {
        const auto host = net.backend().toHost(t.tensor);
        all.insert(all.end(), host.begin(), host.end());
    }
    return all;
}

// A small regression problem: y = sin(x0) + 0.5 x1 x2.
struct Dataset {
    std::unique_ptr<Matrix> x, y, vx, vy;
    TrainingData data() const { return {x->view, y->view, vx->view, vy->view}; }
};

Dataset makeDataset(Backend& b)
{
    auto make = [&](int64_t rows, uint64_t seed, std::unique_ptr<Matrix>& x,
                    std::unique_ptr<Matrix>& y) {
        Rng rng(seed);
        std::vector<float> xs(static_cast<size_t>(rows * 3)), ys(static_cast<size_t>(rows));
        for (int64_t i = 0; i < rows; ++i) {
            float* r = &xs[static_cast<size_t>(i * 3)];
            for (int j = 0; j < 3; ++j)
                r[j] = static_cast<float>(rng.uniform(-2, 2));
            ys[static_cast<size_t>(i)] = std::sin(r[0]) + 0.5f * r[1] * r[2];
        }
        x = std::make_unique<Matrix>(b, rows, 3, xs);
        y = std::make_unique<Matrix>(b, rows, 1, ys);
    };
    Dataset d;
    make(64, 5, d.x, d.y);
    make(16, 6, d.vx, d.vy);
    return d;
}

// Rewrites a saved model through `change` (for building broken files).
void rewrite(const QString& path, const std::function<void(SafeTensorsFile&)>& change)
{
    SafeTensorsFile f;
    const IoResult r = readSafeTensors(path, f);
    QVERIFY2(r.ok, qPrintable(r.error));
    change(f);
    QVERIFY(writeSafeTensors(path, f).ok);
}

void setArchitecture(SafeTensorsFile& f, const char* key, const QJsonValue& v)
{
    QJsonObject a = QJsonDocument::fromJson(f.metadata["architecture"].toUtf8()).object();
    a[key] = v;
    f.metadata["architecture"] = compact(a);
}

} // namespace

class TestModelFile : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { m_backend = createCpuBackend(1); }
    void configJsonRoundTrip();
    void optimizerJson();
    void configJsonRefusals_data();
    void configJsonRefusals();
    void stateJsonRoundTrip();
    void saveOpenPredictsIdentically_data();
    void saveOpenPredictsIdentically();
    void openRefusals_data();
    void openRefusals();
    void restoreOptimizerRefusals();
    void failedSaveKeepsPreviousModel();
    void resumeMatchesStraightRun_data();
    void resumeMatchesStraightRun();

private:
    std::unique_ptr<Backend> m_backend;
};

void TestModelFile::configJsonRoundTrip()
{
    TrainerConfig c;
    c.epochs = 7;
    c.steps = 12345;
    c.maxSeconds = 2.5;
    c.batchSize = 33;
    c.shuffle = false;
    c.seed = 0xfedcba9876543210ull; // beyond 2^53: stored as a string
    c.loss = LossKind::CrossEntropy;
    c.labelSmoothing = 0.1f;
    c.classWeighting = ClassWeighting::Balanced;
    c.classWeights = {0.5f, 2.f, 4.f}; // the data's, not saved
    c.optimizer = OptimizerConfig::named("adamw");
    c.optimizer.set("beta1", 0.85f);
    c.optimizer.set("beta2", 0.995f);
    c.optimizer.set("eps", 1e-7f);
    c.optimizer.set("weight_decay", 0.02f);
    c.schedule = {ScheduleKind::StepDecay, 3e-3f, 1e-5f, 250, 0.7f, 40};
    c.clipNorm = 1.5f;
    c.patience = 4;
    c.minDelta = 1e-4f;
    c.restoreBest = false;
    c.targetLoss = 0.02;
    c.evalEvery = 50;

    const QJsonObject json = trainerConfigToJson(c);
    QCOMPARE(json["seed"].toString(), QString("18364758544493064720"));
    QCOMPARE(json["optimizer"].toObject()["kind"].toString(), QString("adamw"));
    QCOMPARE(json["class_weight"].toString(), QString("balanced"));
    QVERIFY(!json.contains("class_weights"));
    QCOMPARE(json["schedule"]["lr_max"].toDouble(), 0.003); // shortest form, not 0.0030000000949
    // Through text, as in a file.
    const QJsonObject reread = QJsonDocument::fromJson(QJsonDocument(json).toJson()).object();
    TrainerConfig d;
    QString error;
    QVERIFY2(trainerConfigFromJson(reread, d, &error), qPrintable(error));
    QCOMPARE(compact(trainerConfigToJson(d)), compact(json));
    QCOMPARE(d.seed, c.seed);
    QCOMPARE(d.optimizer.value("eps"), c.optimizer.value("eps"));
    QVERIFY(d.optimizer == c.optimizer);
    QCOMPARE(d.schedule.gamma, c.schedule.gamma);
    QCOMPARE(d.labelSmoothing, c.labelSmoothing);
    QCOMPARE(d.classWeighting, ClassWeighting::Balanced);
    QVERIFY(d.classWeights.empty());

    // Defaults survive, including the infinite target loss.
    TrainerConfig e;
    QVERIFY(trainerConfigFromJson(trainerConfigToJson(TrainerConfig{}), e, &error));
    QVERIFY(std::isinf(e.targetLoss) && e.targetLoss < 0);
    // A partial object overrides only what it names.
    TrainerConfig f = c;
    QVERIFY(trainerConfigFromJson(
        QJsonObject{{"steps", 9}, {"schedule", QJsonObject{{"kind", "cosine"}}}}, f, &error));
    QCOMPARE(f.steps, int64_t(9));
    QCOMPARE(f.schedule.kind, ScheduleKind::Cosine);
    QCOMPARE(f.schedule.stepEvery, int64_t(250));
    QCOMPARE(f.batchSize, int64_t(33));
    // The run policy (RunPolicy) is not a hyperparameter: not written, and ignored in old files.
    QVERIFY(!json.contains("read_every") && !json.contains("progress_interval"));
    QVERIFY2(trainerConfigFromJson(QJsonObject{{"read_every", 8}, {"progress_interval", 0.25}}, f,
                                   &error),
             qPrintable(error));
}

void TestModelFile::optimizerJson()
{
    // Every optimizer writes its kind, its own settings and the parameter groups', and reads
    // back the same config.
    for (const OptimizerType& type : optimizerTypes()) {
        TrainerConfig c;
        c.optimizer = OptimizerConfig(type);
        for (const OptimizerSetting& s : type.settings)
            c.optimizer.set(s.key, (s.min + s.max) / 3);
        const QJsonObject json = trainerConfigToJson(c)["optimizer"].toObject();
        QCOMPARE(json.size(), qsizetype(type.settings.size() + 2));
        QVERIFY(json["groups"].isObject());
        TrainerConfig d;
        QString error;
        QVERIFY2(trainerConfigFromJson(QJsonObject{{"optimizer", json}}, d, &error),
                 qPrintable(error));
        QVERIFY2(d.optimizer == c.optimizer, type.name);
    }
    // A file written before the registry lists every optimizer's settings: the ones of its
    // optimizer are read, the others ignored.
    const QJsonObject old{{"kind", "momentum"}, {"momentum", 0.5}, {"beta1", 0.9},
                          {"beta2", 0.999},     {"eps", 1e-8},     {"weight_decay", 0}};
    TrainerConfig d;
    QString error;
    QVERIFY2(trainerConfigFromJson(QJsonObject{{"optimizer", old}}, d, &error), qPrintable(error));
    QCOMPARE(d.optimizer.name(), std::string("momentum"));
    QCOMPARE(d.optimizer.value("momentum"), 0.5f);
    QVERIFY(!d.optimizer.has("beta1"));
}

void TestModelFile::configJsonRefusals_data()
{
    QTest::addColumn<QJsonObject>("json");
    QTest::addColumn<QString>("expected");
    QTest::newRow("string batch size") << QJsonObject{{"batch_size", "x"}} << "\"batch_size\"";
    QTest::newRow("negative steps") << QJsonObject{{"steps", -1}} << "\"steps\"";
    QTest::newRow("fractional epochs") << QJsonObject{{"epochs", 1.5}} << "\"epochs\"";
    QTest::newRow("unknown loss") << QJsonObject{{"loss", "hinge"}} << "\"loss\"";
    QTest::newRow("unknown optimizer")
        << QJsonObject{{"optimizer", QJsonObject{{"kind", "adamx"}}}} << "optimizer: \"kind\"";
    QTest::newRow("optimizer setting out of range")
        << QJsonObject{{"optimizer", QJsonObject{{"kind", "adam"}, {"beta1", 2}}}}
        << "optimizer: \"beta1\"";
    QTest::newRow("optimizer not an object")
        << QJsonObject{{"optimizer", "adam"}} << "\"optimizer\"";
    QTest::newRow("bad lr") << QJsonObject{{"schedule", QJsonObject{{"lr_max", "fast"}}}}
                            << "schedule: \"lr_max\"";
    QTest::newRow("bad seed") << QJsonObject{{"seed", -3}} << "\"seed\"";
    QTest::newRow("bool as number") << QJsonObject{{"shuffle", 1}} << "\"shuffle\"";
}

void TestModelFile::configJsonRefusals()
{
    QFETCH(QJsonObject, json);
    QFETCH(QString, expected);
    TrainerConfig c;
    c.steps = 77;
    QString error;
    QVERIFY(!trainerConfigFromJson(json, c, &error));
    QVERIFY2(error.startsWith("hyperparameters") && error.contains(expected), qPrintable(error));
    QCOMPARE(c.steps, int64_t(77)); // unchanged
}

void TestModelFile::stateJsonRoundTrip()
{
    TrainingState s;
    s.step = 1234;
    s.epoch = 17;
    s.stepInEpoch = 3;
    s.plannedSteps = 5000;
    s.seconds = 12.345678901234;
    s.bestValLoss = 0.1 + 0.2; // not a short decimal
    s.evalsWithoutImprovement = 2;
    s.pendingLossSum = 1.0 / 3.0;
    s.pendingSteps = 3;
    s.history = {{10, 0.5, 1.0 / 7.0, NAN, 1e-3, NAN},
                 {20, 1.0, INFINITY, -INFINITY, 2.2250738585072014e-308, 99.5}};
    const QJsonObject json =
        QJsonDocument::fromJson(QJsonDocument(trainingStateToJson(s)).toJson()).object();
    QVERIFY(json["history"].toArray()[0].toArray()[3].isNull()); // NaN -> null
    TrainingState t;
    QString error;
    QVERIFY2(trainingStateFromJson(json, t, &error), qPrintable(error));
    QCOMPARE(t.step, s.step);
    QCOMPARE(t.epoch, s.epoch);
    QCOMPARE(t.stepInEpoch, s.stepInEpoch);
    QCOMPARE(t.plannedSteps, s.plannedSteps);
    QVERIFY(sameDouble(t.seconds, s.seconds));
    QVERIFY(sameDouble(t.bestValLoss, s.bestValLoss));
    QCOMPARE(t.evalsWithoutImprovement, s.evalsWithoutImprovement);
    QVERIFY(sameDouble(t.pendingLossSum, s.pendingLossSum));
    QCOMPARE(t.pendingSteps, s.pendingSteps);
    QCOMPARE(t.history.size(), s.history.size());
    for (size_t i = 0; i < s.history.size(); ++i) {
        const HistoryPoint &a = s.history[i], &b = t.history[i];
        QCOMPARE(b.step, a.step);
        QVERIFY(sameDouble(a.epoch, b.epoch) && sameDouble(a.trainLoss, b.trainLoss) &&
                sameDouble(a.valLoss, b.valLoss) && sameDouble(a.lr, b.lr) &&
                sameDouble(a.metric, b.metric));
    }
    QVERIFY(
        !trainingStateFromJson(QJsonObject{{"history", QJsonArray{QJsonArray{1, 2}}}}, t, &error));
    QVERIFY2(error.contains("history row 0"), qPrintable(error));
}

void TestModelFile::saveOpenPredictsIdentically_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("inputWidth");
    QTest::addColumn<int>("outputWidth");
    QTest::addColumn<int>("vocab");
    QTest::newRow("tanh mlp") << "dense:16,tanh,dense:1" << 2 << 1 << 0;
    QTest::newRow("classifier") << "dense:8,relu,dense:8,leakyrelu:0.2,dense:3" << 4 << 3 << 0;
    QTest::newRow("sigmoid") << "dense:4,sigmoid,dense:2" << 3 << 2 << 0;
    QTest::newRow("fourier (fixed tensor)") << "fourier:8:3,dense:8,relu,dense:2" << 2 << 2 << 0;
    QTest::newRow("siren, bare final dense") << "dense:8,sine:30,dense:8,sine,dense" << 2 << 1 << 0;
    QTest::newRow("embedding, vocab from caller")
        << "embedding:3,dense:8,tanh,dense" << 4 << 5 << 5;
    QTest::newRow("wide and deep (linear skip)") << "dense:8,tanh,dense:2,skip" << 3 << 2 << 0;
    QTest::newRow("unround sine w0") << "dense:8,sine:30.1234567,dense:1" << 2 << 1 << 0;
}

void TestModelFile::saveOpenPredictsIdentically()
{
    QFETCH(QString, spec);
    QFETCH(int, inputWidth);
    QFETCH(int, outputWidth);
    QFETCH(int, vocab);
    Backend& b = *m_backend;
    Network net(b, inputWidth, spec.toStdString(), outputWidth, vocab);
    net.initialize(42);
    if (spec.contains("skip")) { // it starts at zero: give it weights the reopened file must keep
        std::vector<float> p(static_cast<size_t>(net.parameterCount()));
        for (size_t i = 0; i < p.size(); ++i)
            p[i] = std::sin(0.7f * static_cast<float>(i) + 0.3f);
        b.upload(net.parameters().data, p.data(), p.size() * sizeof(float));
    }
    Optimizer opt(b, OptimizerConfig{}, net.parameterRanges());
    TrainerConfig config;
    config.steps = 100;
    TrainingState state;
    state.step = 3;
    const QJsonObject task{{"kind", "regression"},
                           {"columns", QJsonArray{"a", "b"}},
                           {"mean", QJsonArray{0.5, -1.25}}};

    QTemporaryDir dir;
    const QString path = dir.filePath("model.safetensors");
    QString error;
    QVERIFY2(saveModel(path, net, &opt, config, state, task, &error), qPrintable(error));

    auto model = openModel(path, b, &error);
    QVERIFY2(model, qPrintable(error));
    QCOMPARE(model->info.spec, net.spec());
    QCOMPARE(model->info.inputWidth, int64_t(inputWidth));
    QCOMPARE(model->info.outputWidth, int64_t(outputWidth));
    QCOMPARE(model->info.task, task);
    QCOMPARE(model->info.config.steps, int64_t(100));
    QCOMPARE(model->info.state.step, int64_t(3));
    QCOMPARE(model->info.optimizer, QString("adam"));
    QCOMPARE(model->info.createdBy, createdByString());
    QCOMPARE(model->optimizerState.size(), size_t(2));
    QVERIFY(sameBits(allTensors(*model->network), allTensors(net)));

    const auto x = inputsFor(net, 37, vocab);
    const auto before = predict(net, x);
    const auto after = predict(*model->network, x);
    QVERIFY(sameBits(before, after));

    // Biases are 1-D in the file, as PyTorch's nn.Linear has them; and the header alone
    // describes the model.
    SafeTensorsFile header;
    QVERIFY(readSafeTensorsHeader(path, header).ok);
    for (const StoredTensor& t : header.tensors)
        if (t.name.ends_with(".bias")) QCOMPARE(t.shape.size(), size_t(1));
    ModelInfo info;
    QVERIFY2(readModelInfo(path, info, &error), qPrintable(error));
    QCOMPARE(info.spec, net.spec());
    QCOMPARE(info.vocab, int64_t(vocab));
}

void TestModelFile::openRefusals_data()
{
    using Change = std::function<void(SafeTensorsFile&)>;
    QTest::addColumn<Change>("change");
    QTest::addColumn<QStringList>("expected");
    const QString mismatch = "an architecture that does not match its tensors";
    auto tensor = [](SafeTensorsFile& f, const char* name) -> StoredTensor& {
        for (StoredTensor& t : f.tensors)
            if (t.name == name) return t;
        return f.tensors.front();
    };

    QTest::newRow("transposed weight") << Change([=](SafeTensorsFile& f) {
        tensor(f, "layers.0.weight").shape = {3, 4};
    }) << QStringList{mismatch, "\"layers.0.weight\"", "[3, 4]", "[4, 3]"};
    QTest::newRow("weight too small") << Change([=](SafeTensorsFile& f) {
        StoredTensor& t = tensor(f, "layers.2.weight");
        t.shape = {2, 3};
        t.data.resize(6);
    }) << QStringList{mismatch, "\"layers.2.weight\"", "[2, 3]"};
    QTest::newRow("missing tensor") << Change([](SafeTensorsFile& f) {
        std::erase_if(f.tensors, [](const StoredTensor& t) { return t.name == "layers.2.bias"; });
    }) << QStringList{mismatch, "\"layers.2.bias\" is missing"};
    QTest::newRow("extra tensor") << Change([](SafeTensorsFile& f) {
        f.tensors.push_back({"layers.9.weight", {1, 1}, {0.f}});
    }) << QStringList{mismatch, "\"layers.9.weight\""};
    QTest::newRow("format_version 7")
        << Change([](SafeTensorsFile& f) { f.metadata["format_version"] = "7"; })
        << QStringList{"format_version 7 is newer than this build supports (1)"};
    QTest::newRow("format_version garbage")
        << Change([](SafeTensorsFile& f) { f.metadata["format_version"] = "one"; })
        << QStringList{"format_version \"one\""};
    QTest::newRow("not an ironlearn file")
        << Change([](SafeTensorsFile& f) { f.metadata.remove("format"); })
        << QStringList{"not an Iron Learn model"};
    QTest::newRow("no architecture")
        << Change([](SafeTensorsFile& f) { f.metadata.remove("architecture"); })
        << QStringList{"\"architecture\""};
    QTest::newRow("architecture not JSON")
        << Change([](SafeTensorsFile& f) { f.metadata["architecture"] = "{oops"; })
        << QStringList{"\"architecture\" is not a JSON object"};
    QTest::newRow("architecture without spec")
        << Change([](SafeTensorsFile& f) { setArchitecture(f, "spec", QJsonValue()); })
        << QStringList{"invalid architecture", "\"spec\""};
    QTest::newRow("unknown layer")
        << Change([](SafeTensorsFile& f) { setArchitecture(f, "spec", "dense:4,wobble,dense:2"); })
        << QStringList{"invalid architecture", "wobble"};
    QTest::newRow("input width 0")
        << Change([](SafeTensorsFile& f) { setArchitecture(f, "input_width", 0); })
        << QStringList{"invalid architecture", "\"input_width\""};
    QTest::newRow("absurd input width")
        << Change([](SafeTensorsFile& f) { setArchitecture(f, "input_width", 2000000000); })
        << QStringList{"invalid architecture", "\"input_width\" must be an integer from 1 to "
                                               "1000000"};
    QTest::newRow("input width at the limit, tensors too small")
        << Change([](SafeTensorsFile& f) { setArchitecture(f, "input_width", 1000000); })
        << QStringList{mismatch, "\"layers.0.weight\""};
    QTest::newRow("vocabulary over the limit")
        << Change([](SafeTensorsFile& f) { setArchitecture(f, "vocab", 1000001); })
        << QStringList{"invalid architecture", "\"vocab\" must be an integer from 0 to 1000000"};
    // Limits.h: 10^6 tanh layers in a small file would take gigabytes to build.
    QTest::newRow("too many layers") << Change([](SafeTensorsFile& f) {
        QString spec = "dense:4";
        for (int i = 0; i < 1000; ++i)
            spec += ",tanh";
        setArchitecture(f, "spec", spec + ",dense:2");
    }) << QStringList{"invalid architecture", "1002 items; at most 1000"};
    // A row wider than the inference bound: no chunk of rows could be predicted.
    QTest::newRow("activations of one row over the limit") << Change([](SafeTensorsFile& f) {
        QString spec;
        for (int i = 0; i < 100; ++i)
            spec += "tanh,";
        setArchitecture(f, "spec", spec + "dense:2");
        setArchitecture(f, "input_width", 1000000);
    }) << QStringList{"invalid architecture", "MB of activations, over the limit of 256 MB"};
    QTest::newRow("output width disagrees")
        << Change([](SafeTensorsFile& f) { setArchitecture(f, "output_width", 3); })
        << QStringList{"invalid architecture"};
    QTest::newRow("bad hyperparameters") << Change([](SafeTensorsFile& f) {
        f.metadata["hyperparameters"] = R"({"batch_size": "big"})";
    }) << QStringList{"hyperparameters", "\"batch_size\""};
    QTest::newRow("bad history") << Change([](SafeTensorsFile& f) {
        f.metadata["training"] = R"({"history": [[1, 2, 3]]})";
    }) << QStringList{"training", "history row 0"};
    QTest::newRow("task not JSON") << Change([](SafeTensorsFile& f) { f.metadata["task"] = "[]"; })
                                   << QStringList{"\"task\" is not a JSON object"};
}

void TestModelFile::openRefusals()
{
    using Change = std::function<void(SafeTensorsFile&)>;
    QFETCH(Change, change);
    QFETCH(QStringList, expected);
    Backend& b = *m_backend;
    Network net(b, 3, "dense:4,tanh,dense:2", 2);
    net.initialize(1);
    QTemporaryDir dir;
    const QString path = dir.filePath("model.safetensors");
    QString error;
    QVERIFY(saveModel(path, net, nullptr, TrainerConfig{}, TrainingState{}, {}, &error));
    rewrite(path, change);

    auto model = openModel(path, b, &error);
    QVERIFY(!model);
    QVERIFY2(error.startsWith(path + ": ") && !error.contains('\n'), qPrintable(error));
    for (const QString& fragment : expected)
        QVERIFY2(error.contains(fragment),
                 qPrintable(QString("'%1' not in: %2").arg(fragment, error)));
}

void TestModelFile::restoreOptimizerRefusals()
{
    Backend& b = *m_backend;
    Network net(b, 3, "dense:4,tanh,dense:2", 2);
    net.initialize(1);
    Optimizer adam(b, OptimizerConfig{}, net.parameterRanges());
    QTemporaryDir dir;
    QString error;
    const QString withState = dir.filePath("a.safetensors");
    const QString without = dir.filePath("b.safetensors");
    QVERIFY(saveModel(withState, net, &adam, TrainerConfig{}, TrainingState{}, {}, &error));
    QVERIFY(saveModel(without, net, nullptr, TrainerConfig{}, TrainingState{}, {}, &error));

    auto model = openModel(withState, b, &error);
    QVERIFY2(model, qPrintable(error));
    const OptimizerConfig momentum = OptimizerConfig::named("momentum");
    Optimizer other(b, momentum, net.parameterRanges());
    QVERIFY(!restoreOptimizer(*model, b, other, &error));
    QVERIFY2(error.contains("adam") && error.contains("momentum"), qPrintable(error));
    Optimizer same(b, OptimizerConfig{}, net.parameterRanges());
    QVERIFY2(restoreOptimizer(*model, b, same, &error), qPrintable(error));

    auto bare = openModel(without, b, &error);
    QVERIFY2(bare, qPrintable(error));
    QVERIFY(bare->optimizerState.empty());
    QVERIFY(!restoreOptimizer(*bare, b, same, &error));
    QVERIFY2(error.contains("no saved optimizer state"), qPrintable(error));
}

void TestModelFile::failedSaveKeepsPreviousModel()
{
    Backend& b = *m_backend;
    Network net(b, 3, "dense:64,tanh,dense:2", 2);
    net.initialize(1);
    QTemporaryDir dir;
    const QString path = dir.filePath("model.safetensors");
    QString error;
    QVERIFY(saveModel(path, net, nullptr, TrainerConfig{}, TrainingState{}, {}, &error));
    const QByteArray before = readBytes(path);
    net.initialize(2);
    io::detail::injectedFailureForTesting = {io::detail::FailStep::Write, ENOSPC,
                                             before.size() / 2};
    const bool saved = saveModel(path, net, nullptr, TrainerConfig{}, TrainingState{}, {}, &error);
    io::detail::injectedFailureForTesting = {};
    QVERIFY(!saved);
    QVERIFY2(error.startsWith(path + ": cannot save"), qPrintable(error));
    QCOMPARE(readBytes(path), before);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);
}

void TestModelFile::resumeMatchesStraightRun_data()
{
    QTest::addColumn<QString>("optimizer");
    QTest::addColumn<int>("schedule"); // ScheduleKind
    QTest::addColumn<int>("batch");    // 64 training rows
    QTest::addColumn<int>("evalEvery");
    QTest::addColumn<bool>("cancelAt20"); // else: a 20-step budget, then 40
    auto row = [](const char* name, const char* o, ScheduleKind s, int batch, int evalEvery,
                  bool cancel) {
        QTest::newRow(name) << QString(o) << int(s) << batch << evalEvery << cancel;
    };
    row("adam, constant, stop at an epoch end", "adam", ScheduleKind::Constant, 16, 0, false);
    row("adam, constant, stop mid-epoch", "adam", ScheduleKind::Constant, 24, 5, false);
    row("momentum, step decay, mid-epoch", "momentum", ScheduleKind::StepDecay, 24, 5, false);
    row("sgd, full batch", "sgd", ScheduleKind::Constant, 0, 4, false);
    // Cancelled between evaluations: the losses of steps 19 and 20 are pending in the state and
    // must reach the epoch mean recorded at step 21.
    row("adam, cancelled mid-epoch, pending losses", "adam", ScheduleKind::Constant, 24, 0, true);
    row("adamw, cosine + warm-up, cancelled at 20", "adamw", ScheduleKind::Cosine, 24, 5, true);
}

void TestModelFile::resumeMatchesStraightRun()
{
    QFETCH(QString, optimizer);
    QFETCH(int, schedule);
    QFETCH(int, batch);
    QFETCH(int, evalEvery);
    QFETCH(bool, cancelAt20);
    Backend& b = *m_backend;
    const Dataset data = makeDataset(b);
    const std::string spec = "dense:16,tanh,dense:8,relu,dense:1";

    TrainerConfig config;
    config.steps = 40;
    config.batchSize = batch;
    config.seed = 9;
    config.evalEvery = evalEvery;
    config.optimizer = OptimizerConfig::named(optimizer.toStdString()); // AdamW: decay 0.01
    config.schedule = {static_cast<ScheduleKind>(schedule), 0.02f, 0.001f, 7, 0.5f, 5};
    config.clipNorm = 2.f;
    config.patience = 1000; // tracks best_val_loss without ever stopping

    // Straight through.
    Network straight(b, 3, spec, 1);
    straight.initialize(config.seed);
    Optimizer straightOpt(b, config.optimizer, straight.parameterRanges());
    TrainingState straightState;
    Trainer(straight, straightOpt, config, straightState).run(data.data());
    QCOMPARE(straightState.step, int64_t(40));
    QVERIFY(straightState.history.size() >= 4);

    // Twenty steps, save.
    QTemporaryDir dir;
    const QString path = dir.filePath("half.safetensors");
    QString error;
    {
        Network first(b, 3, spec, 1);
        first.initialize(config.seed);
        Optimizer firstOpt(b, config.optimizer, first.parameterRanges());
        TrainingState firstState;
        TrainerConfig firstConfig = config;
        if (!cancelAt20) firstConfig.steps = 20;
        RunPolicy everyStep;
        everyStep.progressInterval = 0;
        Trainer trainer(first, firstOpt, firstConfig, firstState, everyStep);
        trainer.setProgressCallback([&](const Progress& p) {
            if (cancelAt20 && p.step >= 20) trainer.requestCancel();
        });
        trainer.run(data.data());
        QCOMPARE(firstState.step, int64_t(20));
        QVERIFY2(saveModel(path, first, &firstOpt, firstConfig, firstState, {}, &error),
                 qPrintable(error));
    }

    // Open into fresh objects and continue to 40.
    auto model = openModel(path, b, &error);
    QVERIFY2(model, qPrintable(error));
    TrainerConfig resumedConfig = model->info.config;
    resumedConfig.steps = 40;
    QCOMPARE(compact(trainerConfigToJson(resumedConfig)), compact(trainerConfigToJson(config)));
    Optimizer resumedOpt(b, resumedConfig.optimizer, model->network->parameterRanges());
    // (Plain SGD has no state: restoring it is a successful no-op.)
    QVERIFY2(restoreOptimizer(*model, b, resumedOpt, &error), qPrintable(error));
    TrainingState resumed = model->info.state;
    Trainer(*model->network, resumedOpt, resumedConfig, resumed).run(data.data());

    QCOMPARE(resumed.step, straightState.step);
    QCOMPARE(resumed.epoch, straightState.epoch);
    QCOMPARE(resumed.stepInEpoch, straightState.stepInEpoch);
    QVERIFY(sameDouble(resumed.bestValLoss, straightState.bestValLoss));
    QCOMPARE(resumed.evalsWithoutImprovement, straightState.evalsWithoutImprovement);
    QCOMPARE(resumed.history.size(), straightState.history.size());
    for (size_t i = 0; i < resumed.history.size(); ++i) {
        const HistoryPoint &r = resumed.history[i], &s = straightState.history[i];
        const QString where = QString("history point %1 (step %2)").arg(i).arg(s.step);
        QVERIFY2(r.step == s.step && sameDouble(r.epoch, s.epoch), qPrintable(where));
        QVERIFY2(sameDouble(r.trainLoss, s.trainLoss),
                 qPrintable(where + QString(": train %1 vs %2")
                                        .arg(r.trainLoss, 0, 'g', 17)
                                        .arg(s.trainLoss, 0, 'g', 17)));
        QVERIFY2(sameDouble(r.valLoss, s.valLoss), qPrintable(where + ": val"));
        QVERIFY2(sameDouble(r.lr, s.lr), qPrintable(where + ": lr"));
    }
    QVERIFY(sameBits(allTensors(*model->network), allTensors(straight)));
}

QTEST_GUILESS_MAIN(TestModelFile)
#include "TestModelFile.moc"
