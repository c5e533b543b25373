#include "ImageOutputPage.h"
#include "ui_ImageOutputPage.h"

#include "Dialogs.h"
#include "ImageFile.h"
#include "ImageRequests.h"
#include "ImageTask.h"
#include "NumberFormat.h"
#include "Session.h"
#include "StudioSettings.h"

#include <QCheckBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>

#include <cmath>

namespace il::app {

namespace {

// The size the picture trains at: the open image's, or the opened model's (saved with it);
// empty when neither is an image.
QSize trainingSize(const Session* session)
{
    tasks::ImageGeometry geometry;
    if (!session || !tasks::ImageGeometry::fromJson(session->taskJson(), geometry, nullptr))
        return {};
    return {geometry.width, geometry.height};
}

} // namespace

ImageOutputPage::ImageOutputPage(QWidget* parent)
    : StudioPage(parent), m_ui(std::make_unique<Ui::ImageOutputPage>())
{
    m_ui->setupUi(this);
    for (int side : {200, 512, 1024, 2048})
        m_ui->resolutionComboBox->addItem(QString("%1 px").arg(side), side);
    m_ui->resolutionComboBox->addItem("Custom…", 0);
    m_ui->resolutionComboBox->setCurrentIndex(1);
    m_ui->reconstructionImageView->linkTo(m_ui->originalImageView);
    m_ui->originalImageView->setPlaceholder("Open an image to see it here.");
    m_ui->reconstructionImageView->setPlaceholder("Press Start: the network's drawing appears "
                                                  "here and sharpens as it learns.");
    m_ui->timelineSlider->setEnabled(false);
    m_aspectLock = new QCheckBox("Keep aspect", this);
    m_aspectLock->setObjectName("aspectLockCheckBox");
    m_aspectLock->setChecked(true);
    m_aspectLock->setToolTip("Keep the custom size at the image's aspect ratio: changing one side "
                             "changes the other.");
    // The custom size on a row of its own under the render row (shown for Custom…), so the
    // render row keeps its width in a small window.
    m_customRow = new QWidget(this);
    m_customRow->setObjectName("customSizeRow");
    auto* row = new QHBoxLayout(m_customRow);
    row->setContentsMargins(0, 0, 0, 0);
    auto* sizeLabel = new QLabel("Custom size:", m_customRow);
    sizeLabel->setBuddy(m_ui->customWidthSpinBox);
    row->addWidget(sizeLabel);
    for (QWidget* w :
         {static_cast<QWidget*>(m_ui->customWidthSpinBox), static_cast<QWidget*>(m_ui->byLabel),
          static_cast<QWidget*>(m_ui->customHeightSpinBox)}) {
        m_ui->renderLayout->removeWidget(w);
        row->addWidget(w);
    }
    row->addWidget(m_aspectLock);
    row->addStretch(1);
    QVBoxLayout* page = m_ui->imageOutputLayout;
    for (int i = 0; i < page->count(); ++i)
        if (page->itemAt(i)->layout() == m_ui->renderLayout) page->insertWidget(i + 1, m_customRow);
    updateCustom();
    connect(m_ui->customWidthSpinBox, &QSpinBox::valueChanged, this,
            [this] { customSideEdited(true); });
    connect(m_ui->customHeightSpinBox, &QSpinBox::valueChanged, this,
            [this] { customSideEdited(false); });
    connect(m_aspectLock, &QCheckBox::toggled, this, [this](bool on) {
        if (on) customSideEdited(true);
    });

    connect(m_ui->resolutionComboBox, &QComboBox::currentIndexChanged, this,
            &ImageOutputPage::updateCustom);
    connect(m_ui->renderButton, &QPushButton::clicked, this, [this] {
        if (!m_session) return;
        m_rendering = true;
        m_ui->renderButton->setEnabled(false);
        const QSize size = requestedSize();
        m_renderStep = m_session->trainedSteps();
        m_ui->timelineStepLabel->setText(
            QString("rendering %1×%2…").arg(size.width()).arg(size.height()));
        ImageRequests::of(*m_session).render(size);
    });
    connect(m_ui->exportButton, &QPushButton::clicked, this, [this] { exportPng(); });
    connect(m_ui->raceButton, &QPushButton::clicked, this, &ImageOutputPage::raceRequested);
    connect(m_ui->bicubicCheckBox, &QCheckBox::toggled, this, &ImageOutputPage::showOriginal);
    connect(m_ui->timelineSlider, &QSlider::valueChanged, this, &ImageOutputPage::showFrame);
    // Looking back (dragging the timeline) pins the view; checking Live follows training again.
    connect(m_ui->timelineSlider, &QSlider::sliderPressed, this, [this] { setLive(false); });
    connect(m_ui->livePreviewCheckBox, &QCheckBox::toggled, this, [this](bool live) {
        if (live) showLatest();
    });
}

ImageOutputPage::~ImageOutputPage() = default;

void ImageOutputPage::connectSession(Session* session)
{
    connect(session, &Session::modelChanged, this, &ImageOutputPage::reload);
    connect(session, &Session::datasetOpened, this, &ImageOutputPage::reload);
    connect(session, &Session::historyReset, this, &ImageOutputPage::reload);
    connect(session, &Session::frameAdded, this, &ImageOutputPage::frameAdded);
    connect(&ImageRequests::of(*session), &ImageRequests::renderReady, this,
            &ImageOutputPage::rendered);
    connect(session, &Session::evaluated, this, &ImageOutputPage::evaluated);
    connect(session, &Session::progressed, this, &ImageOutputPage::measuredWhileTraining);
    // A run that starts (Start, Continue; not Resume) follows training again: an older step or
    // a render was a look aside, not a choice for later runs.
    connect(session, &Session::runStateChanged, this, [this](Session::RunState state) {
        if (!m_running && state == Session::RunState::Training) setLive(true);
        m_running = state != Session::RunState::Idle;
    });
    reload();
}

QSize ImageOutputPage::requestedSize() const
{
    const int side = m_ui->resolutionComboBox->currentData().toInt();
    if (side == 0) return {m_ui->customWidthSpinBox->value(), m_ui->customHeightSpinBox->value()};
    QSize base = trainingSize(m_session);
    if (base.isEmpty()) base = QSize(side, side);
    base.scale(side, side, Qt::KeepAspectRatio);
    return base.expandedTo(QSize(tasks::kMinRenderSide, tasks::kMinRenderSide));
}

void ImageOutputPage::reload()
{
    QImage original;
    if (const auto* task = dynamic_cast<const tasks::ImageTask*>(m_session->task().get()))
        original = task->trainingImage();
    m_original = original;
    m_ui->originalImageView->setImage(original);
    m_ui->originalTitleLabel->setText("<b>Original</b>");
    m_ui->originalImageView->setPlaceholder(
        m_session->isKind(tasks::imageTaskType()) && original.isNull()
            ? "The model was opened without its image: open it to compare."
            : "Open an image to see it here.");
    m_ui->reconstructionImageView->setImage(QImage());
    m_ui->imageMetricLabel->clear();
    m_ui->timelineSlider->setRange(0, 0);
    m_ui->timelineSlider->setEnabled(false);
    m_ui->timelineStepLabel->clear();
    m_ui->timelineStepLabel->setToolTip({});
    m_shownStep = -1;
    m_rendered.clear();
    m_ui->raceButton->setEnabled(!original.isNull());
    resetCustomSize();
    // Other data, another model or fresh weights: nothing older to look at, follow training.
    setLive(true);
    frameAdded();
}

void ImageOutputPage::frameAdded()
{
    const auto& frames = m_session->timeline();
    if (frames.empty()) return;
    const int last = static_cast<int>(frames.size()) - 1;
    const bool follow =
        m_ui->livePreviewCheckBox->isChecked() || m_ui->reconstructionImageView->image().isNull();
    QSignalBlocker block(m_ui->timelineSlider);
    // A slider from 0 to 0 draws its thumb at the left end: a single frame after training (a
    // reopened model) sits at the right end, where its step is on the way from step 0.
    const bool onlyTrained = last == 0 && frames.front().step > 0;
    m_ui->timelineSlider->setRange(onlyTrained ? -1 : 0, last);
    m_ui->timelineSlider->setEnabled(last > 0);
    if (follow) {
        m_ui->timelineSlider->setValue(last);
        showFrame(last);
    } else if (m_shownStep >= 0) {
        showStepLabel(); // "of" the newest step
    }
}

void ImageOutputPage::showLatest()
{
    const auto& frames = m_session->timeline();
    if (frames.empty()) return;
    const int last = static_cast<int>(frames.size()) - 1;
    QSignalBlocker block(m_ui->timelineSlider);
    m_ui->timelineSlider->setValue(last);
    showFrame(last);
}

void ImageOutputPage::setLive(bool live)
{
    m_ui->livePreviewCheckBox->setChecked(live); // checking it shows the newest frame
}

void ImageOutputPage::showStepLabel()
{
    const auto& frames = m_session->timeline();
    const QLocale l;
    const auto step = [&l](int64_t s) { return l.toString(static_cast<qlonglong>(s)); };
    QString text, tip;
    if (m_rendered.isEmpty()) {
        text = "step " + step(m_shownStep);
        if (!frames.empty() && frames.back().step > m_shownStep) {
            text += " of " + step(frames.back().step);
            tip = "An earlier step of training. Check Live to follow training again.";
        }
    } else {
        text = m_rendered + ", step " + step(m_shownStep);
        tip = QString("Rendered at %1 after step %2. Check Live to follow training again.")
                  .arg(m_rendered, step(m_shownStep));
    }
    m_ui->timelineStepLabel->setText(text);
    m_ui->timelineStepLabel->setToolTip(tip);
}

void ImageOutputPage::showFrame(int index)
{
    const auto& frames = m_session->timeline();
    if (index < 0 || index >= static_cast<int>(frames.size())) return;
    const TimelineFrame& s = frames[static_cast<size_t>(index)];
    m_ui->reconstructionImageView->setImage(s.image);
    showOriginal(); // frames are at the training size: the plain original again
    m_shownStep = s.step;
    m_rendered.clear();
    showStepLabel();
}

void ImageOutputPage::showStep(qint64 step)
{
    const auto& frames = m_session->timeline();
    if (frames.empty()) return;
    int best = 0;
    for (int i = 1; i < static_cast<int>(frames.size()); ++i)
        if (std::llabs(frames[static_cast<size_t>(i)].step - step) <
            std::llabs(frames[static_cast<size_t>(best)].step - step))
            best = i;
    setLive(false);
    QSignalBlocker block(m_ui->timelineSlider);
    m_ui->timelineSlider->setValue(best);
    showFrame(best);
}

void ImageOutputPage::rendered(const QImage& image, const QString& error)
{
    if (!m_rendering) return;
    m_rendering = false;
    m_ui->renderButton->setEnabled(true);
    if (image.isNull()) {
        m_ui->timelineStepLabel->setText(error);
        m_ui->timelineStepLabel->setToolTip(error);
        return;
    }
    setLive(false); // a render is a look aside: Live, or the next run, follows training again
    m_ui->reconstructionImageView->setImage(image);
    m_rendered = QString("%1×%2").arg(image.width()).arg(image.height());
    m_shownStep = m_renderStep;
    showStepLabel();
    showOriginal();
}

void ImageOutputPage::showOriginal()
{
    const QImage shown = m_ui->reconstructionImageView->image();
    if (m_original.isNull()) return;
    if (!m_ui->bicubicCheckBox->isChecked() || shown.isNull() ||
        shown.size() == m_original.size()) {
        m_ui->originalImageView->setImage(m_original);
        m_ui->originalTitleLabel->setText("<b>Original</b>");
        return;
    }
    const int channels = m_original.isGrayscale() ? 1 : 3;
    m_ui->originalImageView->setImage(tasks::resizeBicubic(m_original, shown.size(), channels));
    m_ui->originalTitleLabel->setText(QString("<b>Original</b>, bicubic %1×%2 (from %3×%4)")
                                          .arg(shown.width())
                                          .arg(shown.height())
                                          .arg(m_original.width())
                                          .arg(m_original.height()));
}

void ImageOutputPage::evaluated(const Evaluation& ev)
{
    const double psnr = ev.values.value("psnr_db").toDouble(NAN);
    const double ssim = ev.values.value("ssim").toDouble(NAN);
    if (std::isnan(psnr)) return;
    m_ui->imageMetricLabel->setText(
        QString("PSNR <b>%1</b> · SSIM %2").arg(fmt::decibels(psnr), fmt::score(ssim)));
}

void ImageOutputPage::measuredWhileTraining(const TrainingUpdate& update)
{
    // The PSNR the metric chart just drew (SSIM is measured after the run): the label does not
    // hold the previous run's while a Continue draws new points.
    for (auto h = update.evaluations.rbegin(); h != update.evaluations.rend(); ++h) {
        if (!std::isfinite(h->metric)) continue;
        m_ui->imageMetricLabel->setText(
            QString("PSNR <b>%1</b> at step %2")
                .arg(fmt::decibels(h->metric), QLocale().toString(qlonglong(h->step))));
        return;
    }
}

void ImageOutputPage::updateCustom()
{
    const bool custom = m_ui->resolutionComboBox->currentData().toInt() == 0;
    m_customRow->setVisible(custom);
}

void ImageOutputPage::resetCustomSize()
{
    QSize size = trainingSize(m_session);
    if (size.isEmpty()) return;
    size.scale(800, 800, Qt::KeepAspectRatio);
    size = size.expandedTo(
        QSize(m_ui->customWidthSpinBox->minimum(), m_ui->customHeightSpinBox->minimum()));
    QSignalBlocker blockWidth(m_ui->customWidthSpinBox), blockHeight(m_ui->customHeightSpinBox);
    m_ui->customWidthSpinBox->setValue(size.width());
    m_ui->customHeightSpinBox->setValue(size.height());
}

void ImageOutputPage::customSideEdited(bool width)
{
    const QSize image = trainingSize(m_session);
    if (!m_aspectLock->isChecked() || image.isEmpty()) return;
    QSpinBox* from = width ? m_ui->customWidthSpinBox : m_ui->customHeightSpinBox;
    QSpinBox* to = width ? m_ui->customHeightSpinBox : m_ui->customWidthSpinBox;
    const double ratio =
        width ? double(image.height()) / image.width() : double(image.width()) / image.height();
    QSignalBlocker block(to);
    to->setValue(static_cast<int>(std::lround(from->value() * ratio)));
}

QImage ImageOutputPage::reconstruction() const
{
    return m_ui->reconstructionImageView->image();
}

bool ImageOutputPage::exportPng(QString path)
{
    const QImage image = reconstruction();
    if (image.isNull()) {
        Dialogs::warning(this, "Export PNG", "There is no reconstruction to export yet.");
        return false;
    }
    if (path.isEmpty()) {
        // The last export's folder; before the first, the model's or the data's.
        QString near =
            m_session->modelPath().isEmpty() ? m_session->dataPath() : m_session->modelPath();
        near = near.startsWith(':') ? QString() : QFileInfo(near).absolutePath();
        const QString dir = settings::folder(settings::Folder::Export, near);
        const QString name = QFileInfo(m_session->dataPath()).completeBaseName() +
                             QString("-%1x%2.png").arg(image.width()).arg(image.height());
        path = Dialogs::saveFileName(this, "Export Reconstruction", QDir(dir).filePath(name),
                                     "PNG images (*.png)");
    }
    if (path.isEmpty()) return false;
    if (const io::IoResult r = io::writePng(path, image); !r) {
        Dialogs::warning(this, "Export PNG", r.error);
        return false;
    }
    settings::rememberFolderOf(settings::Folder::Export, path);
    emit m_session->message(QString("Saved %1 (%2×%3)")
                                .arg(QDir::toNativeSeparators(path))
                                .arg(image.width())
                                .arg(image.height()));
    return true;
}

} // namespace il::app
