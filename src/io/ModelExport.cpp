#include "ModelExport.h"

#include "AtomicFile.h"
#include "ExportScripts.h"
#include "ModelFile.h"

#include "Backend.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>

namespace il::io {

namespace {

// The layer types model.py rebuilds (IronLearnNet in resources/export/model.py).
const QStringList kPyTorchLayers = {"dense",     "relu",  "tanh",      "sigmoid",   "leakyrelu",
                                    "sine",      "gelu",  "skip",      "fourier",   "hashgrid",
                                    "embedding", "merge", "layernorm", "batchnorm", "dropout"};

} // namespace

bool exportFormatFromName(const QString& name, ExportFormat* format)
{
    if (name.compare(QLatin1String("pytorch"), Qt::CaseInsensitive) == 0) {
        *format = ExportFormat::PyTorch;
        return true;
    }
    if (name.compare(QLatin1String("onnx"), Qt::CaseInsensitive) == 0) {
        *format = ExportFormat::Onnx;
        return true;
    }
    return false;
}

QString exportRefusal(const ModelInfo& info, ExportFormat format)
{
    const QString name =
        format == ExportFormat::Onnx ? QStringLiteral("ONNX") : QStringLiteral("PyTorch");
    const QJsonArray layers = info.architecture.value(QStringLiteral("layers")).toArray();
    for (int i = 0; i < layers.size(); ++i) {
        const QString spec = layers[i].toObject().value(QStringLiteral("spec")).toString();
        const QString type = spec.section(':', 0, 0);
        if (!kPyTorchLayers.contains(type))
            return QStringLiteral("layer %1, %2: the %3 export has no %4 layer")
                .arg(i + 1)
                .arg(spec, name, type);
    }
    if (layers.isEmpty()) return QStringLiteral("the model lists no layers");
#ifdef IRONLEARN_HAVE_ONNX
    if (format == ExportFormat::Onnx) return onnxRefusal(info);
#else
    if (format == ExportFormat::Onnx)
        return QStringLiteral("this build has no ONNX export (libonnx-dev was missing when it "
                              "was built)");
#endif
    return {};
}

ExportSource::~ExportSource()
{
    model.reset(); // built on backend
}

IoResult openForExport(const QString& modelPath, ExportFormat format, ExportSource* out)
{
    out->backend = createCpuBackend(1);
    QString error;
    out->model = openModel(modelPath, *out->backend, &error); // validates every tensor
    if (!out->model) return IoResult::failure(error);
    const QString refusal = exportRefusal(out->model->info, format);
    if (!refusal.isEmpty()) return IoResult::failure(modelPath + ": " + refusal);
    return {};
}

IoResult exportPyTorch(const QString& modelPath, const QString& dir, QStringList* written)
{
    ExportSource opened;
    if (IoResult r = openForExport(modelPath, ExportFormat::PyTorch, &opened); !r) return r;

    const QFileInfo target(dir);
    if (target.exists() && !target.isDir())
        return IoResult::failure(dir + ": is a file; the PyTorch export writes a directory");
    if (!QDir().mkpath(dir)) return IoResult::failure(dir + ": cannot create the directory");

    QFile source(modelPath);
    if (!source.open(QIODevice::ReadOnly))
        return IoResult::failure(modelPath + ": cannot read: " + source.errorString());
    const QByteArray bytes = source.readAll();
    const QDir out(dir);
    const QString copy = out.filePath(QStringLiteral("model.safetensors"));
    const struct {
        QString path;
        QByteArray bytes;
    } files[] = {
        {copy, bytes},
        {out.filePath(QStringLiteral("model.py")), QByteArray(kExport_model)},
        {out.filePath(QStringLiteral("train_more.py")), QByteArray(kExport_train_more)},
    };
    for (const auto& f : files) {
        if (f.path == copy &&
            QFileInfo(copy).canonicalFilePath() == QFileInfo(modelPath).canonicalFilePath())
            continue; // exporting into the model's own directory: it is there already
        const IoResult r = writeFileAtomically(f.path, f.bytes);
        if (!r) return r;
        if (written) *written << f.path;
    }
    return {};
}

#ifndef IRONLEARN_HAVE_ONNX
QString onnxRefusal(const ModelInfo& info)
{
    return exportRefusal(info, ExportFormat::Onnx);
}

IoResult exportOnnx(const QString& modelPath, const QString&, QString*)
{
    return IoResult::failure(modelPath +
                             ": this build has no ONNX export (libonnx-dev was missing when it "
                             "was built)");
}
#endif

} // namespace il::io
