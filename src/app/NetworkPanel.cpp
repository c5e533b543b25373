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
}

NetworkPanel::~NetworkPanel() = default;

void NetworkPanel::setSession(Session* session)
{
    m_session = session;
    connect(session, &Session::insideReady, this, &NetworkPanel::onReady);
    connect(session, &Session::modelChanged, this, &NetworkPanel::request);
    connect(session, &Session::historyReset, this, &NetworkPanel::request);
    connect(session, &Session::progressed, this, &NetworkPanel::requestSoon);
    connect(session, &Session::trainingFinished, this, &NetworkPanel::request);
    connect(session, &Session::modelOpened, this, &NetworkPanel::request);
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
    m_session->requestInside(tasks::InsideRequest{});
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
