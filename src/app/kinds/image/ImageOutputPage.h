// Output for images: the original and the reconstruction side by side (zoom and pan together),
// a timeline over the frames taken during training, rendering at 200 / 512 / 1024 / 2048
// pixels or a custom size, PNG export, and the PSNR / SSIM of the current weights. "Bicubic
// original" (the honest zoom) shows the original upscaled bicubically to the render's size.
#pragma once

#include "StudioKind.h"

#include <memory>

class QCheckBox;

namespace Ui {
class ImageOutputPage;
}

namespace il::app {

struct Evaluation;
struct TrainingUpdate;
class Session;

class ImageOutputPage : public StudioPage {
    Q_OBJECT
public:
    explicit ImageOutputPage(QWidget* parent = nullptr);
    ~ImageOutputPage() override;

    // The size the resolution chooser asks for, keeping the training image's aspect ratio.
    QSize requestedSize() const;
    // Moves the timeline to the frame nearest step (a click on the loss chart). Like dragging
    // the timeline or a render, it unchecks Live until the user checks it again or a run starts
    // (Start, Continue); the step label then says "step 120 of 400".
    void showStep(qint64 step);
    // Asks for a file name and writes the reconstruction shown; false if cancelled or failed.
    bool exportPng(QString path = {});
    QImage reconstruction() const;

signals:
    // The Race presets… button (the main window opens the race view).
    void raceRequested();

protected:
    void connectSession(Session* session) override;

private:
    void reload();
    void frameAdded();
    void showFrame(int index);
    void rendered(const QImage& image, const QString& error);
    void evaluated(const Evaluation& evaluation);
    void measuredWhileTraining(const TrainingUpdate& update);
    void updateCustom();
    // The custom size at the image's aspect, 800 px on its longest side.
    void resetCustomSize();
    // One custom side changed: with the aspect locked, the other follows.
    void customSideEdited(bool width);
    // Live: follow training, showing each new frame (checking it shows the newest at once).
    void setLive(bool live);
    void showLatest();
    // "step 120", "step 120 of 400" (an older one), "512×512, step 400" (a render).
    void showStepLabel();
    // The left view: the training image, or (Bicubic original, after a render) its bicubic
    // upscale to the size shown on the right.
    void showOriginal();

    std::unique_ptr<Ui::ImageOutputPage> m_ui;
    bool m_rendering = false;
    QImage m_original;        // the training image, as the task prepared it
    int64_t m_shownStep = -1; // the step of the picture shown (-1: none)
    int64_t m_renderStep = 0; // the weights' step when the render shown was asked for
    QString m_rendered;       // "512×512" while a render is shown
    bool m_running = false;   // a run is on (training or paused)
    QCheckBox* m_aspectLock;  // the custom size keeps the image's aspect
    QWidget* m_customRow;     // the custom size and m_aspectLock, under the render row
};

} // namespace il::app
