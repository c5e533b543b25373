// ironlearn-cli predict MODEL DATA [--out predictions.csv]
#include "Cli.h"

#include "AtomicFile.h"
#include "CsvRecordReader.h"
#include "ModelFile.h"
#include "TabularTask.h"

#include <QFile>
#include <QFileInfo>

#include <cstdio>

namespace il::cli {

namespace {

// A field as RFC 4180 wants it: quoted when it holds the delimiter, a quote, a line end or
// surrounding spaces (which a reader would otherwise trim).
QByteArray csvField(QByteArrayView v, char delimiter)
{
    const bool quote = v.contains(delimiter) || v.contains('"') || v.contains('\n') ||
                       v.contains('\r') || (!v.isEmpty() && (v.front() == ' ' || v.back() == ' '));
    if (!quote) return v.toByteArray();
    QByteArray q = v.toByteArray();
    q.replace("\"", "\"\"");
    return "\"" + q + "\"";
}

// Where the rows go: a file replaced atomically on success, or standard output.
class Output {
public:
    explicit Output(const QString& path) : m_file(path) {}
    void open()
    {
        if (!toStdout() && !m_file.open()) throw DataError(m_file.errorString().toStdString());
    }
    void write(const QByteArray& line)
    {
        if (toStdout())
            std::fwrite(line.constData(), 1, static_cast<size_t>(line.size()), stdout);
        else if (!m_file.write(line))
            throw DataError(m_file.errorString().toStdString());
    }
    void commit()
    {
        if (!toStdout() && !m_file.commit()) throw DataError(m_file.errorString().toStdString());
    }

private:
    bool toStdout() const { return m_file.path().isEmpty(); }

    io::AtomicFile m_file; // discarded unless committed: a failed run leaves nothing behind
};

// The new columns, after the input's own: the prediction of each target (or the class) and,
// for classes, the probability of each.
class PredictionColumns {
public:
    PredictionColumns(const tasks::TabularSchema& schema, std::vector<double> pred,
                      std::vector<double> probs, char delimiter)
        : m_schema(schema), m_pred(std::move(pred)), m_probs(std::move(probs)), m_delim(delimiter)
    {
        const QStringList predicted =
            schema.isClassification() ? QStringList{schema.target} : schema.targets;
        for (const QString& t : predicted)
            m_header += m_delim + csvField(("predicted_" + t).toUtf8(), m_delim);
        if (schema.isClassification())
            for (const QString& c : schema.classes)
                m_header += m_delim + csvField(("p_" + c).toUtf8(), m_delim);
    }

    char delimiter() const { return m_delim; }
    const QByteArray& header() const { return m_header; }

    // The new fields of encoded row i, each after a delimiter.
    QByteArray row(size_t i) const
    {
        const auto t = static_cast<size_t>(m_schema.targets.size());
        const auto k = static_cast<size_t>(m_schema.classes.size());
        QByteArray s;
        if (!m_schema.isClassification()) {
            for (size_t j = 0; j < t; ++j)
                s += m_delim + QByteArray::number(m_pred[i * t + j], 'g', 7);
            return s;
        }
        s += m_delim +
             csvField(m_schema.classes[static_cast<qsizetype>(m_pred[i])].toUtf8(), m_delim);
        for (size_t j = 0; j < k; ++j)
            s += m_delim + QByteArray::number(m_probs[i * k + j], 'g', 6);
        return s;
    }

private:
    const tasks::TabularSchema& m_schema;
    std::vector<double> m_pred, m_probs;
    char m_delim;
    QByteArray m_header;
};

// A JSON dataset's rows, written as CSV from the values read (rows dropped for missing values
// are skipped).
void writeJsonRows(Output& out, const io::CsvTable& table, const tasks::TabularSplit& rows,
                   const PredictionColumns& extra)
{
    const char delim = extra.delimiter();
    QList<QByteArray> names;
    for (const QString& n : table.columnNames())
        names << n.toUtf8();
    out.write(names.join(delim) + extra.header() + "\n");
    size_t next = 0; // the next encoded row
    for (int64_t r = 0; r < table.rows; ++r) {
        if (next >= rows.source.size() || rows.source[next] != r) continue;
        QByteArray line;
        for (const io::CsvColumn& c : table.columns)
            line += (line.isEmpty() ? "" : QByteArray(1, delim)) +
                    QByteArray::number(c.numbers[static_cast<size_t>(r)], 'g', 9);
        out.write(line + extra.row(next++) + "\n");
    }
}

// A second pass over the CSV file copies each input row as it was written, then its
// predictions (rows dropped for missing values are skipped).
void copyCsvRows(Output& out, const io::CsvTable& table, const tasks::TabularSplit& rows,
                 const PredictionColumns& extra, const QString& given, const QString& dataPath)
{
    const char delim = extra.delimiter();
    QFile f(dataPath);
    if (!f.open(QIODevice::ReadOnly))
        throw DataError((given + ": cannot open: " + f.errorString()).toStdString());
    io::CsvRecordReader reader(f, given);
    if (!reader.start(table.delimiter)) throw DataError(reader.error().toStdString());
    if (!table.hasHeader) { // the output names its columns all the same
        QList<QByteArray> names;
        for (const QString& n : table.columnNames())
            names << csvField(n.toUtf8(), delim);
        out.write(names.join(delim) + extra.header() + "\n");
    }
    size_t next = 0;                      // the next encoded row
    int64_t r = table.hasHeader ? -1 : 0; // -1: the header row
    while (reader.next()) {
        const bool wanted = r < 0 || (next < rows.source.size() && rows.source[next] == r);
        ++r;
        if (!wanted) continue;
        QByteArray line;
        for (qsizetype c = 0; c < reader.size(); ++c)
            line += (c ? QByteArray(1, delim) : QByteArray()) + csvField(reader.field(c), delim);
        out.write(line + (r == 0 ? extra.header() : extra.row(next++)) + "\n");
    }
    if (!reader.error().isEmpty()) throw DataError(reader.error().toStdString());
    if (next != rows.source.size())
        throw DataError((given + ": the file changed while it was read").toStdString());
}

} // namespace

int runPredict(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("MODEL", "A table model saved by train.");
    p.addPositionalArgument("DATA", "A CSV table (or JSON dataset) with the model's feature "
                                    "columns; the target columns may be absent.");
    p.addOptions({
        {"out", "Write the predictions here as CSV (default: standard output).", "FILE"},
        {"missing",
         "fail on rows with missing feature values, drop them, or fill them with the training "
         "means a model trained with --missing mean keeps (default: mean for such a model, "
         "otherwise fail).",
         "HOW"},
        {"threads", "CPU threads (default: all cores).", "N"},
        {"backend", "cpu or cuda (default cpu).", "NAME"},
    });
    if (!parseOrHelp(p, args, "predict", "MODEL DATA [--out predictions.csv]",
                     "Predict every row of a table with a saved model: the input columns, then "
                     "the prediction\n(predicted_TARGET) and, for classes, the probability of "
                     "each (p_CLASS), in the file's units.",
                     2, 2))
        return ExitOk;
    const QString modelPath = p.positionalArguments()[0];
    setCommandSubject(modelPath);
    const QString given = p.positionalArguments()[1];
    const QString asked = p.isSet("missing") ? p.value("missing") : QString();
    if (!asked.isEmpty() && asked != "fail" && asked != "drop" && asked != "mean")
        throw UsageError("--missing must be fail, drop or mean, not \"" + asked.toStdString() +
                         "\"");
    const QString outPath = p.value("out");
    const QString dataPath = resolveDataPath(given);
    checkOutputPaths({{"--out", outPath, {modelPath, dataPath}}});
    auto backend =
        makeBackend(p.value("backend"), static_cast<int>(intOption(p, "threads", 0, 0, 1024)));

    QString error;
    auto model = io::openModel(modelPath, *backend, &error);
    if (!model) throw DataError(error.toStdString());
    const QString taskKind = model->info.task.value("task").toString();
    const tasks::TaskType* type = tasks::taskTypeOf(model->info.task);
    if (type != &tasks::tabularTaskType())
        throw DataError((modelPath + ": predict works on table models; this is a " + taskKind +
                         " model (see render and generate)")
                            .toStdString());
    tasks::TabularSchema schema;
    if (!tasks::TabularSchema::fromJson(model->info.task, schema, &error))
        throw DataError((modelPath + ": " + error).toStdString());

    const QString missing = !asked.isEmpty()           ? asked
                            : schema.missing == "mean" ? QString("mean")
                                                       : QString("fail");
    io::CsvTable table;
    tasks::TabularSplit rows;
    QStringList notes;
    if (!tasks::readTableFile(given, dataPath, table, &error) ||
        !tasks::encodeTabular(table, schema, missing, false, rows, &notes, &error))
        throw DataError(error.toStdString());
    Network& net = *model->network;
    if (net.inputWidth() != schema.inputWidth() || net.outputWidth() != schema.outputWidth())
        throw DataError(
            (modelPath + ": the network does not match its task metadata").toStdString());
    const auto outputs = tasks::predictRows(net, rows.x, rows.rows);

    const PredictionColumns extra(schema, tasks::tabularPredictions(schema, outputs),
                                  tasks::tabularProbabilities(schema, outputs),
                                  table.jsonRows ? ',' : table.delimiter);
    Output out(outPath);
    out.open();
    if (table.jsonRows)
        writeJsonRows(out, table, rows, extra);
    else
        copyCsvRows(out, table, rows, extra, given, dataPath);
    out.commit();
    for (const QString& note : table.notes + notes)
        std::fprintf(stderr, "note: %s\n", note.toUtf8().constData());
    if (!outPath.isEmpty())
        std::printf("predicted %lld rows of %s; wrote %s\n", static_cast<long long>(rows.rows),
                    given.toUtf8().constData(), outPath.toUtf8().constData());
    return ExitOk;
}

namespace {

const CommandRegistration kPredictCommand(
    {30, "predict", " MODEL DATA  predict every row of a table (--out predictions.csv)",
     "  ironlearn-cli train :sample/iris.csv --out iris.safetensors\n"
     "  ironlearn-cli predict iris.safetensors flowers.csv --out predictions.csv\n",
     runPredict});

} // namespace

} // namespace il::cli
