// The image task: loading (formats, gray/RGB, alpha on white, every kind of broken file),
// coordinates and aspect ratio, downscaling, PSNR and SSIM, tiled rendering and its limits,
// snapshots, and reopening a saved model's image settings. Fixtures are made here.
#include "HashGridMath.h"
#include "ImageBytes.h"
#include "ImageFile.h"
#include "ImageTask.h"
#include "LayerRegistry.h"
#include "ModelFile.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QImageReader>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <cmath>
#include <tuple>

using namespace il;
using namespace il::tasks;

namespace {

quint32 crc32(const QByteArray& data)
{
    quint32 c = 0xFFFFFFFFu;
    for (char ch : data) {
        c ^= static_cast<quint8>(ch);
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

// A valid PNG whose header (IHDR, with a correct checksum) claims w x h.
QByteArray pngClaiming(quint32 w, quint32 h)
{
    QByteArray png = testsupport::encodeImage(QImage(4, 4, QImage::Format_Grayscale8));
    qToBigEndian(w, png.data() + 16);
    qToBigEndian(h, png.data() + 20);
    qToBigEndian(crc32(png.mid(12, 17)), png.data() + 29);
    return png;
}

// A smooth colour picture with some detail, w x h.
QImage testPicture(int w, int h)
{
    QImage img(w, h, QImage::Format_RGB32);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            img.setPixel(x, y,
                         qRgb(255 * x / std::max(1, w - 1), 255 * y / std::max(1, h - 1),
                              static_cast<int>(127.5 + 127.5 * std::sin(x * 0.3 + y * 0.2))));
    return img;
}

std::unique_ptr<Task> open(const QImage& image, TaskOptions options = {}, QString* error = nullptr)
{
    QString e;
    auto task =
        openTask("picture.png", testsupport::encodeImage(image), options, error ? error : &e);
    if (!task && !error) qWarning("%s", qPrintable(e));
    return task;
}

ImageTask& image(Task& t)
{
    return dynamic_cast<ImageTask&>(t);
}

// Trains net on the task's pixels for a few steps with its defaults.
void train(Task& task, Network& net, int64_t steps)
{
    Backend& b = net.backend();
    const TaskData& d = task.data();
    TrainerConfig cfg;
    task.applyDefaults(cfg);
    cfg.steps = steps;
    cfg.epochs = 0;
    Buffer x(&b, d.trainX.size()), y(&b, d.trainY.size());
    b.upload(x.view(d.trainRows, 2), d.trainX.data());
    b.upload(y.view(d.trainRows, d.outputWidth), d.trainY.data());
    TrainingData td;
    td.trainX = x.view(d.trainRows, 2);
    td.trainY = y.view(d.trainRows, d.outputWidth);
    Optimizer opt(b, cfg.optimizer, net.parameterRanges());
    TrainingState state;
    Trainer(net, opt, cfg, state).run(td);
}

// Bicubic resizing the straightforward way, as ImageResample.cpp first did it: all rows across
// into a float picture, then all columns, Keys a = -0.5, taps clamped at the edges.
QImage bicubicReference(const QImage& image, QSize size, int channels)
{
    const auto keys = [](double t) {
        const double a = -0.5;
        t = std::fabs(t);
        if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
        if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
        return 0.0;
    };
    struct Tap {
        int index[4];
        float weight[4];
    };
    const auto taps = [&](int source, int destination) {
        std::vector<Tap> out(static_cast<size_t>(destination));
        for (int i = 0; i < destination; ++i) {
            const double s = (i + 0.5) * source / destination - 0.5;
            const int base = static_cast<int>(std::floor(s));
            double sum = 0;
            double w[4];
            for (int k = 0; k < 4; ++k) {
                out[size_t(i)].index[k] = std::clamp(base - 1 + k, 0, source - 1);
                sum += w[k] = keys(s - (base - 1 + k));
            }
            for (int k = 0; k < 4; ++k)
                out[size_t(i)].weight[k] = static_cast<float>(static_cast<float>(w[k]) / sum);
        }
        return out;
    };
    const int sw = image.width(), sh = image.height(), dw = size.width(), dh = size.height();
    const std::vector<float> src = imageIntensities(image, channels);
    const auto across = taps(sw, dw), down = taps(sh, dh);
    std::vector<float> rows(size_t(sh) * dw * channels), out(size_t(dh) * dw * channels);
    for (int y = 0; y < sh; ++y)
        for (int x = 0; x < dw; ++x)
            for (int c = 0; c < channels; ++c) {
                float v = 0;
                for (int k = 0; k < 4; ++k)
                    v += across[size_t(x)].weight[k] *
                         src[(size_t(y) * sw + across[size_t(x)].index[k]) * channels + c];
                rows[(size_t(y) * dw + x) * channels + c] = v;
            }
    for (int y = 0; y < dh; ++y)
        for (int x = 0; x < dw; ++x)
            for (int c = 0; c < channels; ++c) {
                float v = 0;
                for (int k = 0; k < 4; ++k)
                    v += down[size_t(y)].weight[k] *
                         rows[(size_t(down[size_t(y)].index[k]) * dw + x) * channels + c];
                out[(size_t(y) * dw + x) * channels + c] = v;
            }
    return imageFromIntensities(out.data(), size, channels).convertToFormat(QImage::Format_RGB32);
}

} // namespace

class TestImageTask : public QObject {
    Q_OBJECT

private:
    // One thread: these are small problems, and OpenMP teams stall on a busy shared machine.
    std::unique_ptr<Backend> m_backend = createCpuBackend(1);

private slots:
    void bicubicKeepsConstantsAndRamps();
    void coordinatesKeepAspectRatio();
    void grayRgbAndAlpha();
    void forcedGrayscale();
    void downscaleKeepsOriginal();
    void psnr();
    void ssim();
    void presetsBuild();
    void trainingImproves();
    void tiledRenderEqualsOneShot();
    void renderLimits();
    void reopenForModel();
    void snapshots();
    void badInput_data();
    void badInput();
    void hugeHeaderIsRefusedQuickly();
    void writePngStreams();
    void uploadPixelsIsTheData();
};

void TestImageTask::coordinatesKeepAspectRatio()
{
    auto task = open(testPicture(4, 2));
    QVERIFY(task);
    const TaskData& d = task->data();
    QCOMPARE(d.inputWidth, 2);
    QCOMPARE(d.trainRows, 8);
    QCOMPARE(d.valRows, 0);
    // L = 4: x = (2i + 1 - 4) / 4, y = (2j + 1 - 2) / 4; row-major, (x, y) per pixel.
    const std::vector<float> expected = {-0.75f, -0.25f, -0.25f, -0.25f, 0.25f,  -0.25f,
                                         0.75f,  -0.25f, -0.75f, 0.25f,  -0.25f, 0.25f,
                                         0.25f,  0.25f,  0.75f,  0.25f};
    QCOMPARE(d.trainX, expected);
    // Portrait: the longest side (y) spans [-1, 1] edge to edge, x is narrower.
    auto tall = open(testPicture(2, 4));
    const auto& x = tall->data().trainX;
    QCOMPARE(x[0], -0.25f);
    QCOMPARE(x[1], -0.75f);
    QCOMPARE(x.back(), 0.75f);
    // Rendering at the training size samples exactly the training coordinates.
    const ImageGeometry& g = image(*tall).geometry();
    QCOMPARE(imageCoordinates(g, {2, 4}), x);
    const QJsonObject j = task->toJson();
    QCOMPARE(j["task"].toString(), "image");
    QVERIFY(j["coordinates"].toString().contains("(2i + 1 - W) / L"));
}

void TestImageTask::grayRgbAndAlpha()
{
    QImage gray(3, 2, QImage::Format_RGB32);
    gray.fill(qRgb(51, 51, 51));
    auto g = open(gray);
    QCOMPARE(g->data().outputWidth, 1); // every pixel gray: one channel, even from RGB32
    QCOMPARE(g->data().trainY[0], 0.2f);

    auto c = open(testPicture(5, 3));
    QCOMPARE(c->data().outputWidth, 3);
    QCOMPARE(c->data().trainY.size(), size_t(45));
    QCOMPARE(c->data().trainY[0], 0.f);          // red of pixel (0, 0)
    QCOMPARE(c->data().trainY[3 * 4], 1.f);      // red of pixel (4, 0)
    QCOMPARE(c->data().trainY[3 * 14 + 1], 1.f); // green of pixel (4, 2)

    // Alpha on white: transparent -> white, half-transparent red -> pink.
    QImage rgba(2, 1, QImage::Format_ARGB32);
    rgba.setPixel(0, 0, qRgba(0, 0, 0, 0));
    rgba.setPixel(1, 0, qRgba(255, 0, 0, 128));
    auto a = open(rgba);
    QCOMPARE(a->data().outputWidth, 3);
    const auto& y = a->data().trainY;
    QCOMPARE(y[0], 1.f);
    QCOMPARE(y[1], 1.f);
    QCOMPARE(y[3], 1.f);
    QCOMPARE(y[4], 127 / 255.f);
    QVERIFY(a->notes().join(' ').contains("white"));
    // A JPEG and a BMP open too.
    QString error;
    QVERIFY2(openTask("p.jpg", testsupport::encodeImage(testPicture(16, 16), "jpeg"), {}, &error),
             qPrintable(error));
    QVERIFY2(openTask("p.bmp", testsupport::encodeImage(testPicture(16, 16), "bmp"), {}, &error),
             qPrintable(error));
}

void TestImageTask::forcedGrayscale()
{
    QImage img(1, 1, QImage::Format_RGB32);
    img.fill(qRgb(200, 100, 50));
    TaskOptions o;
    o.settings[kGrayscaleSetting] = 1;
    auto t = open(img, o);
    QCOMPARE(t->data().outputWidth, 1);
    QCOMPARE(t->data().trainY[0], std::lround(0.299 * 200 + 0.587 * 100 + 0.114 * 50) / 255.f);
    QVERIFY(t->notes().join(' ').contains("grayscale"));
    QCOMPARE(t->toJson()["channels"].toInt(), 1);
}

void TestImageTask::downscaleKeepsOriginal()
{
    TaskOptions o;
    o.settings[kImageSizeSetting] = 40;
    auto t = open(testPicture(100, 50), o);
    QVERIFY(t);
    const ImageTask& it = image(*t);
    QCOMPARE(it.trainingImage().size(), QSize(40, 20));
    QCOMPARE(it.originalImage().size(), QSize(100, 50));
    QCOMPARE(t->data().trainRows, 800);
    QVERIFY(t->notes().join(' ').contains("downscaled from 100x50 to 40x20"));
    const QJsonObject j = t->toJson();
    QCOMPARE(j["width"].toInt(), 40);
    QCOMPARE(j["original_width"].toInt(), 100);
    QCOMPARE(j["original_height"].toInt(), 50);
    // Smaller than the training size: kept as it is.
    auto small = open(testPicture(30, 20), o);
    QCOMPARE(image(*small).trainingImage().size(), QSize(30, 20));
    QVERIFY(small->notes().isEmpty());
}

void TestImageTask::psnr()
{
    std::vector<float> a(1000), b(1000);
    for (size_t i = 0; i < a.size(); ++i)
        a[i] = b[i] = static_cast<float>(i % 10) / 10.f;
    QVERIFY(std::isinf(psnrDb(a.data(), b.data(), a.size())));
    // Noise of +-0.1: MSE 0.01, exactly 20 dB.
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = a[i] + (i % 2 ? 0.1f : -0.1f);
    QVERIFY(std::fabs(psnrDb(a.data(), b.data(), a.size()) - 20.0) < 1e-4);
    // Gaussian noise of sigma 0.05 on images: about 26 dB.
    const QImage clean = testPicture(64, 64);
    QImage noisy = clean;
    QRandomGenerator rng(7);
    for (int y = 0; y < 64; ++y)
        for (int x = 0; x < 64; ++x) {
            const QRgb p = clean.pixel(x, y);
            auto n = [&](int v) {
                const double u1 = rng.generateDouble() + 1e-12, u2 = rng.generateDouble();
                const double g = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
                return std::clamp(static_cast<int>(std::lround(v + 255 * 0.05 * g)), 0, 255);
            };
            noisy.setPixel(x, y, qRgb(n(qRed(p)), n(qGreen(p)), n(qBlue(p))));
        }
    const double db = psnrDb(clean, noisy);
    QVERIFY2(db > 25 && db < 27, qPrintable(QString::number(db)));
    QVERIFY(std::isinf(psnrDb(clean, clean)));
    QVERIFY(std::isnan(psnrDb(clean, testPicture(32, 32))));
}

void TestImageTask::ssim()
{
    const QImage clean = testPicture(64, 48);
    QVERIFY(std::fabs(ssimIndex(clean, clean) - 1.0) < 1e-9);
    auto noisy = [&](double sigma) {
        QImage out = clean;
        QRandomGenerator rng(3);
        for (int y = 0; y < out.height(); ++y)
            for (int x = 0; x < out.width(); ++x) {
                const QRgb p = clean.pixel(x, y);
                auto n = [&](int v) {
                    return std::clamp(
                        static_cast<int>(v + sigma * 255 * (rng.generateDouble() * 2 - 1)), 0, 255);
                };
                out.setPixel(x, y, qRgb(n(qRed(p)), n(qGreen(p)), n(qBlue(p))));
            }
        return out;
    };
    const double light = ssimIndex(clean, noisy(0.05)), heavy = ssimIndex(clean, noisy(0.3));
    QVERIFY2(light < 0.99 && heavy < light && heavy > 0,
             qPrintable(QString("%1 %2").arg(light).arg(heavy)));
    // A constant image against a shifted constant: only the luminance term, known exactly.
    std::vector<float> a(20 * 20, 0.5f), b(20 * 20, 0.6f);
    const double c1 = 1e-4, expected = (2 * 0.5 * 0.6 + c1) / (0.25 + 0.36 + c1);
    QVERIFY(std::fabs(ssimIndex(a.data(), b.data(), 20, 20, 1) - expected) < 1e-6);
    // Against an independent reference (a direct NumPy loop over every 11x11 window) on a
    // fixed 37x23 RGB pair: 0.980810359791.
    {
        const int w = 37, h = 23;
        std::vector<float> x(w * h * 3), y(x.size());
        unsigned s = 12345;
        for (size_t i = 0; i < x.size(); ++i) {
            s = s * 1103515245u + 12345u;
            x[i] = 0.5f + 0.4f * std::sin(static_cast<float>(i) * 0.07f);
            y[i] = std::clamp(x[i] + 0.2f * (((s >> 8) & 0xFFFF) / 65535.f - 0.5f), 0.f, 1.f);
        }
        QVERIFY(std::fabs(ssimIndex(x.data(), y.data(), w, h, 3) - 0.980810359791) < 1e-9);
    }
    // Handed in bands of any height, the same value (evaluate and race measure that way).
    {
        const int w = 37, h = 23;
        std::vector<float> x(w * h * 3), y(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            x[i] = 0.5f + 0.4f * std::sin(static_cast<float>(i) * 0.07f);
            y[i] = 0.5f + 0.4f * std::cos(static_cast<float>(i) * 0.05f);
        }
        const double whole = ssimIndex(x.data(), y.data(), w, h, 3);
        for (const int band : {1, 2, 5, 11, 23}) {
            SsimAccumulator acc(w, h, 3);
            for (int first = 0; first < h; first += band) {
                QVERIFY(std::isnan(acc.result()));
                const size_t at = static_cast<size_t>(first) * w * 3;
                acc.addRows(x.data() + at, y.data() + at, std::min(band, h - first));
            }
            QCOMPARE(acc.result(), whole);
        }
    }
    // Smaller than the 11x11 window still works.
    QVERIFY(std::fabs(ssimIndex(a.data(), a.data(), 5, 4, 1) - 1.0) < 1e-9);
}

void TestImageTask::presetsBuild()
{
    auto t = open(testPicture(8, 8));
    QCOMPARE(t->presets().first(), "hashgrid");
    for (const QString& p : t->presets()) {
        Network net(*m_backend, 2, t->presetSpec(p).toStdString(), 3);
        QCOMPARE(net.outputWidth(), 3);
    }
    QVERIFY(t->presetSpec("nope").isEmpty());
    // The hash grid's finest level matches the training picture's longest side (a finer one
    // leaves vertices between pixels unconstrained: noise when drawn larger).
    for (const auto& [w, h] : {std::pair{200, 100}, std::pair{37, 90}, std::pair{8, 8}}) {
        const QString spec = open(testPicture(w, h))->presetSpec("hashgrid");
        QVERIFY2(!spec.contains("GROWTH"), qPrintable(spec));
        const LayerItem grid = parseLayerItem(spec.section(',', 0, 0).toStdString());
        const HashGrid g =
            hashgrid::make(static_cast<int>(grid.args[0]), static_cast<int>(grid.args[1]),
                           static_cast<int>(grid.args[2]), grid.args[3], grid.args[4]);
        const float finest = g.resolution[g.levels - 1];
        const float want = std::max(16.f, static_cast<float>(std::max(w, h)));
        QVERIFY2(finest >= want - 1 && finest <= want, qPrintable(spec));
    }
    TrainerConfig cfg;
    t->applyDefaults(cfg);
    QCOMPARE(cfg.loss, LossKind::MSE);
    QVERIFY(cfg.batchSize > 0 && cfg.epochs > 0 && cfg.evalEvery > 0);
}

void TestImageTask::trainingImproves()
{
    TaskOptions o;
    auto t = open(testPicture(24, 16), o);
    Network net(*m_backend, 2, "dense:64,sine:30,dense:64,sine:30,dense:64,sine:30,dense", 3);
    net.initialize(1);
    const double before = t->trainingMetric(net);
    train(*t, net, 150);
    const double after = t->trainingMetric(net);
    QVERIFY2(after > 30 && after > before + 10,
             qPrintable(QString("%1 -> %2").arg(before).arg(after)));
    const TaskMetrics m = t->evaluate(net);
    QCOMPARE(m.values["psnr_db"].toDouble(), after);
    QVERIFY(m.values["ssim"].toDouble() > 0.9);
    QVERIFY(m.summary.contains("PSNR") && m.summary.contains("SSIM"));
    // The reconstruction is the rendering at the training size.
    QString error;
    const QImage rec = image(*t).reconstruct(net);
    QCOMPARE(rec.size(), QSize(24, 16));
    const double drawn = psnrDb(rec, image(*t).trainingImage());
    QVERIFY2(drawn > after - 1.0, qPrintable(QString("%1 vs %2").arg(drawn).arg(after)));
}

void TestImageTask::tiledRenderEqualsOneShot()
{
    ImageGeometry g;
    g.width = 40;
    g.height = 30;
    g.channels = 3;
    Network net(*m_backend, 2, "dense:32,sine:30,dense:32,sine:30,dense", 3);
    net.initialize(5);
    QString error;
    const QImage whole = renderImage(net, g, {200, 150}, &error, 200 * 150);
    QVERIFY2(!whole.isNull(), qPrintable(error));
    QCOMPARE(whole.size(), QSize(200, 150));
    for (int64_t tile : {int64_t(1), int64_t(200), int64_t(200 * 7 + 13)}) {
        const QImage tiled = renderImage(net, g, {200, 150}, &error, tile);
        QCOMPARE(tiled, whole);
    }
    // A gray model draws a Grayscale8 image.
    g.channels = 1;
    Network gray(*m_backend, 2, "dense:8,tanh,dense", 1);
    gray.initialize(2);
    QCOMPARE(renderImage(gray, g, {64, 64}, &error).format(), QImage::Format_Grayscale8);
}

void TestImageTask::renderLimits()
{
    ImageGeometry g;
    g.width = g.height = 16;
    g.channels = 1;
    Network net(*m_backend, 2, "dense:4,tanh,dense", 1);
    net.initialize(1);
    QString error;
    for (QSize bad : {QSize(63, 64), QSize(64, 0), QSize(8193, 64), QSize(64, 9000)}) {
        error.clear();
        QVERIFY(renderImage(net, g, bad, &error).isNull());
        QVERIFY2(error.contains("64x64 to 8192x8192"), qPrintable(error));
    }
    QCOMPARE(renderImage(net, g, {64, 64}, &error).size(), QSize(64, 64));
    QCOMPARE(renderImage(net, g, {8192, 64}, &error).size(), QSize(8192, 64));
    g.channels = 3; // the network gives one output
    QVERIFY(renderImage(net, g, {64, 64}, &error).isNull());
    QVERIFY(error.contains("gives 1 output;"));
}

void TestImageTask::reopenForModel()
{
    TaskOptions o;
    o.settings[kImageSizeSetting] = 32;
    const QImage picture = testPicture(64, 48);
    auto t = open(picture, o);
    Network net(*m_backend, 2, "dense:64,sine:30,dense:64,sine:30,dense", 3);
    net.initialize(3);
    train(*t, net, 40);
    const TaskMetrics trained = t->evaluate(net);

    QTemporaryDir dir;
    const QString path = dir.filePath("m.safetensors");
    TrainerConfig cfg;
    t->applyDefaults(cfg);
    QString error;
    QVERIFY2(io::saveModel(path, net, nullptr, cfg, TrainingState{}, t->toJson(), &error),
             qPrintable(error));
    auto model = io::openModel(path, *m_backend, &error);
    QVERIFY2(model, qPrintable(error));
    // The same file, reopened for evaluation: the same size, pixels and metrics.
    auto e = openTaskForModel("picture.png", testsupport::encodeImage(picture), model->info.task,
                              true, {}, &error);
    QVERIFY2(e, qPrintable(error));
    // It holds no rows: its measures read the picture a band at a time (memory follows the
    // picture, not the model's claimed size).
    QCOMPARE(e->data().valRows, 0);
    QCOMPARE(e->data().trainRows, 0);
    QCOMPARE(e->data().outputWidth, 3);
    QCOMPARE(image(*e).geometry().originalWidth, 64);
    const TaskMetrics again = e->evaluate(*model->network);
    QCOMPARE(again.values["psnr_db"].toDouble(), trained.values["psnr_db"].toDouble());
    QCOMPARE(again.values["ssim"].toDouble(), trained.values["ssim"].toDouble());
    QCOMPARE(again.values["width"].toInt(), 32);
    QCOMPARE(again.values["height"].toInt(), 24);
    QVERIFY(again.summary.contains("picture.png"));
    // Its loss over every pixel, in bands, is the loss over the training rows in one piece.
    {
        const TaskData& d = t->data();
        Buffer x(m_backend.get(), d.trainX.size()), y(m_backend.get(), d.trainY.size()), scratch;
        m_backend->upload(x.view(d.trainRows, 2), d.trainX.data());
        m_backend->upload(y.view(d.trainRows, 3), d.trainY.data());
        const double whole =
            Trainer::evaluateLoss(*model->network, LossKind::MSE, x.view(d.trainRows, 2),
                                  y.view(d.trainRows, 3), scratch);
        const double banded = e->validationLoss(*model->network, LossKind::MSE);
        QVERIFY2(std::fabs(banded - whole) <= 1e-6 * whole,
                 qPrintable(QString("%1 %2").arg(banded).arg(whole)));
        QCOMPARE(image(*e).reconstruct(*model->network), image(*t).reconstruct(net));
    }
    // A picture smaller than the training size is not enlarged: each side is the smaller of the
    // two, and the network is drawn there over its whole field of view (as render draws it).
    {
        const QImage small = testPicture(20, 30);
        auto s = openTaskForModel("small.png", testsupport::encodeImage(small), model->info.task,
                                  true, {}, &error);
        QVERIFY2(s, qPrintable(error));
        QCOMPARE(image(*s).trainingImage().size(), QSize(20, 24));
        QVERIFY2(s->notes().join(' ').contains("compared at 20x24"),
                 qPrintable(s->notes().join(' ')));
        // The model's field of view (32x24: x in [-1, 1], y in [-0.75, 0.75]) at 20x24.
        const ImageGeometry view = image(*t).geometry();
        const std::vector<float> coords = imageCoordinates(view, {20, 24});
        QCOMPARE(coords[0], float(1.0 / 20 - 1));
        QCOMPARE(coords[1], float((1.0 / 24 - 1) * 0.75));
        const std::vector<float> values = predictRows(*model->network, coords, 20 * 24);
        QCOMPARE(image(*s).reconstruct(*model->network),
                 imageFromIntensities(values.data(), {20, 24}, 3));
        const TaskMetrics m = s->evaluate(*model->network);
        QCOMPARE(m.values["width"].toInt(), 20);
        QVERIFY(std::isfinite(s->validationLoss(*model->network, LossKind::MSE)));
    }
    // Another file is resized to the training size; gray files feed an RGB model.
    QImage gray(100, 100, QImage::Format_Grayscale8);
    gray.fill(128);
    auto other = openTaskForModel("gray.png", testsupport::encodeImage(gray), model->info.task,
                                  true, {}, &error);
    QVERIFY2(other, qPrintable(error));
    QCOMPARE(image(*other).trainingImage().size(), QSize(32, 24));
    QCOMPARE(other->data().outputWidth, 3);
    QVERIFY(other->notes().join(' ').contains("aspect ratio"));
    // Resume: the pixels are training rows again.
    auto resume = openTaskForModel("picture.png", testsupport::encodeImage(picture),
                                   model->info.task, false, {}, &error);
    QCOMPARE(resume->data().trainRows, 32 * 24);
    // A broken or foreign task object is refused with a message.
    QJsonObject broken = model->info.task;
    broken["channels"] = 2;
    QVERIFY(!openTaskForModel("picture.png", testsupport::encodeImage(picture), broken, true, {},
                              &error));
    QVERIFY2(error.contains("channel count 2"), qPrintable(error));
    // Sizes are checked before anything is sized by them (a 17 KB file claiming 65536x65536).
    for (const auto& [key, value, message] :
         {std::tuple{"width", 65536, "\"width\" 65536 is outside 1 to 8192 pixels"},
          std::tuple{"height", 0, "\"height\" 0 is outside 1 to 8192 pixels"},
          std::tuple{"original_width", 16385,
                     "\"original_width\" 16385 is outside 1 to 16384 pixels"}}) {
        QJsonObject huge = model->info.task;
        huge[QString::fromLatin1(key)] = value;
        QVERIFY(!openTaskForModel("picture.png", testsupport::encodeImage(picture), huge, true, {},
                                  &error));
        QVERIFY2(error == QString("task: invalid image size: ") + message, qPrintable(error));
    }
    ImageGeometry g;
    QVERIFY(!ImageGeometry::fromJson(QJsonObject{{"task", "tabular"}}, g, &error));
    QVERIFY2(error.contains("not trained on an image"), qPrintable(error));
}

void TestImageTask::snapshots()
{
    auto t = open(testPicture(20, 10));
    QVERIFY(t->supportsSnapshots());
    Network net(*m_backend, 2, "dense:8,sine:30,dense", 3);
    net.initialize(1);
    QTemporaryDir dir;
    QString error;
    QVERIFY2(t->writeSnapshot(net, 500, dir.path(), &error), qPrintable(error));
    QVERIFY(t->writeSnapshot(net, 1000, dir.path(), &error));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files),
             QStringList({"step-000500.png", "step-001000.png"}));
    const QImage frame(dir.filePath("step-000500.png"));
    QCOMPARE(frame.size(), QSize(20, 10));
    QCOMPARE(frame.convertToFormat(QImage::Format_RGB32), image(*t).reconstruct(net));
    // An unwritable place: false, a message naming the file, nothing left behind.
    QVERIFY(!t->writeSnapshot(net, 7, dir.filePath("missing/dir"), &error));
    QVERIFY2(error.contains("step-000007.png"), qPrintable(error));
}

void TestImageTask::badInput_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("reason");
    const QByteArray png = testsupport::encodeImage(testPicture(64, 64));
    const QByteArray jpeg = testsupport::encodeImage(testPicture(64, 64), "jpeg");
    QByteArray badCrc = png;
    badCrc[badCrc.size() - 20] = static_cast<char>(badCrc[badCrc.size() - 20] ^ 0x55); // in IDAT
    QTest::newRow("empty") << QByteArray() << "empty";
    QTest::newRow("garbage") << QByteArray(4000, '\x5a') << "not an image";
    QTest::newRow("text") << QByteArray("x,y\n1,2\n") << "not an image";
    QTest::newRow("truncated PNG") << png.left(png.size() / 2) << "truncated PNG";
    QTest::newRow("PNG signature only") << png.left(8) << "truncated PNG";
    QTest::newRow("PNG without end") << png.left(png.size() - 12) << "truncated PNG";
    QTest::newRow("PNG bad checksum") << badCrc << "checksum";
    QTest::newRow("0x0 PNG") << pngClaiming(0, 0) << "0x0";
    QTest::newRow("30000x30000 PNG") << pngClaiming(30000, 30000) << "30000x30000";
    QTest::newRow("truncated JPEG") << jpeg.left(jpeg.size() * 2 / 3) << "truncated JPEG";
    QTest::newRow("JPEG header only") << jpeg.left(4) << "JPEG";
}

void TestImageTask::badInput()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, reason);
    QString error;
    auto t = openTask("broken.png", bytes, {}, &error);
    QVERIFY(!t);
    QVERIFY2(error.startsWith("broken.png: "), qPrintable(error));
    QVERIFY2(error.contains(reason), qPrintable(error));
    QVERIFY2(!error.contains('\n'), qPrintable(error));
    io::LoadedImage li;
    QVERIFY(!io::loadImage(bytes, "broken.png", false, li, &error));
}

void TestImageTask::hugeHeaderIsRefusedQuickly()
{
    QString error;
    QVERIFY(open(testPicture(8, 8))); // a decode sets the allocation limit
    QElapsedTimer timer;
    timer.start();
    QVERIFY(!openTask("huge.png", pngClaiming(30000, 30000), {}, &error));
    QVERIFY(timer.elapsed() < 1000);
    QVERIFY2(error.contains("limit"), qPrintable(error));
    // Within the limits but wider than a side may be: refused as well.
    QVERIFY(!openTask("wide.png", pngClaiming(20000, 10), {}, &error));
    QVERIFY2(error.contains("20000x10"), qPrintable(error));
    // A size the header cannot vouch for (BMP) is bounded by Qt's allocation limit.
    QCOMPARE(QImageReader::allocationLimit(), io::kImageAllocationLimitMb);
}

// The honest zoom's baseline: Keys' cubic convolution reproduces constants and straight ramps
// exactly (away from the clamped edges), keeps the size when asked to, and lays two images side
// by side with a white gap.
void TestImageTask::bicubicKeepsConstantsAndRamps()
{
    QImage flat(7, 5, QImage::Format_Grayscale8);
    flat.fill(qRgb(91, 91, 91));
    const QImage up = resizeBicubic(flat, QSize(29, 17), 1);
    QCOMPARE(up.size(), QSize(29, 17));
    for (int y = 0; y < up.height(); ++y)
        for (int x = 0; x < up.width(); ++x)
            QCOMPARE(qGray(up.pixel(x, y)), 91);

    QImage ramp(16, 4, QImage::Format_Grayscale8); // 10, 25, 40, ...: a straight line
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 16; ++x)
            ramp.setPixel(x, y, qRgb(10 + 15 * x, 10 + 15 * x, 10 + 15 * x));
    const QImage up4 = resizeBicubic(ramp, QSize(64, 4), 1);
    for (int x = 8; x < 56; ++x) { // source position (x + 0.5) / 4 - 0.5, two taps from edges
        const double want = 10 + 15 * ((x + 0.5) / 4 - 0.5);
        QVERIFY2(
            std::fabs(qGray(up4.pixel(x, 1)) - want) <= 0.51,
            qPrintable(QString("x %1: %2, want %3").arg(x).arg(qGray(up4.pixel(x, 1))).arg(want)));
    }
    QImage colour(5, 3, QImage::Format_RGB32);
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 5; ++x)
            colour.setPixel(x, y, qRgb(40 * x, 70 * y, 200));
    QCOMPARE(resizeBicubic(colour, colour.size(), 3), colour);

    // Drawn a row at a time into a bigger picture at an offset, up and down, gray and colour:
    // the pixels of the two-pass reference (every row resized across, then every column).
    const QImage photo = testPicture(23, 41);
    for (const int channels : {1, 3})
        for (const QSize size : {QSize(70, 90), QSize(9, 6), QSize(23, 41), QSize(40, 13)}) {
            QImage target(size.width() + 10, size.height() + 4, QImage::Format_RGB32);
            target.fill(Qt::white);
            drawBicubic(photo, channels, target, {7, 3}, size);
            const QImage want = bicubicReference(photo, size, channels);
            for (int y = 0; y < size.height(); ++y)
                for (int x = 0; x < size.width(); ++x)
                    QVERIFY2(target.pixel(x + 7, y + 3) == want.pixel(x, y),
                             qPrintable(QString("%1 channels, %2x%3 at %4,%5")
                                            .arg(channels)
                                            .arg(size.width())
                                            .arg(size.height())
                                            .arg(x)
                                            .arg(y)));
            QCOMPARE(target.pixel(6, 3), qRgb(255, 255, 255)); // nothing outside
            QCOMPARE(target.pixel(7, 2), qRgb(255, 255, 255));
            QCOMPARE(target.pixel(7 + size.width(), 3), qRgb(255, 255, 255));
        }

    const QImage both = sideBySide(up, colour, 8);
    QCOMPARE(both.size(), QSize(29 + 8 + 5, 17));
    QCOMPARE(both.pixel(29 + 4, 0), qRgb(255, 255, 255)); // the gap
    QCOMPARE(both.pixel(29 + 8 + 4, 2), colour.pixel(4, 2));
    QCOMPARE(both.pixel(29 + 8, 10), qRgb(255, 255, 255)); // below the shorter image
}

QTEST_GUILESS_MAIN(TestImageTask)
namespace {

// This process's peak resident set in KiB (VmHWM), or -1.
long peakKib()
{
    QFile f("/proc/self/status");
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmHWM:")) return line.mid(6).trimmed().split(' ').value(0).toLong();
    return -1;
}

} // namespace

// io::writePng encodes into the atomic file as it goes: writing a 4096x4096 picture of noise
// (its PNG as large as the picture) raises the peak by far less than the PNG's size (it was
// encoded into memory first: 18 MiB more).
void TestImageTask::writePngStreams()
{
    if (IRONLEARN_SANITIZED) QSKIP("the peak under ASan holds its quarantine of freed blocks");
    QFile reset("/proc/self/clear_refs");
    if (peakKib() < 0 || !reset.open(QIODevice::WriteOnly))
        QSKIP("needs Linux's /proc/self/status and clear_refs");
    QImage noise(4096, 4096, QImage::Format_Grayscale8);
    QRandomGenerator rng(5);
    for (int y = 0; y < noise.height(); ++y)
        rng.fillRange(reinterpret_cast<quint32*>(noise.scanLine(y)), noise.width() / 4);
    QTemporaryDir dir;
    const QString path = dir.filePath("noise.png");
    QVERIFY(reset.write("5") == 1); // the peak starts again from what is resident now
    reset.close();
    const long before = peakKib();
    const io::IoResult r = io::writePng(path, noise);
    const long grew = peakKib() - before;
    QVERIFY2(r.ok, qPrintable(r.error));
    QVERIFY(QFileInfo(path).size() > 15 * 1024 * 1024); // noise does not compress
    QVERIFY2(grew < 4 * 1024, qPrintable(QString("the peak grew by %1 KiB").arg(grew)));
    QCOMPARE(QImage(path), noise);
}

// The race puts each preset's rows on its backend a band at a time from the picture: the same
// values as the task's rows, which it can then free.
void TestImageTask::uploadPixelsIsTheData()
{
    TaskOptions o;
    o.settings[kImageSizeSetting] = 300; // bands of several rows, the last one short
    auto t = open(testPicture(300, 250), o);
    ImageTask& task = image(*t);
    const std::vector<float> x = t->data().trainX, y = t->data().trainY;
    TrainerConfig before;
    t->applyDefaults(before);
    const UploadedData u = task.uploadPixels(*m_backend);
    QCOMPARE(u.view.trainX.rows(), 300 * 250);
    QCOMPARE(m_backend->toHost(u.view.trainX), x);
    QCOMPARE(m_backend->toHost(u.view.trainY), y);
    QCOMPARE(u.view.valX.rows(), 0);
    task.releaseRows();
    QCOMPARE(t->data().trainRows, 0);
    QVERIFY(t->data().trainX.empty() && t->data().trainY.empty());
    QCOMPARE(t->data().inputWidth, 2);
    TrainerConfig after;
    t->applyDefaults(after);
    QCOMPARE(after.batchSize, before.batchSize);
    QCOMPARE(after.epochs, before.epochs);
    QCOMPARE(after.evalEvery, before.evalEvery);
}

#include "TestImageTask.moc"
