#include "ImageDataPage.h"
#include "ui_ImageDataPage.h"

#include "Counting.h"
#include "ImageTask.h"
#include "Session.h"

#include <QLocale>

namespace il::app {

ImageDataPage::ImageDataPage(QWidget* parent)
    : StudioPage(parent), m_ui(std::make_unique<Ui::ImageDataPage>())
{
    m_ui->setupUi(this);
    setOptionWidgets({m_ui->trainingSizeSpinBox, m_ui->grayscaleCheckBox});
    m_ui->imageInfoLabel->setTextFormat(Qt::RichText);
    connect(m_ui->trainingSizeSpinBox, &QSpinBox::editingFinished, this,
            &ImageDataPage::optionsEdited);
    connect(m_ui->grayscaleCheckBox, &QCheckBox::toggled, this, &ImageDataPage::optionsEdited);
}

ImageDataPage::~ImageDataPage() = default;

void ImageDataPage::refresh()
{
    const auto* task =
        m_session ? dynamic_cast<const tasks::ImageTask*>(m_session->task().get()) : nullptr;
    if (!task) return;
    m_updating = true;
    m_pixmap = QPixmap::fromImage(task->originalImage());
    fitImage();
    const QSize o = task->originalImage().size(), t = task->trainingImage().size();
    const bool gray = task->geometry().channels == 1;
    m_ui->imageInfoLabel->setText(
        QString("%1 × %2 pixels, %3. Trains at <b>%4 × %5</b>: %6 → %7.")
            .arg(o.width())
            .arg(o.height())
            .arg(gray ? "gray" : "colour")
            .arg(t.width())
            .arg(t.height())
            .arg(tasks::countOf(static_cast<qint64>(t.width()) * t.height(), "example", QLocale()))
            .arg(gray ? "one brightness each" : "three colour values each"));
    const tasks::TaskOptions& options = m_session->taskOptions();
    const tasks::TaskType& images = tasks::imageTaskType();
    m_ui->trainingSizeSpinBox->setValue(images.setting(options, tasks::kImageSizeSetting));
    // A gray picture has no gray version to offer; one trained gray keeps the box to go back.
    const bool trainsGray = images.setting(options, tasks::kGrayscaleSetting) != 0;
    const bool colour = !gray || trainsGray;
    m_ui->grayscaleCheckBox->setChecked(trainsGray || gray);
    m_ui->grayscaleCheckBox->setEnabled(colour);
    m_ui->grayscaleCheckBox->setVisible(colour);
    m_updating = false;
}

void ImageDataPage::optionsEdited()
{
    if (m_updating || !m_session || !m_session->task()) return;
    tasks::TaskOptions options = m_session->taskOptions();
    options.settings[tasks::kImageSizeSetting] = m_ui->trainingSizeSpinBox->value();
    options.settings[tasks::kGrayscaleSetting] =
        m_ui->grayscaleCheckBox->isChecked() && m_ui->grayscaleCheckBox->isEnabled();
    if (options.settings == m_session->taskOptions().settings) return;
    reopenWith(m_session, options);
}

void ImageDataPage::fitImage()
{
    if (m_pixmap.isNull()) return;
    const QSize box = m_ui->imagePreviewLabel->size();
    m_ui->imagePreviewLabel->setPixmap(
        m_pixmap.scaled(box, Qt::KeepAspectRatio, Qt::SmoothTransformation));
}

void ImageDataPage::resizeEvent(QResizeEvent* event)
{
    StudioPage::resizeEvent(event);
    fitImage();
}

} // namespace il::app
