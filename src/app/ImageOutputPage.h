// Output for images: the original and the reconstruction side by side (zoom and pan together),
// a timeline over the snapshots taken during training, rendering at 200 / 512 / 1024 / 2048
// pixels or a custom size, PNG export, and the PSNR / SSIM of the current weights. "Bicubic
// original" (the honest zoom) shows the original upscaled bicubically to the render's size.
#pragma once

#include <QWidget>

#include <memory>

namespace Ui {
class ImageOutputPage;
}

namespace il::app {

struct Evaluation;
class Session;

class ImageOutputPage : public QWidget {
    Q_OBJECT
public:
    explicit ImageOutputPage(QWidget* parent = nullptr);
    ~ImageOutputPage() override;

    void setSession(Session* session);
    // The size the resolution chooser asks for, keeping the training image's aspect ratio.
    QSize requestedSize() const;
    // Moves the timeline to the snapshot nearest step (a click on the loss chart).
    void showStep(qint64 step);
    // Asks for a file name and writes the reconstruction shown; false if cancelled or failed.
    bool exportPng(QString path = {});
    QImage reconstruction() const;

signals:
    // The Race presets… button (the main window opens the race view).
    void raceRequested();

private:
    void reload();
    void snapshotAdded();
    void showSnapshot(int index);
    void rendered(const QImage& image, const QString& error);
    void evaluated(const Evaluation& evaluation);
    void updateCustom();
    // The left view: the training image, or (Bicubic original, after a render) its bicubic
    // upscale to the size shown on the right.
    void showOriginal();

    std::unique_ptr<Ui::ImageOutputPage> m_ui;
    Session* m_session = nullptr;
    bool m_rendering = false;
    QImage m_original; // the training image, as the task prepared it
};

} // namespace il::app
