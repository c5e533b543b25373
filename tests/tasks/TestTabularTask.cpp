// Tables from files to rows: column roles, one-hot features, the kind of problem, missing
// values, splits, JSON datasets, and every broken file giving one line that names the file
// and the line and column. (Normalisation, metrics and outputs: TestTabularOutputs.cpp.)
#include "TabularTestUtil.h"

#include <QTest>

#include <set>

using namespace il;
using namespace il::tasks;
using namespace il::tasks::test;

class TestTabularTask : public QObject {
    Q_OBJECT

private slots:
    void roles();
    void roleErrors_data();
    void roleErrors();
    void oneHot();
    void kinds_data();
    void kinds();
    void missing();
    void splits();
    void jsonDataset();
    void badInput_data();
    void badInput();
};

void TestTabularTask::roles()
{
    const QByteArray csv = "a,b,c,y\n1,2,3,4\n2,3,4,5\n3,4,5,7\n4,5,6,8\n";
    TabularDataset ds;
    QString error;
    TabularOptions o;
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    QCOMPARE(ds.schema.features, (QStringList{"a", "b", "c"}));
    QCOMPARE(ds.schema.targets, QStringList{"y"});

    o.target = "1"; // by number
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    QCOMPARE(ds.schema.target, QString("a"));
    QCOMPARE(ds.schema.features, (QStringList{"b", "c", "y"}));

    o = {};
    o.target = "c,y"; // two targets: regression with two outputs
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    QCOMPARE(ds.schema.targets, (QStringList{"c", "y"}));
    QCOMPARE(ds.schema.outputWidth(), int64_t(2));
    QCOMPARE(ds.train.y.size(), size_t(2 * ds.train.rows));

    o = {};
    o.features = {"1-2"};
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    QCOMPARE(ds.schema.features, (QStringList{"a", "b"}));

    o = {};
    o.ignore = {"B", "c"}; // names match regardless of case
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    QCOMPARE(ds.schema.features, QStringList{"a"});
}

void TestTabularTask::roleErrors_data()
{
    QTest::addColumn<QString>("target");
    QTest::addColumn<QStringList>("features");
    QTest::addColumn<QStringList>("ignore");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("unknown target") << "nosuch" << QStringList{} << QStringList{}
                                    << "t.csv: no column \"nosuch\" (columns: a, b, y)";
    QTest::newRow("unknown ignore")
        << "" << QStringList{} << QStringList{"zz"} << "t.csv: --ignore: no column \"zz\"";
    QTest::newRow("target ignored")
        << "y" << QStringList{} << QStringList{"y"} << "--ignore: \"y\" is the target";
    QTest::newRow("feature is target")
        << "" << QStringList{"a", "y"} << QStringList{} << "--features: \"y\" is the target";
    QTest::newRow("nothing left") << "" << QStringList{} << QStringList{"a", "b"}
                                  << "no feature columns are left";
    QTest::newRow("range out of table")
        << "" << QStringList{"2-9"} << QStringList{} << "--features: no column \"2-9\"";
}

void TestTabularTask::roleErrors()
{
    QFETCH(QString, target);
    QFETCH(QStringList, features);
    QFETCH(QStringList, ignore);
    QFETCH(QString, mentions);
    TabularOptions o;
    o.target = target;
    o.features = features;
    o.ignore = ignore;
    TabularDataset ds;
    QString error;
    QVERIFY(!prepare("a,b,y\n1,2,3\n4,5,6\n", o, ds, &error));
    QVERIFY2(error.contains(mentions), qPrintable(error));
}

void TestTabularTask::oneHot()
{
    QByteArray csv = "colour,size,y\n";
    const char* colours[] = {"red", "green", "blue"};
    for (int i = 0; i < 30; ++i)
        csv += QByteArray(colours[i % 3]) + "," + QByteArray::number(i) + "," +
               QByteArray::number(i % 3 * 10 + i * 0.1) + "\n";
    TabularOptions o;
    o.valSplit = 0;
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    const TabularSchema& s = ds.schema;
    QCOMPARE(s.featureCategories[0], (QStringList{"blue", "green", "red"}));
    QCOMPARE(s.inputWidth(), int64_t(4));
    QCOMPARE(s.inputNames(), (QStringList{"colour=blue", "colour=green", "colour=red", "size"}));
    // Row 0 is red: 0, 0, 1; the indicators are not normalised.
    QCOMPARE(ds.train.x[0], 0.f);
    QCOMPARE(ds.train.x[1], 0.f);
    QCOMPARE(ds.train.x[2], 1.f);
    QCOMPARE(ds.train.x[4 + 1], 1.f); // row 1 is green
    QCOMPARE(s.inputOffset[2], 0.f);
    QCOMPARE(s.inputScale[2], 1.f);
    QVERIFY(near(s.inputOffset[3], 14.5, 1e-5)); // size is z-scored

    // Encoding another file: the categories are the model's; an unknown one is named.
    TabularSplit rows;
    QVERIFY2(
        encodeTabular(tableOf("size,colour,y\n3,blue,1\n"), s, "fail", true, rows, nullptr, &error),
        qPrintable(error));
    QCOMPARE(rows.x[0], 1.f);
    QVERIFY(!encodeTabular(tableOf("size,colour,y\n3,blue,1\n4,purple,2\n", "new.csv"), s, "fail",
                           true, rows, nullptr, &error));
    QVERIFY2(error.startsWith("new.csv:3: column 2 (\"colour\"): category \"purple\" was not "
                              "seen in training (categories: blue, green, red)"),
             qPrintable(error));

    // Too many distinct texts for one-hot: refused, naming the column and the way out.
    QByteArray many = "city,y\n";
    for (int i = 0; i < 40; ++i)
        many += "town" + QByteArray::number(i) + "," + QByteArray::number(i) + "\n";
    QVERIFY(!prepare(many, {}, ds, &error));
    QVERIFY2(error.startsWith("t.csv: column 1 (\"city\") holds text with 40 distinct values "
                              "(such as \"town0\" at line 2)"),
             qPrintable(error));
    QVERIFY(error.contains("--ignore \"city\""));
}

void TestTabularTask::kinds_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<QStringList>("classes");
    const QByteArray ints = "0,1,2,1,0,2,1,0,2,1,0,2,2,1,0,1,0,2,1,0";
    QByteArray floats, manyInts, labels, twoLabels;
    for (int i = 0; i < 20; ++i) {
        floats += (i ? "," : "") + QByteArray::number(i * 0.37 + 1);
        manyInts += (i ? "," : "") + QByteArray::number(i * 3);
        labels += (i ? "," : "") + QByteArray(i % 3 == 0 ? "low" : i % 3 == 1 ? "mid" : "high");
        twoLabels += (i ? "," : "") + QByteArray(i % 2 ? "yes" : "no");
    }
    QTest::newRow("few integers") << ints << "auto"
                                  << "multi-class classification" << QStringList{"0", "1", "2"};
    QTest::newRow("floats") << floats << "auto"
                            << "regression" << QStringList{};
    QTest::newRow("many integers") << manyInts << "auto"
                                   << "regression" << QStringList{};
    QTest::newRow("text labels") << labels << "auto"
                                 << "multi-class classification"
                                 << QStringList{"high", "low", "mid"};
    QTest::newRow("two labels") << twoLabels << "auto"
                                << "binary classification" << QStringList{"no", "yes"};
    QTest::newRow("integers as regression") << ints << "regression"
                                            << "regression" << QStringList{};
    QTest::newRow("many integers as classes") << manyInts << "classification"
                                              << "multi-class classification" << QStringList{};
    QTest::newRow("text as regression") << labels << "regression"
                                        << "error:cannot be a regression" << QStringList{};
    QTest::newRow("bad kind") << ints << "clustering"
                              << "error:--kind must be" << QStringList{};
}

void TestTabularTask::kinds()
{
    QFETCH(QByteArray, target);
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    QFETCH(QStringList, classes);
    QByteArray csv = "x,t\n";
    const QList<QByteArray> values = target.split(',');
    for (int i = 0; i < values.size(); ++i)
        csv += QByteArray::number(i) + "," + values[i] + "\n";
    TabularOptions o;
    o.kind = kind;
    TabularDataset ds;
    QString error;
    const bool ok = prepare(csv, o, ds, &error);
    if (expected.startsWith("error:")) {
        QVERIFY(!ok);
        QVERIFY2(error.contains(expected.mid(6)), qPrintable(error));
        return;
    }
    QVERIFY2(ok, qPrintable(error));
    QCOMPARE(ds.schema.kindName(), expected);
    if (!classes.isEmpty()) QCOMPARE(ds.schema.classes, classes);
}

void TestTabularTask::missing()
{
    const QByteArray csv = "a,b,note,y\n1,2,x,3\n4,NA,,6\n7,8,,9\n10,,x,12\n13,14,x,N/A\n"
                           "16,17,,18\n";
    TabularOptions o;
    o.ignore = {"note"}; // its empty cells do not matter
    TabularDataset ds;
    QString error;
    QVERIFY(!prepare(csv, o, ds, &error));
    QCOMPARE(error, QString("t.csv:3: column 2 (\"b\"): missing value; 3 rows have missing values "
                            "(\"b\" 2, \"y\" 1; lines 3, 5, 6); --missing drop leaves such rows "
                            "out"));
    o.missing = "drop";
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    QCOMPARE(ds.train.rows + ds.val.rows, int64_t(3));
    QCOMPARE(ds.train.source, (std::vector<int64_t>{0, 2, 5}));
    QVERIFY2(ds.notes.join('\n').contains("dropped 3 rows with missing values (\"b\" 2, \"y\" 1; "
                                          "lines 3, 5, 6)"),
             qPrintable(ds.notes.join('\n')));
    // A column that is used makes its empty cells count.
    o.ignore.clear();
    o.missing = "fail";
    QVERIFY(!prepare(csv, o, ds, &error));
    QVERIFY2(error.contains("\"note\" 3"), qPrintable(error));

    o = {};
    o.missing = "drop";
    QVERIFY(!prepare("a,y\n1,\n,2\n", o, ds, &error));
    QVERIFY2(error.startsWith("t.csv: every row has a missing value"), qPrintable(error));
    o.missing = "skip";
    QVERIFY(!prepare(csv, o, ds, &error));
    QVERIFY2(error.contains("--missing must be fail or drop or ignore or mean"), qPrintable(error));

    // The studio reads no flag in the same refusal.
    o = {};
    o.ignore = {"note"};
    o.reader = MessageReader::Studio;
    QVERIFY(!prepare(csv, o, ds, &error));
    QVERIFY2(!error.contains("--"), qPrintable(error));

    // "ignore" leaves out the features with missing cells ("b"); rows without a target go.
    o.missing = "ignore";
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    QCOMPARE(ds.schema.features, QStringList{"a"});
    QCOMPARE(ds.train.source, (std::vector<int64_t>{0, 1, 2, 3, 5}));
    QVERIFY2(ds.notes.join('\n').contains("left out 1 column with missing values (\"b\" 2)"),
             qPrintable(ds.notes.join('\n')));

    // "mean" fills "b" with its mean over the training rows only, kept in the schema; the row
    // without a target goes.
    o.missing = "mean";
    o.valSplit = 0.2;
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    QCOMPARE(ds.train.rows + ds.val.rows, int64_t(5));
    QCOMPARE(ds.schema.missingFill.size(), size_t(2));
    double sum = 0;
    int n = 0;
    const std::vector<float> bs = {2, NAN, 8, NAN, 14, 17};
    for (int64_t r : ds.train.source)
        if (!std::isnan(bs[static_cast<size_t>(r)])) {
            sum += bs[static_cast<size_t>(r)];
            ++n;
        }
    QCOMPARE(ds.schema.missingFill[1], static_cast<float>(sum / n));
    TabularSchema back;
    QVERIFY2(TabularSchema::fromJson(ds.schema.toJson(), back, &error), qPrintable(error));
    QCOMPARE(back.missing, QString("mean"));
    QCOMPARE(back.missingFill, ds.schema.missingFill);
}

void TestTabularTask::splits()
{
    auto split = [](uint64_t seed, double val, double test, TabularDataset& ds) {
        TabularOptions o;
        o.seed = seed;
        o.valSplit = val;
        o.testSplit = test;
        QString error;
        return prepare(linear(100), o, ds, &error);
    };
    TabularDataset a, b, c;
    QVERIFY(split(7, 0.2, 0.1, a));
    QCOMPARE(a.train.rows, int64_t(70));
    QCOMPARE(a.val.rows, int64_t(20));
    QCOMPARE(a.test.rows, int64_t(10));
    std::set<int64_t> all;
    for (const auto* part : {&a.train, &a.val, &a.test})
        all.insert(part->source.begin(), part->source.end());
    QCOMPARE(all.size(), size_t(100)); // disjoint, and every row somewhere
    QVERIFY(split(7, 0.2, 0.1, b));
    QCOMPARE(b.test.source, a.test.source);
    QCOMPARE(b.val.source, a.val.source);
    QVERIFY(split(8, 0.2, 0.1, c));
    QVERIFY(c.test.source != a.test.source);

    // Resuming with the saved schema reproduces the rows of each split.
    TabularOptions again;
    again.fixedSchema = &a.schema;
    again.seed = a.schema.splitSeed;
    again.valSplit = a.schema.valSplit;
    again.testSplit = a.schema.testSplit;
    TabularDataset d;
    QString error;
    QVERIFY2(prepareTabular(tableOf(linear(100)), again, d, &error), qPrintable(error));
    QCOMPARE(d.val.source, a.val.source);
    QCOMPARE(d.test.source, a.test.source);
    QCOMPARE(d.schema.inputOffset, a.schema.inputOffset);

    // Defaults: 20% validation from 20 rows; none below, with a note.
    TabularDataset small;
    QVERIFY(prepare(linear(19), {}, small, &error));
    QCOMPARE(small.val.rows, int64_t(0));
    QVERIFY(small.notes.join(' ').contains("too few for a validation split"));
    QVERIFY(split(1, 0.6, 0.4, d) == false);
}

void TestTabularTask::jsonDataset()
{
    QByteArray json = R"({"m": 25, "n": 2, "x": [)";
    QByteArray y;
    for (int i = 0; i < 25; ++i) {
        json += (i ? "," : "") + QByteArray::number(i) + "," + QByteArray::number(i % 4);
        y += (i ? "," : "") + QByteArray::number(i % 2);
    }
    json += "], \"y\": [" + y + R"(], "x_test": [100, 1, 101, 2, 102, 3], "y_test": [0, 1, 0]})";
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(json, {}, ds, &error, "iron.json"), qPrintable(error));
    QCOMPARE(ds.schema.features, (QStringList{"x1", "x2"}));
    QCOMPARE(ds.schema.kindName(), QString("binary classification"));
    QCOMPARE(ds.test.rows, int64_t(3));
    QCOMPARE(ds.test.source, (std::vector<int64_t>{25, 26, 27}));
    QCOMPARE(ds.train.rows + ds.val.rows, int64_t(25));
    QCOMPARE(ds.val.rows, int64_t(5)); // 20% of the 28 rows, from the 25 training ones
    // The test rows come from the file: asking for another test split is refused.
    TabularOptions o;
    o.testSplit = 0.1;
    QVERIFY(!prepare(json, o, ds, &error, "iron.json"));
    QVERIFY2(error.contains("its own test rows (x_test)"), qPrintable(error));
    // A missing value in a JSON dataset names the example.
    QVERIFY(!prepare(R"({"m":2,"n":1,"x":[1,null],"y":[1,2]})", {}, ds, &error, "n.json"));
    QVERIFY2(error.startsWith("n.json: example 2: column 1 (\"x1\"): missing value"),
             qPrintable(error));
}

void TestTabularTask::badInput_data()
{
    QTest::addColumn<QByteArray>("csv");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("empty") << QByteArray() << "t.csv: the file is empty";
    QTest::newRow("header only") << QByteArray("a,b,y\n") << "t.csv: the file has a header row";
    QTest::newRow("ragged") << QByteArray("a,b,y\n1,2,3\n4,5\n") << "t.csv:3: 2 fields";
    QTest::newRow("non-numeric cell") << QByteArray("a,b,y\n1,2,3\n4,5,6\n7,heavy,9\n")
                                      << "t.csv:4: column 2 (\"b\"): \"heavy\" is not a number";
    QTest::newRow("out of float range")
        << QByteArray("a,b,y\n1,2,3\n1e60,5,6\n")
        << "t.csv:3: column 1 (\"a\"): \"1e60\": outside the float range";
    QTest::newRow("NaN text") << QByteArray("a,b,y\n1,2,3\n4,NaN,6\n")
                              << "t.csv:3: column 2 (\"b\"): missing value";
    QTest::newRow("Inf text") << QByteArray("a,b,y\n1,2,3\n4,5,-Inf\n")
                              << "t.csv:3: column 3 (\"y\"): \"-Inf\": infinite value";
    QTest::newRow("text target with a gap")
        << QByteArray("a,y\n1,cat\n2,\n3,dog\n") << "t.csv:3: column 2 (\"y\"): missing value";
    QByteArray garbage(2048, '\0');
    for (qsizetype i = 0; i < garbage.size(); ++i)
        garbage[i] = static_cast<char>((i * 7919) % 251);
    QTest::newRow("binary garbage") << garbage << "t.csv:1: binary data";
    QTest::newRow("100,000-character line") << "a,b,y\n1,2,3\n" + QByteArray(100000, '5') + "\n"
                                            << "t.csv:3: 1 field";
    QTest::newRow("100,000-digit number") << "a,b,y\n1,2,3\n" + QByteArray(100000, '5') + ",1,2\n"
                                          << "t.csv:3: column 1 (\"a\"): \"5555";
    QTest::newRow("blank lines") << QByteArray("\n \n\r\n\n") << "t.csv: the file holds only";
    QTest::newRow("one column") << QByteArray("y\n1\n2\n") << "t.csv: a table needs at least two";
    QTest::newRow("single class") << QByteArray("a,y\n1,cat\n2,cat\n") << "has a single value";
    QTest::newRow("invalid UTF-8 label")
        << QByteArray("a,y\n1,cat\n2,d\xffg\n3,cat\n") << "t.csv:3: column 2 (\"y\"): the text";
}

void TestTabularTask::badInput()
{
    QFETCH(QByteArray, csv);
    QFETCH(QString, mentions);
    TabularDataset ds;
    QString error;
    QVERIFY(!prepare(csv, {}, ds, &error));
    QVERIFY2(error.startsWith(mentions) || error.contains(mentions), qPrintable(error.left(300)));
    QVERIFY2(error.startsWith("t.csv"), qPrintable(error.left(300)));
    QVERIFY2(!error.contains('\n') && error.size() < 400, qPrintable(error.left(500)));
}

QTEST_GUILESS_MAIN(TestTabularTask)
#include "TestTabularTask.moc"
