// ironlearn-cli export MODEL --to pytorch --out DIR
#include "Cli.h"
#include "ModelExport.h"
#include "PrintableText.h"
#include "TaskType.h"

#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>

namespace il::cli {

int runExport(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("MODEL", "A model file saved by train or the studio.");
    p.addOption({"to",
                 "The format: pytorch (a Python module, to use or train further) or onnx "
                 "(a graph, to run in other programs).",
                 "FORMAT"});
    p.addOption({"out",
                 "PyTorch: the directory to write (default: MODEL's name + -pytorch); ONNX: the "
                 "file (default: MODEL's name + .onnx).",
                 "PATH"});
    const QString extra =
        "\nPyTorch: DIR gets model.safetensors (a copy of MODEL), model.py and train_more.py.\n"
        "model.py needs only PyTorch: load(\"model.safetensors\") returns an nn.Module with\n"
        "the model's layers and its preprocessing (normalisation statistics, categories,\n"
        "image coordinates, names vocabulary) as plain tensors; predict_rows(net, rows) takes\n"
        "table rows as csv.DictReader gives them and returns predictions in the file's units,\n"
        "render(net, W, H) draws an image model, next_char_probabilities and generate serve a\n"
        "names model, and make_optimizer(net) restores the optimizer and its state.\n"
        "  cd DIR && python3 -c 'import model; print(model.load(\"model.safetensors\"))'\n"
        "  python3 DIR/train_more.py DATA --steps 1000   (continues where MODEL stopped)\n"
        "\nONNX (opset 17; text columns use ai.onnx.ml's LabelEncoder): the preprocessing is\n"
        "inside the graph. Tables: input \"numbers\" (the numeric columns, in the file's units)\n"
        "and one string input per text column (the cell as the CSV reader gives it: spaces and\n"
        "tabs around it removed); output \"predictions\" (regression, the file's units) or\n"
        "\"probabilities\" and \"class_index\" (classes). A row predict would refuse (a NaN or\n"
        "infinite number, a text that is not one of its column's categories) gets NaN outputs\n"
        "and class_index -1. Images: \"coordinates\" (x, y; the longer side from -1 to 1) ->\n"
        "\"intensities\" (0 to 1). Names: \"context\" (character ids, oldest first) ->\n"
        "\"probabilities\" of the next character. The model's metadata holds the feature and\n"
        "target names, the normalisation, the classes or vocabulary and how text is normalised.\n"
        "The export prints the inputs and outputs.\n";
    if (!parseOrHelp(p, args, "export", "MODEL --to pytorch|onnx [--out PATH]",
                     "Export a model to use or train it further elsewhere.", 1, 1, extra))
        return ExitOk;
    const QString model = p.positionalArguments()[0];
    setCommandSubject(model);
    io::ExportFormat format;
    if (!p.isSet("to"))
        throw UsageError(
            "export: --to FORMAT is required (pytorch; see: ironlearn-cli export --help)");
    if (!io::exportFormatFromName(p.value("to"), &format))
        throw UsageError(
            ("unknown format \"" + p.value("to") + "\" (pytorch or onnx)").toStdString());
    if (p.isSet("out") && p.value("out").isEmpty())
        throw UsageError("--out: no file or folder name given");
    const QFileInfo info(model);
    const QString base = info.path() + "/" + info.completeBaseName();
    if (format == io::ExportFormat::Onnx) {
        const QString out = p.isSet("out") ? p.value("out") : base + ".onnx";
        QString summary;
        const io::IoResult r = io::exportOnnx(model, out, tasks::onnxGraphFor,
                                              tasks::savedTaskInCurrentForm, &summary);
        if (!r) throw DataError(r.error.toStdString());
        // Names and labels from the model file: each line printable.
        std::printf("wrote %s: %s\n", io::printable(out).toUtf8().constData(),
                    printableLines(summary).replace('\n', "\n  ").toUtf8().constData());
        return ExitOk;
    }
    // model.py reads the task as predict does: a task metadata the tools refuse is refused here
    // too, before anything is written, rather than exported for model.py to fail on. (The ONNX
    // export checks what its graph needs itself, naming the field.)
    if (const QString problem = tasks::savedTaskProblem(model); !problem.isEmpty())
        throw DataError(problem.toStdString());
    const QString dir = p.isSet("out") ? p.value("out") : base + "-pytorch";
    QStringList written;
    const io::IoResult r = io::exportPyTorch(model, dir, tasks::pytorchKinds(), &written);
    if (!r) throw DataError(r.error.toStdString());
    for (const QString& f : written)
        std::printf("wrote %s\n", f.toUtf8().constData());
    return ExitOk;
}

namespace {

const CommandRegistration kExportCommand(
    {80, "export", " MODEL      export a model to PyTorch or ONNX (--to pytorch|onnx --out PATH)",
     "  ironlearn-cli export iris.safetensors --to pytorch --out iris-pytorch\n", runExport});

} // namespace

} // namespace il::cli
