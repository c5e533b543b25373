#include "NetworkPanel.h"
#include "ui_NetworkPanel.h"

#include "Dialogs.h"
#include "NetworkView.h"
#include "Session.h"

#include <QDir>
#include <QFileInfo>
#include <QImageWriter>
#include <QSaveFile>
#include <QStandardPaths>

namespace il::app {

NetworkPanel::NetworkPanel(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::NetworkPanel>()), m_view(new NetworkView)
{
    m_ui->setupUi(this);
    m_ui->networkScrollArea->setWidget(m_view);
    m_ui->insideNoteLabel->setText("Open data and press Start: each unit's picture appears here.");
    m_ui->exportNetworkButton->setEnabled(false);
    m_later.setSingleShot(true);
    connect(&m_later, &QTimer::timeout, this, &NetworkPanel::request);
    connect(m_ui->exportNetworkButton, &QPushButton::clicked, this, &NetworkPanel::exportPng);
    connect(m_ui->insideAcrossComboBox, &QComboBox::activated, this, [this] {
        // The second feature: any other numeric one.
        const int across = m_ui->insideAcrossComboBox->count() > 0
                               ? m_ui->insideAcrossComboBox->currentData().toInt()
                               : -1;
        QComboBox* up = m_ui->insideUpComboBox;
        const int kept = up->currentData().toInt();
        {
            const QSignalBlocker block(up);
            up->clear();
            for (int i = 1; i < m_ui->insideAcrossComboBox->count(); ++i) {
                const int f = m_ui->insideAcrossComboBox->itemData(i).toInt();
                if (f != across) up->addItem(m_ui->insideAcrossComboBox->itemText(i), f);
            }
            up->setCurrentIndex(std::max(0, up->findData(kept)));
        }
        up->setVisible(across >= 0);
        m_ui->insideUpLabel->setVisible(across >= 0);
        request();
    });
    connect(m_ui->insideUpComboBox, &QComboBox::activated, this, &NetworkPanel::request);
    refillPlane();
}

void NetworkPanel::refillPlane()
{
    int features = 0;
    const std::shared_ptr<const tasks::Task> task = m_session ? m_session->task() : nullptr;
    const std::vector<std::pair<int, QString>> axes =
        task ? task->insidePlaneAxes(&features) : std::vector<std::pair<int, QString>>{};
    QComboBox* across = m_ui->insideAcrossComboBox;
    const QString keptAcross = across->currentText();
    const QString keptUp = m_ui->insideUpComboBox->currentText();
    {
        const QSignalBlocker block(across);
        across->clear();
    }
    bool choice = false;
    if (features > 0) {
        choice = features > 2 && axes.size() >= 2;
        const QSignalBlocker block(across);
        across->addItem("Each unit over the rows (histograms)", -1);
        for (const auto& [f, name] : axes)
            across->addItem(name, f);
        across->setCurrentIndex(std::max(0, across->findText(keptAcross)));
    }
    for (QWidget* w :
         {static_cast<QWidget*>(m_ui->insidePlaneLabel), static_cast<QWidget*>(across)})
        w->setVisible(choice);
    emit across->activated(across->currentIndex()); // the Up box follows (and asks again)
    const int up = m_ui->insideUpComboBox->findText(keptUp);
    if (up >= 0) m_ui->insideUpComboBox->setCurrentIndex(up);
    if (!choice) {
        m_ui->insideUpComboBox->hide();
        m_ui->insideUpLabel->hide();
    }
}

tasks::InsideRequest NetworkPanel::insideRequest() const
{
    tasks::InsideRequest r;
    if (m_ui->insideAcrossComboBox->isVisibleTo(this)) {
        r.featureA = m_ui->insideAcrossComboBox->currentData().toInt();
        r.featureB = r.featureA >= 0 && m_ui->insideUpComboBox->count() > 0
                         ? m_ui->insideUpComboBox->currentData().toInt()
                         : -1;
    }
    return r;
}

NetworkPanel::~NetworkPanel() = default;

void NetworkPanel::setSession(Session* session)
{
    m_session = session;
    connect(session, &Session::insideReady, this, &NetworkPanel::onReady);
    connect(session, &Session::modelChanged, this, &NetworkPanel::refillPlane);
    connect(session, &Session::datasetOpened, this, &NetworkPanel::refillPlane);
    connect(session, &Session::historyReset, this, &NetworkPanel::request);
    connect(session, &Session::progressed, this, &NetworkPanel::requestSoon);
    connect(session, &Session::trainingFinished, this, &NetworkPanel::request);
    connect(session, &Session::modelOpened, this, &NetworkPanel::request);
    refillPlane();
}

void NetworkPanel::request()
{
    if (!m_session || !m_session->task()) {
        if (m_session && !m_session->task()) {
            m_view->setInside({});
            m_ui->insideNoteLabel->setText("Open data (File > Open Dataset or Samples) and press "
                                           "Start: each unit's picture appears here.");
            m_ui->exportNetworkButton->setEnabled(false);
        }
        return;
    }
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    m_stale = false;
    m_later.stop();
    m_sinceRequest.start();
    m_session->requestInside(insideRequest());
}

void NetworkPanel::requestSoon()
{
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    const qint64 since = m_sinceRequest.isValid() ? m_sinceRequest.elapsed() : kRefreshMs;
    if (since >= kRefreshMs)
        request();
    else if (!m_later.isActive())
        m_later.start(static_cast<int>(kRefreshMs - since));
}

void NetworkPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale) request();
}

void NetworkPanel::onReady(const tasks::NetworkInside& inside)
{
    ++m_updates;
    m_view->setInside(inside);
    // F1 on the picture: the concept it shows (ConceptLinks reads the property).
    m_view->setProperty("ironlearnConcept", inside.view == tasks::InsideView::Embedding
                                                ? "embeddings"
                                                : "hidden-units");
    m_view->resize(m_view->sizeHint());
    const bool drawn = inside.view != tasks::InsideView::None;
    m_ui->insideNoteLabel->setText(
        drawn ? QString("%1, at step %2.").arg(inside.note).arg(inside.step) : inside.note);
    m_ui->insideLegendLabel->setVisible(drawn && inside.view != tasks::InsideView::Embedding);
    m_ui->exportNetworkButton->setEnabled(drawn);
}

void NetworkPanel::exportPng()
{
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    const QString base = m_session && !m_session->dataPath().isEmpty()
                             ? QFileInfo(m_session->dataPath()).completeBaseName()
                             : QString("network");
    const QString path =
        Dialogs::saveFileName(this, "Export the Network Picture",
                              QDir(dir).filePath(base + "-network.png"), "PNG images (*.png)");
    if (path.isEmpty()) return;
    // Written whole or not at all: a failed write leaves any file there as it was.
    QSaveFile file(path);
    QImageWriter writer(&file, "png");
    if (!file.open(QIODevice::WriteOnly) || !writer.write(m_view->picture()) || !file.commit())
        Dialogs::warning(this, "Export PNG",
                         QString("%1: %2").arg(QDir::toNativeSeparators(path),
                                               writer.error() != QImageWriter::UnknownError
                                                   ? writer.errorString()
                                                   : file.errorString()));
}

} // namespace il::app
