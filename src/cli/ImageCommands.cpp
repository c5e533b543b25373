// ironlearn-cli render MODEL --size WxH --out image.png [--compare-bicubic IMAGE]
#include "Cli.h"

#include "ImageTask.h"
#include "ModelFile.h"

#include <QFileInfo>
#include <QRegularExpression>

#include <cstdio>

namespace il::cli {

namespace {

QSize parseSize(const QString& text)
{
    const auto m = QRegularExpression(R"(^\s*(\d{1,6})\s*[xX]\s*(\d{1,6})\s*$)").match(text);
    if (!m.hasMatch())
        throw UsageError("--size: \"" + text.toStdString() +
                         "\" is not WIDTHxHEIGHT (e.g. 1024x1024)");
    const int w = m.captured(1).toInt(), h = m.captured(2).toInt();
    const int lo = tasks::kMinRenderSide, hi = tasks::kMaxRenderSide;
    if (w < lo || h < lo || w > hi || h > hi)
        throw UsageError(QString("--size: %1x%2 is outside %3x%3 to %4x%4")
                             .arg(w)
                             .arg(h)
                             .arg(lo)
                             .arg(hi)
                             .toStdString());
    return {w, h};
}

// The picture a model was trained on, as the image task prepares it for that model (its
// training size and channels), upscaled bicubically to size.
QImage bicubicOfTrainingImage(const QString& given, const io::LoadedModel& model, QSize size)
{
    QString error;
    tasks::TaskOptions options;
    const QByteArray bytes = readDataFile(given);
    auto task = tasks::openTaskForModel(given, bytes, model.info.task, true, options, &error);
    if (!task) throw DataError(("--compare-bicubic: " + error).toStdString());
    const auto* image = dynamic_cast<const tasks::ImageTask*>(task.get());
    if (!image) throw DataError(("--compare-bicubic: " + given + " is not an image").toStdString());
    return tasks::resizeBicubic(image->trainingImage(), size, image->geometry().channels);
}

} // namespace

int runRender(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("MODEL", "An image model saved by train.");
    p.addOptions({
        {"size", "Width x height in pixels, each 64 to 8192 (default: the training size).", "WxH"},
        {"out", "The PNG to write (default: MODEL's name + -WxH.png).", "FILE"},
        {"threads", "CPU threads (default: all cores).", "N"},
        {"backend", "cpu or cuda (default cpu).", "NAME"},
        {"compare-bicubic",
         "Draw the network next to a bicubic upscale of IMAGE (the picture it was trained on, "
         "at its training size) to the same size: the network left, bicubic right.",
         "IMAGE"},
    });
    if (!parseOrHelp(p, args, "render",
                     "MODEL [--size WxH] [--out image.png] [--compare-bicubic IMAGE]",
                     "Draw an image model at any resolution as an 8-bit PNG.", 1, 1,
                     "The network is sampled at pixel centres over the training image's field "
                     "of view,\nso every size shows the same picture; sizes above the training "
                     "size show what the\nnetwork invents between the pixels it learned.\n"))
        return ExitOk;
    const QString modelPath = p.positionalArguments().first();
    setCommandSubject(modelPath);
    QSize size;
    if (p.isSet("size")) size = parseSize(p.value("size"));
    const QString outPath = p.value("out");
    if (p.isSet("out") && QFileInfo(outPath).suffix().toLower() != "png")
        throw UsageError("--out: \"" + outPath.toStdString() + "\" must end in .png");
    auto backend =
        makeBackend(p.value("backend"), static_cast<int>(intOption(p, "threads", 0, 0, 1024)));

    QString error;
    auto model = io::openModel(modelPath, *backend, &error);
    if (!model) throw DataError(error.toStdString());
    tasks::ImageGeometry geometry;
    if (!tasks::ImageGeometry::fromJson(model->info.task, geometry, &error))
        throw DataError(
            (modelPath + ": " + error + "; render draws models trained on images").toStdString());
    if (!size.isValid()) {
        // The training size, raised to the minimum render size keeping the aspect ratio.
        size = QSize(geometry.width, geometry.height);
        if (size.width() < tasks::kMinRenderSide || size.height() < tasks::kMinRenderSide)
            size = size.scaled(tasks::kMinRenderSide, tasks::kMinRenderSide,
                               Qt::KeepAspectRatioByExpanding)
                       .boundedTo(QSize(tasks::kMaxRenderSide, tasks::kMaxRenderSide));
    }
    const QString out = p.isSet("out") ? outPath
                                       : QString("%1-%2x%3.png")
                                             .arg(QFileInfo(modelPath).completeBaseName())
                                             .arg(size.width())
                                             .arg(size.height());
    checkOutputPaths({{"--out", out, {modelPath, p.value("compare-bicubic")}}});

    QImage image = tasks::renderImage(*model->network, geometry, size, &error);
    if (image.isNull()) throw DataError((modelPath + ": " + error).toStdString());
    if (p.isSet("compare-bicubic")) {
        const QImage bicubic = bicubicOfTrainingImage(p.value("compare-bicubic"), *model, size);
        image = tasks::sideBySide(image, bicubic);
    }
    writePngFile(out, image); // atomic: no partial file on failure
    std::printf("rendered %s (%dx%d, %s) to %s\n",
                QFileInfo(modelPath).fileName().toUtf8().constData(), size.width(), size.height(),
                geometry.channels == 1 ? "gray" : "RGB", out.toUtf8().constData());
    if (p.isSet("compare-bicubic"))
        std::printf("  left: the network; right: %s at %dx%d, upscaled bicubically\n",
                    QFileInfo(p.value("compare-bicubic")).fileName().toUtf8().constData(),
                    geometry.width, geometry.height);
    return ExitOk;
}

} // namespace il::cli
