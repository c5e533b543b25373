// ImageTask: an image behind the Task interface (coordinates -> intensities).
#include "ImageTask.h"

#include "ImageFile.h"
#include "KindScripts.h"
#include "LayerRegistry.h"
#include "Limits.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <cmath>

namespace il::tasks {

namespace {

// Pixels per band of the measures and of uploadPixels: as render's tiles (the measures take
// fewer for a wide network).
constexpr int64_t kBandPixels = 65536;

} // namespace

ImageTask::ImageTask(QString path, QImage original, QImage training, int channels,
                     bool forEvaluation, QStringList notes, QSize fieldOfView)
    : m_path(std::move(path)), m_original(std::move(original)), m_training(std::move(training)),
      m_forEvaluation(forEvaluation), m_notes(std::move(notes))
{
    m_geometry.width = m_training.width();
    m_geometry.height = m_training.height();
    m_geometry.originalWidth = m_original.width();
    m_geometry.originalHeight = m_original.height();
    m_geometry.channels = channels;
    m_geometry.source = QFileInfo(m_path).fileName();
    m_view = m_geometry;
    if (fieldOfView.isValid()) {
        m_view.width = fieldOfView.width();
        m_view.height = fieldOfView.height();
    }

    m_data.inputWidth = 2;
    m_data.outputWidth = channels;
    m_data.targetWidth = channels;
    // For evaluate nothing is held: its measures read the picture a band at a time (one row
    // per pixel, coordinates and intensities, would be 20 bytes a pixel in colour, twice over
    // once uploaded: gigabytes for a small file whose model claims 8192x8192).
    if (forEvaluation) return;
    // Every pixel is a row; there is no validation split (the picture is the whole dataset).
    m_data.trainRows = static_cast<int64_t>(m_training.width()) * m_training.height();
    m_data.trainX = imageCoordinates(m_geometry, m_training.size());
    m_data.trainY = imageIntensities(m_training, channels);
}

QString ImageTask::description() const
{
    QString d = QString("%1: %2x%3 %4 image")
                    .arg(m_path)
                    .arg(m_original.width())
                    .arg(m_original.height())
                    .arg(m_geometry.channels == 1 ? "gray" : "RGB");
    d += QString(", %1 at %2x%3 (%4 pixels -> %5 %6)")
             .arg(m_forEvaluation ? "compared" : "trained")
             .arg(m_geometry.width)
             .arg(m_geometry.height)
             .arg(static_cast<qint64>(m_geometry.width) * m_geometry.height)
             .arg(m_geometry.channels)
             .arg(m_geometry.channels == 1 ? "intensity" : "intensities");
    return d;
}

namespace {

class ImageTaskType final : public TaskType {
public:
    QString name() const override { return "image"; }
    QString title() const override { return "Images"; }
    int order() const override { return 20; }
    std::vector<KindSetting> settings() const override
    {
        return {{kImageSizeSetting, "Images: longest side used for training (default 512).",
                 "PIXELS", "training size", 512, 8, 8192, true},
                {kGrayscaleSetting, "Images: train on the gray version of a colour image.", "",
                 "gray version"}};
    }
    Example example() const override
    {
        // An 8 x 6 colour gradient.
        QImage image(8, 6, QImage::Format_RGB32);
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                image.setPixel(x, y, qRgb(x * 30, y * 40, 128));
        QByteArray bytes;
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        image.save(&buffer, "png");
        return {"example.png", bytes};
    }
    OnnxGraph onnxGraph() const override { return IRONLEARN_ONNX_GRAPH(imageOnnxGraph); }
    PyTorchSections pytorch() const override
    {
        return {kPyTorch_image_model, kPyTorch_image_train_more};
    }
    QStringList fileSuffixes() const override
    {
        return {"png", "jpg", "jpeg", "bmp", "gif", "webp", "ppm", "pgm", "tif", "tiff"};
    }
    QStringList dialogSuffixes() const override
    {
        return {"png", "jpg", "jpeg", "bmp", "gif", "webp"};
    }
    std::vector<LayerPreset> presets() const override
    {
        return {
            // The default, chosen on scikit-image's sample pictures (packaging/bench/
            // image_corpus.sh; docs/benchmarks.md, Images): multiresolution hash encoding
            // (Müller et al., Instant NGP), 16 trainable grids from 16 to 512 cells per side,
            // then a small ReLU MLP. On 13 pictures at 256 px: 32-51 dB 5 s into a 60 s run, 76-143
            // (or exact) at 60 s, where SIREN reached 6-35 dB at 5 s and 25-98 at 20 s.
            // GROWTH makes the finest grid as fine as the training picture (ImageTask::presetSpec):
            // a finer one has vertices no pixel constrains, which show as noise between pixels
            // when the picture is drawn larger (render --compare-bicubic shows it).
            {"hashgrid", "hashgrid:16:2:15:16:GROWTH,dense:64,relu,dense:64,relu,dense",
             "GROWTH: the finest of the 16 grids matches the training size"},
            {"siren", "dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense", ""},
            // Random Fourier features (Tancik et al. 2020); scale 10 on [-1, 1] coordinates. The
            // last layer starts at zero: from He-initialised weights the network starts as loud
            // random stripes it must first unlearn (150 steps at 256 px: 12-22 dB; from zero
            // 16-28 dB on camera, bw_text, brick, horse and coffee; docs/benchmarks.md, Images).
            {"fourier-relu",
             "fourier:256:10,dense:256,relu,dense:256,relu,dense:256,relu,dense::zero", ""},
            // What the original Iron Learn tried first: raw coordinates through a tanh MLP. It
            // learns only a blur (spectral bias); the other presets show why. The engine takes
            // no activation after the last dense, so the output is linear and clamped to
            // [0, 1] when drawn.
            {"classic", "dense:128,tanh,dense:128,tanh,dense:128,tanh,dense", "learns only a blur"},
        };
    }
    MetricInfo metric(const QJsonObject& savedTask) const override
    {
        (void)savedTask;
        MetricInfo m;
        m.title = "PSNR (dB), higher is sharper";
        m.pendingTitle = "PSNR (dB): measured every %1 steps";
        m.description = "Peak signal-to-noise ratio of the reconstruction: 10·log10(1 / MSE) "
                        "over the pixels. About 30 dB looks close; 40 dB is hard to tell apart.";
        m.lossTitle = "MSE of the intensities (0 to 1); it may climb for a while (hover)";
        // Measured on the camera (CLI, hash grid, default 3008 steps): at 256 px the loss falls
        // to 2.0e-4 by step 128, climbs to 8.5e-4 by step 384 and falls again as the cosine
        // lowers the rate (at 512 px: flat at 1.2-1.3e-3 from step 240 to 512). The tables'
        // Adam (beta2 0.99, eps 1e-15) is the cause: with beta2 0.999 the climb shrinks to
        // 6.6e-5 -> 1.5e-4 at 256 px and is gone at 512 px. Their settings give the sharpest
        // pictures at the end of a run (docs/benchmarks.md, Images), so they stay and the chart
        // says why.
        m.lossNote = "Why the loss can climb after its first fast drop (the hash grid, the "
                     "default stack): the grid's tables learn with Adam, which divides each step "
                     "by a running average of recent squared gradients (β₂ 0.99: about the last "
                     "100 steps). Once the large early gradients have left that average, the "
                     "steps are large again next to the now small gradients, and the fit gets "
                     "noisier for a few hundred steps. As the cosine schedule lowers the "
                     "learning rate, the loss falls again, well below its first low.";
        return m;
    }
    bool checkSaved(const QJsonObject& savedTask, QString* error) const override
    {
        ImageGeometry g;
        return ImageGeometry::fromJson(savedTask, g, error);
    }
    std::unique_ptr<Task> open(const QString& path, const QByteArray& bytes,
                               const TaskOptions& options, const QJsonObject* savedTask,
                               bool forEvaluation, QString* error) const override
    {
        return openImageTask(path, bytes, options, savedTask, forEvaluation, error);
    }
};

} // namespace

const TaskType& imageTaskType()
{
    static const ImageTaskType type;
    return type;
}

const TaskType& ImageTask::type() const
{
    return imageTaskType();
}

UploadedData ImageTask::uploadPixels(Backend& b) const
{
    const int w = m_training.width(), h = m_training.height(), channels = m_geometry.channels;
    const int64_t rows = static_cast<int64_t>(w) * h;
    UploadedData u;
    u.trainX = Buffer(&b, static_cast<size_t>(rows) * 2);
    u.trainY = Buffer(&b, static_cast<size_t>(rows) * static_cast<size_t>(channels));
    u.valX = Buffer(&b, 1); // no validation rows (uploadTaskData's shape for none)
    u.valY = Buffer(&b, 1);
    const int bandRows = static_cast<int>(std::clamp<int64_t>(kBandPixels / w, 1, h));
    std::vector<float> coords(static_cast<size_t>(bandRows) * static_cast<size_t>(w) * 2);
    std::vector<float> truth(static_cast<size_t>(bandRows) * static_cast<size_t>(w) *
                             static_cast<size_t>(channels));
    const Tensor x = u.trainX.view(rows, 2), y = u.trainY.view(rows, channels);
    for (int first = 0; first < h; first += bandRows) {
        const int n = std::min(bandRows, h - first);
        const int64_t at = static_cast<int64_t>(first) * w, count = static_cast<int64_t>(n) * w;
        imageCoordinateRows(m_view, m_training.size(), first, n, coords.data());
        imageIntensityRows(m_training, channels, first, n, truth.data());
        b.upload(x.rowSlice(at, count), coords.data());
        b.upload(y.rowSlice(at, count), truth.data());
    }
    u.view.trainX = x;
    u.view.trainY = y; // no validation views, as uploadTaskData leaves them for none
    return u;
}

void ImageTask::releaseRows()
{
    m_data.trainRows = m_data.valRows = 0;
    std::vector<float>().swap(m_data.trainX);
    std::vector<float>().swap(m_data.trainY);
    std::vector<float>().swap(m_data.valX);
    std::vector<float>().swap(m_data.valY);
}

void ImageTask::applyDefaults(TrainerConfig& cfg) const
{
    // Every pixel is a training row (also once releaseRows() freed them).
    const int64_t pixels =
        std::max<int64_t>(static_cast<int64_t>(m_training.width()) * m_training.height(), 1);
    cfg.loss = LossKind::MSE;
    cfg.optimizer = OptimizerConfig::named("adam");
    cfg.schedule.kind = ScheduleKind::Cosine;
    // Measured on the camera at 256x256 (SIREN, fixed step budgets): many small batches beat
    // few full ones for the same pixels seen; Adam at 2e-3 with cosine decay fits best (1e-3
    // is 6 dB behind at 1300 steps, 3e-3 no better, 5e-3 diverges). The hash grid (the default
    // preset) trains its tables at their own rate (the parameter group grid_tables,
    // Optimizers.cpp); its MLP is best at 2e-3 too: with the tables at 5e-2, 2e-3 has the best
    // median PSNR over 8 kinds of picture after 1500 steps, 5e-3 3 dB and 1e-2 8 dB less
    // (packaging/bench/hashgrid_lr_sweep.sh; docs/benchmarks.md, Images).
    cfg.schedule.lrMax = 2e-3f;
    cfg.schedule.lrMin = 0.f;
    // 4096 pixels per batch: for the hash grid at equal time (10 s at 256 px, 6 pictures) the
    // best median and the best worst picture of 1024, 4096, 16384 and the whole picture.
    cfg.batchSize = std::min<int64_t>(pixels, 4096);
    // About 3000 steps: on the camera with the hash grid (CLI, 1 thread, load ~3) 102 dB at
    // 256x256 and 56 dB at 512x512, each in about 25 s.
    const int64_t spe = Trainer::stepsPerEpoch(pixels, cfg.batchSize);
    cfg.epochs = std::max<int64_t>(1, (3000 + spe - 1) / spe);
    cfg.patience = 0;
    // The PSNR hook renders the whole image; every ~8 images' worth of pixels keeps it near
    // 5% of the time.
    cfg.evalEvery = std::max<int64_t>(1, 8 * pixels / cfg.batchSize);
}

QString ImageTask::presetSpec(const QString& name) const
{
    const int side = std::max(m_training.width(), m_training.height());
    // 16 * growth^15 = side, at least 1 (a picture under 16 px needs no finer grid).
    const double growth = std::max(1.0, std::pow(side / 16.0, 1.0 / 15.0));
    return Task::presetSpec(name).replace(
        "GROWTH", QString::fromStdString(formatFloat(static_cast<float>(growth))));
}

WatchSettings ImageTask::watchSettings() const
{
    WatchSettings w;
    // SIREN at too high a rate for a hard-edged picture (black text on white) hovers at 80-96%
    // of the picture's variance for a thousand steps; in every run measured that learns (SIREN
    // and the hash grid at 2e-3 on photographs, silhouettes, text and textures: docs/benchmarks.md,
    // Images) no window after step 100 came within 25% of it. A picture can be fit far below its
    // variance, so within 15% counts as "still at the mean" here.
    w.stallBand = 0.15;
    // A stall or divergence is the learning rate's doing: lower it, up to three times
    // (2e-3 -> 5e-4 -> 1.25e-4 -> 3e-5).
    w.recoveries = 3;
    return w;
}

void ImageTask::forEachBand(
    Network& net, const std::function<void(int, int, const float*, const float*)>& band) const
{
    const int channels = m_geometry.channels;
    std::vector<float> truth;
    predictImageBands(net, m_view, m_training.size(), kBandPixels,
                      [&](int first, int rows, float* v) {
                          const size_t n = static_cast<size_t>(rows) * m_training.width() *
                                           static_cast<size_t>(channels);
                          truth.resize(n);
                          imageIntensityRows(m_training, channels, first, rows, truth.data());
                          // As the picture shows them: clamped to [0, 1], NaN black.
                          for (size_t i = 0; i < n; ++i)
                              v[i] = std::isnan(v[i]) ? 0.f : std::clamp(v[i], 0.f, 1.f);
                          band(first, rows, v, truth.data());
                      });
}

QImage ImageTask::reconstruct(Network& net) const
{
    QImage image(m_training.size(),
                 m_geometry.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    if (image.isNull()) return image;
    forEachBand(net, [&](int first, int rows, const float* predicted, const float*) {
        writeIntensityRows(image, {0, first}, image.width(), rows, predicted, m_geometry.channels);
    });
    return image;
}

double ImageTask::trainingMetric(Network& net)
{
    double sum = 0;
    size_t count = 0;
    forEachBand(net, [&](int, int rows, const float* predicted, const float* truth) {
        const size_t n = static_cast<size_t>(rows) * m_training.width() * m_geometry.channels;
        for (size_t i = 0; i < n; ++i) {
            const double d = static_cast<double>(predicted[i]) - static_cast<double>(truth[i]);
            sum += d * d;
        }
        count += n;
    });
    if (count == 0) return NAN;
    const double mse = sum / static_cast<double>(count);
    if (std::isnan(mse)) return NAN;
    return mse == 0 ? INFINITY : 10.0 * std::log10(1.0 / mse);
}

TaskMetrics ImageTask::measure(Network& net, QImage* reconstruction) const
{
    const int channels = m_geometry.channels;
    SsimAccumulator ssimRows(m_geometry.width, m_geometry.height, channels);
    if (reconstruction)
        *reconstruction = QImage(m_training.size(),
                                 channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    double sum = 0; // squared errors, in pixel order (psnrDb's sum)
    size_t count = 0;
    forEachBand(net, [&](int first, int rows, const float* predicted, const float* truth) {
        const size_t n = static_cast<size_t>(rows) * m_training.width() * channels;
        for (size_t i = 0; i < n; ++i) {
            const double d = static_cast<double>(predicted[i]) - static_cast<double>(truth[i]);
            sum += d * d;
        }
        count += n;
        ssimRows.addRows(predicted, truth, rows);
        if (reconstruction && !reconstruction->isNull())
            writeIntensityRows(*reconstruction, {0, first}, m_training.width(), rows, predicted,
                               channels);
    });
    const double mse = count ? sum / static_cast<double>(count) : NAN;
    const double psnr = std::isnan(mse) ? NAN : mse == 0 ? INFINITY : 10.0 * std::log10(1.0 / mse);
    const double ssim = ssimRows.result();

    TaskMetrics m;
    m.values["psnr_db"] = std::isinf(psnr) ? QJsonValue("Infinity") : QJsonValue(psnr);
    m.values["ssim"] = ssim;
    m.values["mse"] = mse;
    m.values["width"] = m_geometry.width;
    m.values["height"] = m_geometry.height;
    m.values["channels"] = m_geometry.channels;
    m.values["metrics_on"] = m_forEvaluation ? m_path : "training image";
    m.summary = QString("PSNR %1 dB, SSIM %2 against %3 at %4x%5")
                    .arg(psnr, 0, 'f', 2)
                    .arg(ssim, 0, 'f', 4)
                    .arg(m_forEvaluation ? QFileInfo(m_path).fileName() : "the training image")
                    .arg(m_geometry.width)
                    .arg(m_geometry.height);
    return m;
}

double ImageTask::validationLoss(Network& net, LossKind loss)
{
    if (!m_forEvaluation) return Task::validationLoss(net, loss);
    // Every pixel, a band at a time: the loss op the model trained with, band by band.
    const int w = m_training.width(), h = m_training.height(), channels = m_geometry.channels;
    const int bandRows =
        static_cast<int>(std::clamp<int64_t>(inferenceChunkRows(net, kBandPixels) / w, 1, h));
    Backend& b = net.backend();
    const size_t bandPixels = static_cast<size_t>(bandRows) * static_cast<size_t>(w);
    Buffer x(&b, bandPixels * 2), y(&b, bandPixels * static_cast<size_t>(channels)), scratch;
    std::vector<float> coords(x.floats()), truth(y.floats());
    double total = 0;
    for (int first = 0; first < h; first += bandRows) {
        const int rows = std::min(bandRows, h - first);
        const int64_t n = static_cast<int64_t>(rows) * w;
        imageCoordinateRows(m_view, m_training.size(), first, rows, coords.data());
        imageIntensityRows(m_training, channels, first, rows, truth.data());
        b.upload(x.view(n, 2), coords.data());
        b.upload(y.view(n, channels), truth.data());
        total += Trainer::evaluateLoss(net, loss, x.view(n, 2), y.view(n, channels), scratch) *
                 static_cast<double>(n);
    }
    return total / (static_cast<double>(w) * h);
}

bool ImageTask::writeSnapshot(Network& net, int64_t step, const QString& directory, QString* error)
{
    const QString path =
        QDir(directory).filePath(QString("step-%1.png").arg(step, 6, 10, QChar('0')));
    // Atomic: a timeline never holds a half-written frame.
    const io::IoResult r = io::writePng(path, reconstruct(net));
    if (!r && error) *error = r.error;
    return r.ok;
}

// Long: three ways to size the picture (evaluation, a saved model, a new one) each set the
// channels, size and note that the scaling below uses.
std::unique_ptr<ImageTask> openImageTask(const QString& path, const QByteArray& bytes,
                                         const TaskOptions& options, const QJsonObject* savedTask,
                                         bool forEvaluation, QString* error)
{
    ImageGeometry saved;
    if (savedTask && !ImageGeometry::fromJson(*savedTask, saved, error)) {
        if (error && !options.modelPath.isEmpty()) *error = options.modelPath + ": " + *error;
        return nullptr;
    }
    io::LoadedImage loaded;
    const int trainingSize = imageTaskType().setting(options, kImageSizeSetting);
    const bool gray =
        savedTask ? saved.channels == 1 : imageTaskType().setting(options, kGrayscaleSetting) != 0;
    if (!io::loadImage(bytes, path, gray, loaded, error)) return nullptr;
    const QImage& image = loaded.image;
    QStringList notes;
    if (loaded.hadAlpha) notes << "transparent pixels were composited on white";
    if (loaded.forcedGray) notes << "colour converted to grayscale";

    int channels = loaded.grayscale ? 1 : 3;
    QSize size = image.size();
    QSize fieldOfView;
    if (savedTask && forEvaluation &&
        (image.width() < saved.width || image.height() < saved.height)) {
        // evaluate never enlarges the picture: upscaling would only add pixels the file does not
        // hold, and would size the work by the model's claim (a 67-byte PNG against a model that
        // says 8192x8192 took 1.9 GB). Each side is the smaller of the picture's and the model's;
        // the network is drawn at that size over its field of view, as render draws it.
        channels = saved.channels;
        fieldOfView = QSize(saved.width, saved.height);
        size = QSize(std::min(image.width(), saved.width), std::min(image.height(), saved.height));
        notes << QString("compared at %1x%2: the picture (%3x%4) is smaller than the model's "
                         "training size %5x%6, so the network is drawn at the smaller size")
                     .arg(size.width())
                     .arg(size.height())
                     .arg(image.width())
                     .arg(image.height())
                     .arg(saved.width)
                     .arg(saved.height);
    } else if (savedTask) {
        channels = saved.channels;
        size = QSize(saved.width, saved.height);
        if (size != image.size())
            notes << QString("resized from %1x%2 to %3x%4, the model's training size%5")
                         .arg(image.width())
                         .arg(image.height())
                         .arg(size.width())
                         .arg(size.height())
                         .arg(qAbs(static_cast<double>(image.width()) / image.height() -
                                   static_cast<double>(size.width()) / size.height()) > 0.01
                                  ? " (the aspect ratio differs)"
                                  : "");
    } else {
        if (trainingSize < 1) {
            if (error) *error = path + ": the training size must be at least 1 pixel";
            return nullptr;
        }
        const int longest = std::max(image.width(), image.height());
        if (longest > trainingSize) {
            const double f = static_cast<double>(trainingSize) / longest;
            size = QSize(std::max(1, static_cast<int>(std::lround(image.width() * f))),
                         std::max(1, static_cast<int>(std::lround(image.height() * f))));
            notes << QString("downscaled from %1x%2 to %3x%4 for training (%5 %6)")
                         .arg(image.width())
                         .arg(image.height())
                         .arg(size.width())
                         .arg(size.height())
                         .arg(forReader(options.reader, "--image-size", "training size"))
                         .arg(trainingSize);
        }
    }
    // Smooth scaling averages the pixels each training pixel covers (no aliasing).
    QImage training = size == image.size()
                          ? image
                          : image.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    training =
        training.convertToFormat(channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    if (training.isNull() || training.size() != size) {
        if (error) *error = path + ": out of memory resizing the image";
        return nullptr;
    }
    return std::make_unique<ImageTask>(path, image, std::move(training), channels, forEvaluation,
                                       notes, fieldOfView);
}

} // namespace il::tasks
