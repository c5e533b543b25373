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
// training size and channels; a smaller picture stays at its own size).
std::shared_ptr<const tasks::ImageTask> trainingPicture(const QString& given,
                                                        const io::LoadedModel& model)
{
    QString error;
    tasks::TaskOptions options;
    const QByteArray bytes = readDataFile(given);
    std::shared_ptr<tasks::Task> task =
        tasks::openTaskForModel(given, bytes, model.info.task, true, options, &error);
    if (!task) throw DataError(("--compare-bicubic: " + error).toStdString());
    auto image = std::dynamic_pointer_cast<const tasks::ImageTask>(task);
    if (!image) throw DataError(("--compare-bicubic: " + given + " is not an image").toStdString());
    return image;
}

} // namespace

// Long: a third is the option table and help text; the rest is one straight path: open the
// model, size, draw, write the PNG.
int runRender(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("MODEL", "An image model saved by train.");
    p.addOptions({
        {"size",
         "Width x height in pixels, each 64 to 8192 (default: the training size, enlarged "
         "to at least 64 on each side keeping its aspect ratio).",
         "WxH"},
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
                     "size show what the\nnetwork invents between the pixels it learned.\n"
                     "\n"
                     "Memory: the picture is drawn a band of rows at a time into the output, so "
                     "the peak is\nabout the output's pixels (W x H bytes gray, 4 W x H colour; "
                     "4 (2W + 8) x H with\n--compare-bicubic, plus the compared image at its "
                     "size) and one band (at most 65,536\npixels; their activations at most 256 "
                     "MiB). The PNG is encoded straight into the file.\n"))
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

    // Drawn straight into the picture written, a band of rows at a time; with
    // --compare-bicubic the network's half and the bicubic half share one picture (each used to
    // be a picture of its own, with the bicubic one in floats twice over: 1.34 GB at 8192x8192).
    QImage image;
    std::shared_ptr<const tasks::ImageTask> compared;
    if (p.isSet("compare-bicubic")) {
        compared = trainingPicture(p.value("compare-bicubic"), *model);
        constexpr int kGap = 8;
        image = QImage(2 * size.width() + kGap, size.height(), QImage::Format_RGB32);
        if (image.isNull())
            throw DataError(("out of memory for a " + QString::number(image.width()) + "x" +
                             QString::number(size.height()) + " image")
                                .toStdString());
        image.fill(Qt::white);
        if (!tasks::renderInto(*model->network, geometry, size, image, {0, 0}, &error))
            throw DataError((modelPath + ": " + error).toStdString());
        tasks::drawBicubic(compared->trainingImage(), compared->geometry().channels, image,
                           {size.width() + kGap, 0}, size);
    } else {
        image = tasks::renderImage(*model->network, geometry, size, &error);
        if (image.isNull()) throw DataError((modelPath + ": " + error).toStdString());
    }
    writePngFile(out, image); // atomic: no partial file on failure
    std::printf("rendered %s (%dx%d, %s) to %s\n",
                QFileInfo(modelPath).fileName().toUtf8().constData(), size.width(), size.height(),
                geometry.channels == 1 ? "gray" : "RGB", out.toUtf8().constData());
    if (p.isSet("compare-bicubic"))
        std::printf("  left: the network; right: %s at %dx%d, upscaled bicubically\n",
                    QFileInfo(p.value("compare-bicubic")).fileName().toUtf8().constData(),
                    compared->geometry().width, compared->geometry().height);
    return ExitOk;
}

namespace {

const CommandRegistration kRenderCommand(
    {50, "render", " MODEL      draw an image model at any size as a PNG (--size WxH --out FILE)",
     "  ironlearn-cli train :sample/camera.png --backend cuda --out camera.safetensors\n"
     "  ironlearn-cli render camera.safetensors --size 2048x2048 --out camera-2k.png\n",
     runRender});

} // namespace

} // namespace il::cli
