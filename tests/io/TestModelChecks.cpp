// A model file is checked like the options it stands in for: hyperparameters outside the ranges
// the CLI's options accept (configRange, the optimizer registry), non-finite weights or
// optimizer state, a negative Adam v or a training state past its own step count are refused
// when the file is opened, with one line naming the file and the field or tensor. Text from the
// file in the message is shown escaped and shortened (io::printable).
#include "ModelFile.h"
#include "PrintableText.h"

#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <functional>
#include <limits>

using namespace il;
using namespace il::io;

namespace {

using Change = std::function<void(SafeTensorsFile&)>;

QJsonObject metadataObject(const SafeTensorsFile& f, const QString& key)
{
    return QJsonDocument::fromJson(f.metadata.value(key).toUtf8()).object();
}

void setMetadataObject(SafeTensorsFile& f, const QString& key, const QJsonObject& o)
{
    f.metadata[key] = QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

// Sets hyperparameters.<group>.<key> (group "" for a top-level key).
Change hyper(const QString& group, const QString& key, const QJsonValue& v)
{
    return [=](SafeTensorsFile& f) {
        QJsonObject h = metadataObject(f, "hyperparameters");
        if (group.isEmpty()) {
            h[key] = v;
        } else {
            QJsonObject g = h[group].toObject();
            g[key] = v;
            h[group] = g;
        }
        setMetadataObject(f, "hyperparameters", h);
    };
}

Change training(const QString& key, const QJsonValue& v)
{
    return [=](SafeTensorsFile& f) {
        QJsonObject t = metadataObject(f, "training");
        t[key] = v;
        setMetadataObject(f, "training", t);
    };
}

// Puts value at index of the named tensor.
Change tensorValue(const std::string& name, size_t index, float value)
{
    return [=](SafeTensorsFile& f) {
        for (StoredTensor& t : f.tensors)
            if (t.name == name) t.data.at(index) = value;
    };
}

Change spec(const QString& text)
{
    return [=](SafeTensorsFile& f) {
        QJsonObject a = metadataObject(f, "architecture");
        a["spec"] = text;
        setMetadataObject(f, "architecture", a);
    };
}

} // namespace

class TestModelChecks : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { m_backend = createCpuBackend(1); }
    void refusals_data();
    void refusals();
    void printable_data();
    void printable();

private:
    std::unique_ptr<Backend> m_backend;
};

void TestModelChecks::refusals_data()
{
    QTest::addColumn<Change>("change");
    QTest::addColumn<QStringList>("expected"); // empty: the file opens
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();

    QTest::newRow("as saved") << Change([](SafeTensorsFile&) {}) << QStringList{};
    QTest::newRow("lr_max -1") << hyper("schedule", "lr_max", -1)
                               << QStringList{"hyperparameters.schedule: \"lr_max\" must be a "
                                              "learning rate from 1e-12 to 1000000, not -1"};
    QTest::newRow("lr_max Infinity")
        << hyper("schedule", "lr_max", "Infinity") << QStringList{"\"lr_max\"", "\"Infinity\""};
    QTest::newRow("lr_min NaN") << hyper("schedule", "lr_min", QJsonValue::Null)
                                << QStringList{"\"lr_min\"", "not null"};
    QTest::newRow("gamma 3") << hyper("schedule", "gamma", 3) << QStringList{"\"gamma\""};
    QTest::newRow("label_smoothing 2")
        << hyper("", "label_smoothing", 2)
        << QStringList{"\"label_smoothing\" must be a label smoothing from 0 to 0.5"};
    QTest::newRow("class_weight heavy")
        << hyper("", "class_weight", "heavy") << QStringList{"\"class_weight\"", "\"heavy\""};
    QTest::newRow("clip_norm -1") << hyper("", "clip_norm", -1) << QStringList{"\"clip_norm\""};
    QTest::newRow("epochs 1e12") << hyper("", "epochs", 1e12) << QStringList{"\"epochs\""};
    QTest::newRow("batch_size 2^40")
        << hyper("", "batch_size", 1099511627776.0) << QStringList{"\"batch_size\""};
    QTest::newRow("target_loss NaN")
        << hyper("", "target_loss", QJsonValue::Null) << QStringList{"\"target_loss\""};
    QTest::newRow("adam eps 0") << hyper("optimizer", "eps", 0)
                                << QStringList{"optimizer: \"eps\" must be between 1e-30 and 1"};
    QTest::newRow("adam beta1 2") << hyper("optimizer", "beta1", 2) << QStringList{"\"beta1\""};
    QTest::newRow("step_in_epoch past step") << Change([](SafeTensorsFile& f) {
        training("step", 3)(f);
        training("step_in_epoch", 9007199254740992.0)(f);
    }) << QStringList{"training: \"step_in_epoch\" (9007199254740992) is more than \"step\" (3)"};
    QTest::newRow("NaN weight") << tensorValue("layers.0.weight", 3, nan)
                                << QStringList{"tensor \"layers.0.weight\" holds nan (value 3 of "
                                               "12)",
                                               "never holds NaN or infinite values"};
    QTest::newRow("infinite bias")
        << tensorValue("layers.2.bias", 1, -inf) << QStringList{"\"layers.2.bias\" holds -inf"};
    QTest::newRow("infinite optimizer.m")
        << tensorValue("optimizer.m", 0, inf) << QStringList{"\"optimizer.m\" holds inf"};
    QTest::newRow("negative optimizer.v")
        << tensorValue("optimizer.v", 5, -1.f)
        << QStringList{"\"optimizer.v\" holds -1 (value 5 of",
                       "adam keeps a running mean of squares there"};
    QTest::newRow("negative optimizer.m is fine") // m is a mean of gradients
        << tensorValue("optimizer.m", 5, -1.f) << QStringList{};

    // An architecture of megabytes is quoted shortened, on one line, escaped.
    QString huge = "dense:4,";
    for (int i = 0; i < 17; ++i)
        huge += huge;
    QTest::newRow("1 MB architecture")
        << spec(huge + "wobble,dense:2")
        << QStringList{"invalid architecture \"dense:4,dense:4,", "…\""};
    QTest::newRow("long architecture that needs too many values")
        << spec(QString("dense:4096,").repeated(100) + "dense:2")
        << QStringList{"an architecture that does not match its tensors: \"dense:4096,",
                       "…\" needs"};
    QTest::newRow("escape sequence in the architecture")
        << spec("dense:4,\x1b[2J\nwobble,dense:2") << QStringList{"\\x1b[2J\\nwobble"};
}

void TestModelChecks::refusals()
{
    QFETCH(Change, change);
    QFETCH(QStringList, expected);
    Backend& b = *m_backend;
    Network net(b, 3, "dense:4,tanh,dense:2", 2);
    net.initialize(1);
    Optimizer adam(b, OptimizerConfig{}, net.parameterRanges());
    TrainerConfig config;
    config.steps = 10;
    TrainingState state;
    state.step = 5;
    QTemporaryDir dir;
    const QString path = dir.filePath("model.safetensors");
    QString error;
    QVERIFY(saveModel(path, net, &adam, config, state, {}, &error));
    SafeTensorsFile f;
    QVERIFY(readSafeTensors(path, f).ok);
    change(f);
    QVERIFY(writeSafeTensors(path, f).ok);

    auto model = openModel(path, b, &error);
    if (expected.isEmpty()) {
        QVERIFY2(model, qPrintable(error));
        return;
    }
    QVERIFY(!model);
    QVERIFY2(error.startsWith(path + ": "), qPrintable(error));
    QVERIFY2(!error.contains('\n') && !error.contains(QChar(0x1b)), qPrintable(error));
    QVERIFY2(error.size() < 600, qPrintable(error.left(600)));
    for (const QString& fragment : expected)
        QVERIFY2(error.contains(fragment),
                 qPrintable(QString("'%1' not in: %2").arg(fragment, error)));
}

void TestModelChecks::printable_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("maxChars");
    QTest::addColumn<QString>("shown");
    QTest::newRow("plain") << "setosa" << 0 << "setosa";
    QTest::newRow("accents and scripts kept") << "Zoë, नमस्ते" << 0 << "Zoë, नमस्ते";
    QTest::newRow("newline, tab, return") << "a\nb\tc\rd" << 0 << "a\\nb\\tc\\rd";
    QTest::newRow("escape sequence") << "\x1b[31mred" << 0 << "\\x1b[31mred";
    QTest::newRow("DEL and C1") << QString("x\x7f") + QChar(0x9b) << 0 << "x\\x7f\\x9b";
    QTest::newRow("right-to-left override")
        << QString("abc") + QChar(0x202e) + "fdp.exe" << 0 << "abc\\u202efdp.exe";
    QTest::newRow("isolates and marks")
        << QString(QChar(0x2066)) + QChar(0x200f) + QChar(0x2028) << 0 << "\\u2066\\u200f\\u2028";
    QTest::newRow("shortened") << "abcdefgh" << 5 << "abcde…";
    QTest::newRow("not shortened at the limit") << "abcde" << 5 << "abcde";
    QTest::newRow("emoji counts as one")
        << QString::fromUtf8("\xf0\x9f\x98\x80xyz") << 2 << QString::fromUtf8("\xf0\x9f\x98\x80x…");
}

void TestModelChecks::printable()
{
    QFETCH(QString, text);
    QFETCH(int, maxChars);
    QFETCH(QString, shown);
    QCOMPARE(il::io::printable(text, maxChars), shown);
    QCOMPARE(il::io::quoted(text, maxChars), '"' + shown + '"');
}

QTEST_GUILESS_MAIN(TestModelChecks)
#include "TestModelChecks.moc"
