// The parameter groups' settings in the model file (ModelJson.h): they go through a saved model
// and back unchanged, a file written before groups existed (no "groups") opens with the groups'
// defaults, and bad values fail with one message naming the field.
#include "ModelFile.h"
#include "ModelJson.h"
#include "Network.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

using namespace il;
using namespace il::io;

class TestModelJson : public QObject {
    Q_OBJECT

private slots:
    void groupsRoundTripThroughModelFile();
    void fileWithoutGroupsOpens();
    void badGroupValues_data();
    void badGroupValues();
};

void TestModelJson::groupsRoundTripThroughModelFile()
{
    auto cpu = createCpuBackend(1);
    Network net(*cpu, 2, "hashgrid:2:1:4:2:2,dense:1", 1);
    net.initialize(1);
    TrainerConfig config;
    config.optimizer.setGroupLr("grid_tables", 4e-3f);
    config.optimizer.setGroupSetting("grid_tables", "beta2", 0.95f);
    QVERIFY(config.optimizer != OptimizerConfig());
    Optimizer opt(*cpu, config.optimizer, net.parameterRanges());
    QTemporaryDir dir;
    const QString path = dir.filePath("grid.safetensors");
    QString error;
    QVERIFY2(
        saveModel(path, net, &opt, config, TrainingState{}, QJsonObject{{"kind", "image"}}, &error),
        qPrintable(error));
    ModelInfo info;
    QVERIFY2(readModelInfo(path, info, &error), qPrintable(error));
    QVERIFY(info.config.optimizer == config.optimizer);
    QCOMPARE(info.config.optimizer.group("grid_tables").lr, 4e-3f);
    QCOMPARE(info.config.optimizer.forGroup("grid_tables").value("beta2"), 0.95f);
    QCOMPARE(info.config.optimizer.forGroup("grid_tables").value("eps"), 1e-15f);
    // Readable in the file: the numbers as written.
    const QJsonObject groups =
        trainerConfigToJson(config)["optimizer"].toObject()["groups"].toObject();
    QCOMPARE(groups["grid_tables"].toObject()["lr"].toDouble(), 0.004);
    QCOMPARE(groups["grid_tables"].toObject()["beta2"].toDouble(), 0.95);
}

// Files written before the groups existed have no "groups": they open, and the tables take the
// groups' defaults.
void TestModelJson::fileWithoutGroupsOpens()
{
    TrainerConfig written;
    written.schedule.lrMax = 3e-3f;
    QJsonObject json = trainerConfigToJson(written);
    QJsonObject optimizer = json["optimizer"].toObject();
    QVERIFY(optimizer.contains("groups"));
    optimizer.remove("groups");
    json["optimizer"] = optimizer;
    TrainerConfig read;
    QString error;
    QVERIFY2(trainerConfigFromJson(json, read, &error), qPrintable(error));
    QCOMPARE(read.schedule.lrMax, 3e-3f);
    QVERIFY(read.optimizer == OptimizerConfig());
}

void TestModelJson::badGroupValues_data()
{
    QTest::addColumn<QJsonValue>("groups");
    QTest::addColumn<QString>("message"); // empty: accepted
    QTest::newRow("negative lr") << QJsonValue(
                                        QJsonObject{{"grid_tables", QJsonObject{{"lr", -1}}}})
                                 << "hyperparameters.optimizer.groups.grid_tables: \"lr\"";
    QTest::newRow("lr not a number")
        << QJsonValue(QJsonObject{{"grid_tables", QJsonObject{{"lr", "fast"}}}})
        << "hyperparameters.optimizer.groups.grid_tables: \"lr\" must be a number";
    QTest::newRow("beta2 out of range")
        << QJsonValue(QJsonObject{{"grid_tables", QJsonObject{{"beta2", 2}}}})
        << "hyperparameters.optimizer.groups.grid_tables: \"beta2\" must be between";
    QTest::newRow("group not an object")
        << QJsonValue(QJsonObject{{"grid_tables", 1}})
        << "hyperparameters.optimizer.groups: \"grid_tables\" must be an object";
    QTest::newRow("groups not an object")
        << QJsonValue(QJsonArray{}) << "hyperparameters.optimizer: \"groups\" must be an object";
    QTest::newRow("unknown group and key: newer files")
        << QJsonValue(QJsonObject{{"grid_tables", QJsonObject{{"lr", 0.5}, {"flavour", 1}}},
                                  {"future_group", QJsonObject{{"lr", 1}}}})
        << QString();
}

void TestModelJson::badGroupValues()
{
    QFETCH(QJsonValue, groups);
    QFETCH(QString, message);
    QJsonObject json = trainerConfigToJson(TrainerConfig{});
    QJsonObject optimizer = json["optimizer"].toObject();
    optimizer["groups"] = groups;
    json["optimizer"] = optimizer;
    TrainerConfig config;
    QString error;
    const bool ok = trainerConfigFromJson(json, config, &error);
    if (message.isEmpty()) {
        QVERIFY2(ok, qPrintable(error));
        QCOMPARE(config.optimizer.group("grid_tables").lr, 0.5f);
        return;
    }
    QVERIFY(!ok);
    QVERIFY2(error.startsWith(message), qPrintable(error));
    QVERIFY(config.optimizer == OptimizerConfig()); // unchanged
}

QTEST_GUILESS_MAIN(TestModelJson)
#include "TestModelJson.moc"
