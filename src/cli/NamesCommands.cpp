// ironlearn-cli generate MODEL: invent names with a names model.
#include "Cli.h"

#include "ModelFile.h"
#include "NamesTask.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cstdio>

namespace il::cli {

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
    opt.count = static_cast<int>(intOption(p, "count", 20, 1, 1'000'000));
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
    if (!type || type->output() != tasks::TaskOutput::Names)
        throw DataError((modelPath + ": a " + (kind.isEmpty() ? "model without a task" : kind) +
                         " model; generate needs a names model (train one on a .txt file of "
                         "names)")
                            .toStdString());
    tasks::NamesSchema schema;
    if (!tasks::NamesSchema::fromJson(model->info.task, schema, &error))
        throw DataError((modelPath + ": " + error).toStdString());
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
                            {"names", names},
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

} // namespace il::cli
