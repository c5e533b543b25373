// ironlearn-cli generate MODEL: invent names with a names model.
#include "Cli.h"

#include "ModelFile.h"
#include "NamesTask.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cstdio>

namespace il::cli {

namespace {

// --sweep FROM:TO:STEP -> the temperatures FROM, FROM + STEP, ... up to TO (within a hair).
std::vector<double> sweepTemperatures(const QString& text)
{
    const QStringList parts = text.split(':');
    bool ok[3] = {false, false, false};
    double v[3] = {0, 0, 0};
    for (int i = 0; i < 3 && i < parts.size(); ++i)
        v[i] = parts[i].trimmed().toDouble(&ok[i]);
    if (parts.size() != 3 || !ok[0] || !ok[1] || !ok[2])
        throw UsageError("--sweep \"" + text.toStdString() +
                         "\" must be FROM:TO:STEP, e.g. 0.2:2.0:0.2");
    const auto inRange = [](double t) { return t >= 0.1 && t <= 3.0; };
    if (!inRange(v[0]) || !inRange(v[1]) || v[1] < v[0])
        throw UsageError("--sweep: the temperatures must run upwards within 0.1 to 3.0");
    if (!(v[2] > 0)) throw UsageError("--sweep: the step must be positive");
    std::vector<double> out;
    for (int i = 0;; ++i) {
        const double t = v[0] + i * v[2];
        if (t > v[1] + 1e-9 * v[2] + 1e-12) break;
        if (out.size() == 100) throw UsageError("--sweep: at most 100 temperatures");
        out.push_back(t);
    }
    return out;
}

// The temperature sweep: the same names' seeds at each temperature; innovation rate and how
// likely the model finds its own draws.
int printSweep(Network& net, const tasks::NamesSchema& schema, tasks::GenerationOptions opt,
               const std::vector<double>& temperatures, const QString& modelPath, bool json)
{
    QJsonArray rows;
    if (!json)
        std::printf("%-12s %-11s %s\n", "temperature", "innovation",
                    "mean ln p per character (T = 1)");
    QString error;
    const std::vector<tasks::SweepPoint> sweep =
        tasks::temperatureSweep(net, schema, opt, temperatures, &error);
    if (!error.isEmpty()) throw DataError((modelPath + ": " + error).toStdString());
    for (const tasks::SweepPoint& s : sweep) {
        if (json) {
            rows.append(QJsonObject{{"temperature", s.temperature},
                                    {"innovation_rate", s.innovationRate},
                                    {"new_count", s.newCount},
                                    {"mean_log_likelihood", s.meanLogLikelihood}});
            continue;
        }
        std::printf("%-12.2f %-11s %.4f\n", s.temperature,
                    qPrintable(QString::number(100.0 * s.innovationRate, 'f', 1) + "%"),
                    s.meanLogLikelihood);
    }
    if (json) {
        const QJsonObject j{
            {"model", modelPath},   {"count", opt.count}, {"seed", QString::number(opt.seed)},
            {"prefix", opt.prefix}, {"top_k", opt.topK},  {"sweep", rows}};
        std::fputs(QJsonDocument(j).toJson(QJsonDocument::Indented).constData(), stdout);
    } else {
        std::printf("%d names at each temperature; innovation: the share not in the training "
                    "list\n",
                    opt.count);
    }
    return ExitOk;
}

} // namespace

// Long: the option table, then one straight path: open the model, check it is a names model,
// generate, print as JSON or lines.
int runGenerate(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("MODEL", "A names model saved by train.");
    p.addOptions({
        {"count", "How many names (default 20).", "N"},
        {"temperature", "0.1 (safe, repetitive) to 3.0 (wild); default 1.0.", "T"},
        {"seed", "Seed of the sampling (default 1): the same seed gives the same names.", "S"},
        {"top-k", "Sample only among the K most likely characters (default 0: all).", "K"},
        {"max-length", "Cut names at this many characters (default 32).", "L"},
        {"prefix", "Every name starts with these characters; the model draws the rest.", "TEXT"},
        {"sweep",
         "Temperature sweep FROM:TO:STEP (e.g. 0.2:2.0:0.2): the innovation rate and the mean "
         "log-likelihood of the drawn characters at each temperature (--count names each, "
         "default 500).",
         "FROM:TO:STEP"},
        {"json", "Print one JSON object instead of lines."},
        {"threads", "CPU threads (default: all cores).", "N"},
        {"backend", "cpu or cuda (default cpu).", "NAME"},
    });
    if (!parseOrHelp(p, args, "generate", "MODEL [options]",
                     "Invent names with a names model. Each is marked NEW, or SEEN if it is one "
                     "of the training names;\nthe innovation rate is the share of NEW ones.",
                     1, 1))
        return ExitOk;
    tasks::GenerationOptions opt;
    const std::vector<double> sweep =
        p.isSet("sweep") ? sweepTemperatures(p.value("sweep")) : std::vector<double>{};
    if (!sweep.empty() && p.isSet("temperature"))
        throw UsageError("--sweep sets the temperatures: leave --temperature out");
    opt.count = static_cast<int>(intOption(p, "count", sweep.empty() ? 20 : 500, 1, 1'000'000));
    opt.prefix = p.value("prefix");
    opt.temperature = doubleOption(p, "temperature", 1.0, 0.1, 3.0);
    opt.seed = static_cast<uint64_t>(intOption(p, "seed", 1, 0, INT64_MAX));
    opt.topK = static_cast<int>(intOption(p, "top-k", 0, 0, 1'000'000));
    opt.maxLength = static_cast<int>(intOption(p, "max-length", 32, 1, 256));
    const QString modelPath = p.positionalArguments()[0];
    setCommandSubject(modelPath);
    auto backend =
        makeBackend(p.value("backend"), static_cast<int>(intOption(p, "threads", 0, 0, 1024)));

    QString error;
    auto model = io::openModel(modelPath, *backend, &error);
    if (!model) throw DataError(error.toStdString());
    const QString kind = model->info.task["task"].toString();
    const tasks::TaskType* type = tasks::taskTypeOf(model->info.task);
    if (type != &tasks::namesTaskType())
        throw DataError((modelPath + ": a " + (kind.isEmpty() ? "model without a task" : kind) +
                         " model; generate needs a names model (train one on a .txt file of "
                         "names)")
                            .toStdString());
    tasks::NamesSchema schema;
    if (!tasks::NamesSchema::fromJson(model->info.task, schema, &error))
        throw DataError((modelPath + ": " + error).toStdString());
    if (!sweep.empty())
        return printSweep(*model->network, schema, opt, sweep, modelPath, p.isSet("json"));
    const tasks::GenerationResult result = tasks::generateNames(*model->network, schema, opt);
    if (!result.error.isEmpty()) throw DataError((modelPath + ": " + result.error).toStdString());

    const auto count = static_cast<int>(result.names.size());
    if (p.isSet("json")) {
        QJsonArray names;
        for (const auto& g : result.names)
            names.append(
                QJsonObject{{"name", g.text}, {"new", g.isNew}, {"truncated", g.truncated}});
        const QJsonObject j{{"model", modelPath},
                            {"count", count},
                            {"temperature", opt.temperature},
                            {"top_k", opt.topK},
                            {"max_length", opt.maxLength},
                            {"seed", QString::number(opt.seed)},
                            {"prefix", opt.prefix},
                            {"names", names},
                            {"mean_log_likelihood", result.meanLogLikelihood},
                            {"new_count", result.newCount},
                            {"innovation_rate", result.innovationRate()}};
        std::fputs(QJsonDocument(j).toJson(QJsonDocument::Indented).constData(), stdout);
        return ExitOk;
    }
    for (const auto& g : result.names)
        std::printf("%-4s  %s\n", g.isNew ? "NEW" : "SEEN", g.text.toUtf8().constData());
    std::printf("innovation rate: %.1f%% (%d of %d names are not in the training list)\n",
                100.0 * result.innovationRate(), result.newCount, count);
    return ExitOk;
}

namespace {

const CommandRegistration kGenerateCommand(
    {70, "generate", " MODEL    invent names with a names model (--count N --temperature T)",
     "  ironlearn-cli train :sample/names-ssa2018.txt --out names.safetensors\n"
     "  ironlearn-cli generate names.safetensors --count 20 --temperature 0.8\n",
     runGenerate});

} // namespace

} // namespace il::cli
