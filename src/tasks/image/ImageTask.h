// Images as implicit neural representations: a network learns pixel colour from pixel
// position, f(x, y) = intensity, and can then redraw the picture at any resolution.
//
// Coordinates: pixel (i, j) of a W x H grid has its centre at
//   x = (2i + 1 - W) / L,  y = (2j + 1 - H) / L,   L = max(W, H)
// so the longest side spans [-1, 1] edge to edge, the aspect ratio is kept, and x grows to
// the right, y downwards. Inputs are (x, y); targets are intensities in [0, 1], one column
// (gray) or three (R, G, B). A render at another resolution samples the same field of view.
#pragma once

#include "Task.h"

#include <QImage>
#include <QSize>

#include <algorithm>
#include <functional>

namespace il::tasks {

// The image kind's settings (KindSetting, TaskOptions::settings): the longest side of the picture
// used for training (8 to 8192 pixels, 512 by default), and training on the gray version of a
// colour picture.
inline const QString kImageSizeSetting = QStringLiteral("image-size");
inline const QString kGrayscaleSetting = QStringLiteral("grayscale");

// Render sizes: each side from 64 to 8192 pixels.
inline constexpr int kMinRenderSide = 64;
inline constexpr int kMaxRenderSide = 8192;

// What a model remembers about its image (the "task" object of the model file).
struct ImageGeometry {
    int width = 0, height = 0;                 // the training image
    int originalWidth = 0, originalHeight = 0; // the file, before downscaling
    int channels = 1;                          // 1 (gray) or 3 (RGB)
    QString source;                            // file name, for messages

    QJsonObject toJson() const;
    static bool fromJson(const QJsonObject& json, ImageGeometry& geometry, QString* error);
};

// Pixel-centre coordinates of a size.width() x size.height() grid over the field of view of
// the training image (size = the training size gives the training inputs), rows of (x, y) in
// row-major pixel order.
std::vector<float> imageCoordinates(const ImageGeometry& geometry, QSize size);
// The same for rows firstRow .. firstRow + rows - 1 only, into out (rows * width * 2 floats).
void imageCoordinateRows(const ImageGeometry& geometry, QSize size, int firstRow, int rows,
                         float* out);
// Intensities in [0, 1], rows of channels in row-major pixel order.
std::vector<float> imageIntensities(const QImage& image, int channels);
// The same for rows firstRow .. firstRow + rows - 1 only, into out (rows * width * channels).
void imageIntensityRows(const QImage& image, int channels, int firstRow, int rows, float* out);
// Values (rows of channels) clamped to [0, 1] and rounded to 8 bits: Format_Grayscale8 for one
// channel, Format_RGB32 for three.
QImage imageFromIntensities(const float* values, QSize size, int channels);
// Writes rows x width values (rows of channels) into image (Grayscale8, or RGB32 where one
// channel is drawn gray) with its top left pixel at `at`, clamped and rounded like the above.
void writeIntensityRows(QImage& image, QPoint at, int width, int rows, const float* values,
                        int channels);

// Why net cannot draw an image of `channels` ("" if it can): it must take 2 inputs, give channels.
QString imageNetworkProblem(const Network& net, int channels);
// Runs net over the pixel centres of a size grid over geometry's field of view, a band of rows
// at a time (at most tilePixels pixels, fewer for a wide network: Limits.h), and hands each band's
// raw outputs (rows * width * outputs floats, a buffer `band` may change) to `band`. Memory: two
// bands and the network's activations for one, whatever the size.
void predictImageBands(Network& net, const ImageGeometry& geometry, QSize size, int64_t tilePixels,
                       const std::function<void(int firstRow, int rows, float* outputs)>& band);

// Renders the network at size in tiles of at most tilePixels pixels, so memory stays bounded
// at any size: the picture (W x H bytes gray, 4 W x H colour) and one band. Returns a null image
// with a one-line message if the size is outside kMinRenderSide..kMaxRenderSide or the network
// does not take 2 inputs and give `channels`.
QImage renderImage(Network& net, const ImageGeometry& geometry, QSize size, QString* error,
                   int64_t tilePixels = 65536);
// The same drawn into target (Grayscale8 or RGB32) with its top left corner at `at`: no picture
// of its own. false with the message when renderImage would refuse, or the render does not fit.
bool renderInto(Network& net, const ImageGeometry& geometry, QSize size, QImage& target, QPoint at,
                QString* error, int64_t tilePixels = 65536);

// The image resized to size by bicubic convolution (Keys, a = -0.5) over the same field of
// view as renderImage, `channels` 1 (gray) or 3 (ImageResample.cpp). For the honest zoom:
// what a classic upscale of the training image shows at the size a network is rendered.
QImage resizeBicubic(const QImage& image, QSize size, int channels);
// The same drawn into target (Grayscale8 or RGB32) with its top left corner at `at`, a row at a
// time: besides target, memory holds four resized source rows, whatever the sizes.
void drawBicubic(const QImage& image, int channels, QImage& target, QPoint at, QSize size);
// left and right next to each other (tops aligned) with a white gap, as RGB32.
QImage sideBySide(const QImage& left, const QImage& right, int gap = 8);

// Peak signal-to-noise ratio in dB of intensities in [0, 1]: 10 log10(1 / MSE); +inf for
// identical inputs (JSON writes it as "Infinity").
double psnrDb(const float* a, const float* b, size_t count);
// Structural similarity (Wang et al. 2004): 11x11 Gaussian window, sigma 1.5, K1 = 0.01,
// K2 = 0.03, dynamic range 1, mean over the valid windows and over the channels. a and b are
// rows of channels in row-major order. Images smaller than 11 pixels use a smaller window.
double ssimIndex(const float* a, const float* b, int width, int height, int channels);
// The same on QImages of equal size (gray when both are gray, RGB otherwise); NaN if the
// sizes differ.
double psnrDb(const QImage& a, const QImage& b);
double ssimIndex(const QImage& a, const QImage& b);

// ssimIndex over rows handed in order, a band at a time (evaluate and race measure pictures
// without holding them whole): memory 5 x 11 rows of doubles per channel. result() is NaN until
// all `height` rows were added; it equals ssimIndex of the whole picture.
class SsimAccumulator {
public:
    SsimAccumulator(int width, int height, int channels);
    // rows of width * channels values each, a and b alike.
    void addRows(const float* a, const float* b, int rows);
    double result() const;

private:
    double* slot(int channel, int quantity, int row);
    int m_w, m_h, m_channels;
    int m_n = 0, m_ow = 0, m_y = 0;
    std::vector<double> m_kernel, m_ring, m_channelSums;
    std::vector<double> m_sums; // the five vertical sums of one row of windows
};

class ImageTask final : public Task {
public:
    // original: the file as loaded (io::loadImage, alpha on white); training: it at the training
    // size in the format of channels (Grayscale8 or RGB32). fieldOfView: the training size of
    // the model the picture is compared with, whose field of view the pixels sample (empty:
    // training's size). Opened for evaluation, the task holds no rows (data() has the widths
    // and 0 rows): evaluate(), validationLoss() and reconstruct() draw the pixels a band at a
    // time from the picture, so memory follows the picture, not a model's claimed size.
    ImageTask(QString path, QImage original, QImage training, int channels, bool forEvaluation,
              QStringList notes, QSize fieldOfView = {});

    const TaskType& type() const override;
    QString description() const override;
    QStringList notes() const override { return m_notes; }
    QString outputsMeaning() const override
    {
        return m_geometry.channels == 1 ? "the gray level of a pixel"
                                        : "the red, green and blue of a pixel";
    }
    const TaskData& data() const override { return m_data; }
    LossKind loss() const override { return LossKind::MSE; }
    void applyDefaults(TrainerConfig& config) const override;
    QJsonObject toJson() const override { return m_geometry.toJson(); }
    void lookInside(Network& net, const InsideRequest& request,
                    NetworkInside& inside) const override;
    void describeOptions(TaskOptions& options) const override
    {
        options.settings[kImageSizeSetting] = std::max(m_training.width(), m_training.height());
        options.settings[kGrayscaleSetting] = m_geometry.channels == 1;
    }
    // PSNR, SSIM and MSE of the whole picture, measured a band of rows at a time (memory: one
    // band and an SSIM ring, whatever the size). reconstruction: if given, also filled with the
    // network's picture at the compared size in the same pass.
    TaskMetrics evaluate(Network& net) override { return measure(net, nullptr); }
    TaskMetrics measure(Network& net, QImage* reconstruction) const;
    double validationLoss(Network& net, LossKind loss) override;
    double trainingMetric(Network& net) override;
    // The training rows (every pixel: coordinates, intensities) put on backend a band at a time
    // from the picture, the same values data() holds, with no host copy of them all. The race
    // trains each preset from these (each on its own backend).
    UploadedData uploadPixels(Backend& backend) const;
    // Frees data()'s rows (0 rows after, widths kept) for a caller that trains only from
    // uploadPixels: 20 bytes a pixel in colour (the race, at --image-size 8192: 1.3 GB).
    void releaseRows();
    // Recovers from stalls (ImageTask.cpp says why and with what thresholds).
    WatchSettings watchSettings() const override;
    bool supportsSnapshots() const override { return true; }
    bool writeSnapshot(Network& net, int64_t step, const QString& directory,
                       QString* error) override;

    const ImageGeometry& geometry() const { return m_geometry; }
    // The image trained on (or measured against) and the file as read, alpha on white.
    const QImage& trainingImage() const { return m_training; }
    // Fills GROWTH in the hashgrid preset: each grid this many times finer than the one
    // before, so that 16 grids from 16 cells per side reach the training size's longest side.
    QString presetSpec(const QString& name) const override;
    const QImage& originalImage() const { return m_original; }
    // The reconstruction at the training size (one pixel per training row).
    QImage reconstruct(Network& net) const;
    QImage render(Network& net, QSize size, QString* error) const
    {
        return renderImage(net, m_view, size, error);
    }

private:
    // The network's outputs over every pixel of the picture (the model's field of view), a band
    // of rows at a time, clamped to [0, 1] as the picture shows them, next to the picture's own
    // intensities for the same rows.
    void forEachBand(Network& net,
                     const std::function<void(int firstRow, int rows, const float* predicted,
                                              const float* truth)>& band) const;

    QString m_path;
    QImage m_original, m_training;
    ImageGeometry m_geometry;
    ImageGeometry m_view; // m_geometry with the model's training size: the field of view
    bool m_forEvaluation = false;
    QStringList m_notes;
    TaskData m_data;
};

// The description of image tasks (name, files, presets, metric).
const TaskType& imageTaskType();
// Its ONNX graph around the network (ImageOnnx.cpp; its TaskType::onnxGraph).
void imageOnnxGraph(io::onnxexport::TaskGraph& t);

// Opens an image for training (savedTask null) or for a saved model: then the image is
// resized to the model's training size and converted to its channels; forEvaluation puts
// every pixel in the validation rows (evaluate's loss), otherwise in the training rows.
std::unique_ptr<ImageTask> openImageTask(const QString& path, const QByteArray& bytes,
                                         const TaskOptions& options, const QJsonObject* savedTask,
                                         bool forEvaluation, QString* error);

} // namespace il::tasks
