// What every task type tells the CLI and the studio: names and files, presets and their help
// (every preset builds a network for its task), the training metric, what the models are for,
// a saved model's one-line summary; and what a table task gives the studio: prediction rows in
// the file's units and the head of its file for the preview.
#include "ImageTask.h"
#include "NamesTask.h"
#include "TabularTestUtil.h"

#include <QJsonArray>
#include <QTest>

#include <set>

using namespace il;
using namespace il::tasks;
using namespace il::tasks::test;

namespace {

// The type's own example data (TaskType::example), opened.
std::unique_ptr<Task> sampleTask(const TaskType& type, QString* error)
{
    const TaskType::Example example = type.example();
    TaskOptions o;
    o.task = type.name();
    return openTask(example.fileName, example.bytes, o, error);
}

} // namespace

class TestTaskTypes : public QObject {
    Q_OBJECT

private slots:
    void registry();
    void files_data();
    void files();
    void dialogFilter();
    void presetHelp();
    void presetsBuild();
    void metric();
    void describeSaved();
    void regressionPredictions();
    void classificationPredictions();
    void tableHead();
    void namesPreview();
    void schemasKnowTheirTask();
};

void TestTaskTypes::registry()
{
    QStringList names;
    for (const TaskType* t : taskTypes())
        names << t->name();
    QCOMPARE(names, (QStringList{"tabular", "image", "names"}));
    QCOMPARE(taskTypeNames(), QString("tabular, image or names"));
    for (const TaskType* t : taskTypes()) {
        QCOMPARE(findTaskType(t->name()), t);
        QCOMPARE(taskTypeOf(QJsonObject{{"task", t->name()}}), t);
    }
    QVERIFY(!findTaskType("Tabular"));
    QVERIFY(!findTaskType(""));
    QVERIFY(!taskTypeOf(QJsonObject{}));
    // A task reports its own type, and its kind is the type's name.
    QString error;
    for (const TaskType* t : taskTypes()) {
        QVERIFY2(t->supportsFile(t->example().fileName), qPrintable(t->name()));
        auto task = sampleTask(*t, &error);
        QVERIFY2(task, qPrintable(error));
        QCOMPARE(&task->type(), t);
        QCOMPARE(task->kind(), t->name());
    }
}

void TestTaskTypes::files_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("type");
    QTest::newRow("csv") << "data/iris.csv"
                         << "tabular";
    QTest::newRow("TSV upper case") << "DATA.TSV"
                                    << "tabular";
    QTest::newRow("json") << "xor.json"
                          << "tabular";
    QTest::newRow("png") << "camera.png"
                         << "image";
    QTest::newRow("jpeg") << "a.b.JPEG"
                          << "image";
    QTest::newRow("tiff") << "scan.tiff"
                          << "image";
    QTest::newRow("txt") << "names.txt"
                         << "names";
    QTest::newRow("markdown") << "README.md"
                              << "";
    QTest::newRow("no suffix") << "data"
                               << "";
}

void TestTaskTypes::files()
{
    QFETCH(QString, path);
    QFETCH(QString, type);
    const TaskType* found = taskTypeForPath(path);
    QCOMPARE(found ? found->name() : QString(), type);
    for (const TaskType* t : taskTypes())
        QCOMPARE(t->supportsFile(path), t == found);
}

void TestTaskTypes::dialogFilter()
{
    QCOMPARE(findTaskType("tabular")->fileFilter(), QString("Tables (*.csv *.tsv *.json)"));
    QCOMPARE(dataFileFilter(),
             QString("Data files (*.csv *.tsv *.json *.png *.jpg *.jpeg *.bmp *.gif *.webp "
                     "*.txt);;Tables (*.csv *.tsv *.json);;Images (*.png *.jpg *.jpeg *.bmp "
                     "*.gif *.webp);;Names (*.txt);;All files (*)"));
}

void TestTaskTypes::presetHelp()
{
    const QString help = il::tasks::presetHelp();
    QVERIFY(help.startsWith("Presets (--preset), by task:\n"));
    QVERIFY2(help.contains("\n  tabular  wide (default): dense:32,tanh,dense:32,tanh,dense,skip ("),
             qPrintable(help));
    QVERIFY2(help.contains("\n           linear: dense (linear / logistic regression)\n"),
             qPrintable(help));
    QVERIFY2(help.contains("\n  image    hashgrid (default): hashgrid:16:2:15:16:GROWTH,dense:64,"),
             qPrintable(help));
    // The names presets, which the hand-written help used to leave out.
    QVERIFY2(help.contains("\n  names    mlp (default): embedding:VOCAB:16,"), qPrintable(help));
    for (const TaskType* t : taskTypes())
        for (const LayerPreset& p : t->presets()) {
            QVERIFY2(help.contains(p.name + ": " + p.layers) ||
                         help.contains(p.name + " (default): " + p.layers),
                     qPrintable(p.name));
            QVERIFY2(t->presetHelp(2).contains(p.layers), qPrintable(p.name));
        }
    QVERIFY(help.contains("small: ") && help.contains("large: "));
}

void TestTaskTypes::presetsBuild()
{
    auto backend = createCpuBackend(1);
    QString error;
    for (const TaskType* t : taskTypes()) {
        auto task = sampleTask(*t, &error);
        QVERIFY2(task, qPrintable(error));
        QStringList names;
        for (const LayerPreset& p : t->presets())
            names << p.name;
        QCOMPARE(task->presets(), names);
        QCOMPARE(task->presetSpec("no-such-preset"), QString());
        for (const QString& name : names) {
            const QString spec = task->presetSpec(name);
            QVERIFY2(!spec.isEmpty() && !spec.contains("VOCAB"), qPrintable(spec));
            const TaskData& d = task->data();
            Network net(*backend, d.inputWidth, spec.toStdString(), d.outputWidth, d.vocab);
            QCOMPARE(net.outputWidth(), d.outputWidth);
        }
    }
    // Names: the data's vocabulary size goes into the embedding.
    auto names = sampleTask(*findTaskType("names"), &error);
    const auto* namesTask = dynamic_cast<const NamesTask*>(names.get());
    QVERIFY(namesTask);
    QCOMPARE(names->presetSpec("small"),
             QString("embedding:%1:10,dense:200,tanh,dense").arg(namesTask->schema().vocabSize()));
}

void TestTaskTypes::metric()
{
    const TaskType& tabular = *findTaskType("tabular");
    const MetricInfo regressionInfo =
        tabular.metric(QJsonObject{{"kind", "regression"}, {"targets", QJsonArray{"price"}}});
    QCOMPARE(regressionInfo.title, QString("Validation RMSE (file units)"));
    QVERIFY(regressionInfo.description.contains("price's units"));
    QVERIFY(regressionInfo.lossTitle.contains("standardised"));
    QCOMPARE(tabular.metric(QJsonObject{{"kind", "binary"}}).title, QString("Validation accuracy"));
    const MetricInfo image = findTaskType("image")->metric({});
    QCOMPARE(image.title, QString("PSNR (dB), higher is sharper"));
    QCOMPARE(image.pendingTitle.arg(50), QString("PSNR (dB): measured every 50 steps"));
    QVERIFY(findTaskType("names")->metric({}).title.contains("cross-entropy"));
    for (const TaskType* t : taskTypes())
        QVERIFY(!t->metric({}).description.isEmpty());

    // Every table has a metric: the accuracy, or the RMSE in the file's units (lower is better).
    TaskOptions o;
    QString error;
    auto regression = openTask("l.csv", linear(30), o, &error);
    auto classes = openTask("t.csv", threeClasses(30), o, &error);
    QVERIFY(regression && classes);
    QVERIFY(regression->hasTrainingMetric() && regression->metricLowerIsBetter());
    QVERIFY(classes->hasTrainingMetric() && !classes->metricLowerIsBetter());
    auto backend = createCpuBackend(1);
    Network net(*backend, 2, "dense", 1);
    net.initialize(1);
    const double rmse = regression->trainingMetric(net);
    QVERIFY(std::isfinite(rmse) && rmse > 0);
    QVERIFY(std::fabs(rmse * rmse - regression->evaluate(net).values["mse"].toDouble()) <
            1e-6 * rmse * rmse);
}

void TestTaskTypes::describeSaved()
{
    QString error;
    auto task = openTask("t.csv", threeClasses(30), {}, &error);
    QVERIFY2(task, qPrintable(error));
    QCOMPARE(task->type().describeSaved(task->toJson()),
             QString("tabular: multi-class classification, 2 features -> label (classes: cat, "
                     "dog, emu)"));
    QCOMPARE(findTaskType("image")->describeSaved({}), QString("image"));
}

void TestTaskTypes::regressionPredictions()
{
    // y = 2i + 0.5 up to 59.5; min-max normalisation puts the network's targets in [0, 1], so
    // rows in the file's units are easy to tell apart.
    TaskOptions o;
    o.normalisation = "minmax";
    o.valSplit = 0.25;
    QString error;
    auto task = openTask("l.csv", linear(30), o, &error);
    QVERIFY2(task, qPrintable(error));
    auto backend = createCpuBackend(1);
    Network net(*backend, 2, "dense", 1);
    net.initialize(3);
    const Predictions p = task->predictions(net, 1000);
    QCOMPARE(p.where, QString("validation"));
    QVERIFY(!p.classification);
    QCOMPARE(static_cast<int64_t>(p.rows.size()), task->data().valRows);
    // The validation rows are rows of the file: their targets, in the file's units.
    std::set<double> fileTargets;
    for (int i = 0; i < 30; ++i)
        fileTargets.insert(2.0 * i + 0.5);
    double largest = 0;
    const auto& schema = dynamic_cast<const TabularTask&>(*task).schema();
    const auto outputs = predictRows(net, task->data().valX, task->data().valRows);
    const auto expected = tabularPredictions(schema, outputs);
    for (size_t r = 0; r < p.rows.size(); ++r) {
        const PredictionRow& row = p.rows[r];
        const double actual = row.actual.toDouble();
        QVERIFY2(fileTargets.count(actual) == 1, qPrintable(row.actual));
        largest = std::max(largest, actual);
        // The prediction, turned back from the normalised output.
        QVERIFY(near(row.predicted.toDouble(), expected[r], 1e-4 * std::max(1.0, expected[r])));
        QVERIFY(near(row.error, row.predicted.toDouble() - actual, 1e-3));
        QCOMPARE(row.correct, -1);
        QVERIFY(std::isnan(row.confidence));
    }
    QVERIFY(largest > 1.0); // not the normalised targets
    // At most maxRows rows.
    QCOMPARE(task->predictions(net, 3).rows.size(), size_t(3));
}

void TestTaskTypes::classificationPredictions()
{
    TaskOptions o;
    o.valSplit = 0;
    QString error;
    auto task = openTask("t.csv", threeClasses(30), o, &error);
    QVERIFY2(task, qPrintable(error));
    auto backend = createCpuBackend(1);
    Network net(*backend, 2, "dense", 3);
    net.initialize(1);
    const Predictions p = task->predictions(net, 1000);
    QCOMPARE(p.where, QString("training"));
    QVERIFY(p.classification);
    QCOMPARE(p.rows.size(), size_t(30));
    std::map<QString, int> actual;
    for (const PredictionRow& row : p.rows) {
        ++actual[row.actual];
        QVERIFY2(QStringList({"cat", "dog", "emu"}).contains(row.predicted),
                 qPrintable(row.predicted));
        QCOMPARE(row.correct, row.actual == row.predicted ? 1 : 0);
        QVERIFY(row.confidence >= 1.0 / 3 - 1e-6 && row.confidence <= 1.0);
    }
    // Every file row once: ten of each label.
    QCOMPARE(actual, (std::map<QString, int>{{"cat", 10}, {"dog", 10}, {"emu", 10}}));
}

void TestTaskTypes::tableHead()
{
    // 300 rows; row 250 misses a feature and is dropped.
    QByteArray csv = "a,colour,y\n";
    for (int i = 0; i < 300; ++i)
        csv += (i == 250 ? QByteArray() : QByteArray::number(i)) + "," +
               QByteArray(i % 2 ? "red" : "blue") + "," + QByteArray::number(i * 0.5) + "\n";
    TaskOptions o;
    o.missing = "drop";
    QString error;
    auto task = openTask("big.csv", csv, o, &error);
    QVERIFY2(task, qPrintable(error));
    const auto& tabular = dynamic_cast<const TabularTask&>(*task);
    const io::CsvTable& head = tabular.head();
    QCOMPARE(head.rows, kTablePreviewRows);
    QCOMPARE(head.columnNames(), (QStringList{"a", "colour", "y"}));
    QCOMPARE(head.columns[0].numbers.size(), size_t(kTablePreviewRows));
    QCOMPARE(head.columns[0].numbers[7], 7.f);
    QCOMPARE(head.columns[1].categories, (QStringList{"blue", "red"}));
    QVERIFY(head.columns[1].isText());
    // Counts are the whole file's.
    QCOMPARE(head.columns[0].missingCount, int64_t(1));
    QCOMPARE(head.lineOf(10), int64_t(12));
    QCOMPARE(tabular.schema().features, (QStringList{"a", "colour"}));
}

void TestTaskTypes::namesPreview()
{
    QByteArray text = "Anna\n\nBob\n";
    for (int i = 0; i < 2500; ++i)
        text +=
            "n" + QByteArray(1, char('a' + i % 26)) + QByteArray(1, char('a' + i / 26 % 26)) + "\n";
    QString error;
    TaskOptions o;
    auto task = openTask("n.txt", text, o, &error);
    QVERIFY2(task, qPrintable(error));
    const auto& names = dynamic_cast<const NamesTask&>(*task);
    QCOMPARE(names.nameCount(), int64_t(2502));
    QCOMPARE(names.firstNames().size(), kNamesPreviewCount);
    QCOMPARE(names.firstNames().mid(0, 3), (QStringList{"anna", "bob", "naa"})); // lower case
}

void TestTaskTypes::schemasKnowTheirTask()
{
    QString error;
    NamesSchema names;
    QVERIFY(
        !NamesSchema::fromJson(QJsonObject{{"task", "tabular"}, {"context", 3}}, names, &error));
    QVERIFY2(error.contains("not trained on names"), qPrintable(error));
    ImageGeometry geometry;
    QVERIFY(!ImageGeometry::fromJson(QJsonObject{{"task", "names"}}, geometry, &error));
}

QTEST_GUILESS_MAIN(TestTaskTypes)
#include "TestTaskTypes.moc"
