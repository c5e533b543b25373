#include "WelcomePage.h"
#include "Samples.h"
#include "ui_WelcomePage.h"

#include <QCommandLinkButton>
#include <QKeyEvent>
#include <QPainter>

namespace il::app {

namespace {

constexpr int kIcon = 48;

// A small table: a header row and a few rows of figures, as the Data panel shows a CSV.
// An empty icon-sized pixmap, sharp on high-DPI screens.
QPixmap blankIcon(qreal dpr)
{
    QPixmap pixmap(QSize(kIcon, kIcon) * dpr);
    pixmap.setDevicePixelRatio(dpr);
    pixmap.fill(Qt::transparent);
    return pixmap;
}

QPixmap tableIcon(const QPalette& palette, qreal dpr)
{
    QPixmap pixmap = blankIcon(dpr);
    QPainter p(&pixmap);
    const QRect grid(4, 8, kIcon - 8, kIcon - 16);
    p.fillRect(grid, palette.color(QPalette::Base));
    p.fillRect(QRect(grid.topLeft(), QSize(grid.width(), grid.height() / 4)),
               palette.color(QPalette::Highlight));
    p.setPen(palette.color(QPalette::Mid));
    for (int i = 1; i < 4; ++i) {
        const int y = grid.top() + i * grid.height() / 4;
        const int x = grid.left() + i * grid.width() / 4;
        p.drawLine(grid.left(), y, grid.right(), y);
        p.drawLine(x, grid.top(), x, grid.bottom());
    }
    p.drawRect(grid.adjusted(0, 0, -1, -1));
    return pixmap;
}

// Three lines of names, the first one new (in the highlight colour).
QPixmap namesIcon(const QPalette& palette, const QFont& base, qreal dpr)
{
    QPixmap pixmap = blankIcon(dpr);
    QPainter p(&pixmap);
    QFont font = base;
    font.setPixelSize(13);
    font.setItalic(true);
    p.setFont(font);
    const char* names[] = {"Ava", "Liam", "Zoe"};
    for (int i = 0; i < 3; ++i) {
        p.setPen(palette.color(i == 0 ? QPalette::Highlight : QPalette::Text));
        p.drawText(QRect(2, 4 + i * 14, kIcon - 4, 14), Qt::AlignLeft | Qt::AlignVCenter, names[i]);
    }
    return pixmap;
}

} // namespace

const WelcomePage::GuidedStart WelcomePage::kStarts[3] = {
    {"tableStartButton", "iris"},
    {"imageStartButton", "camera"},
    {"namesStartButton", "names-ssa2018"},
};

WelcomePage::WelcomePage(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::WelcomePage>())
{
    m_ui->setupUi(this);
    QFont title = m_ui->welcomeTitleLabel->font();
    title.setPointSizeF(title.pointSizeF() * 1.8);
    title.setBold(true);
    m_ui->welcomeTitleLabel->setFont(title);
    m_ui->welcomeFooterLabel->setForegroundRole(QPalette::PlaceholderText);

    const qreal dpr = devicePixelRatioF();
    m_ui->tableStartButton->setIcon(tableIcon(palette(), dpr));
    QPixmap photo =
        QPixmap(io::samplePath(QStringLiteral("camera.png")))
            .scaled(QSize(kIcon, kIcon) * dpr, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    photo.setDevicePixelRatio(dpr);
    m_ui->imageStartButton->setIcon(photo);
    m_ui->namesStartButton->setIcon(namesIcon(palette(), font(), dpr));
    m_ui->openOwnFileButton->setIconSize(QSize(32, 32));
    for (const GuidedStart& start : kStarts) {
        auto* button = findChild<QCommandLinkButton*>(start.button);
        button->setIconSize(QSize(kIcon, kIcon));
        const QString sample = start.sample;
        connect(button, &QCommandLinkButton::clicked, this,
                [this, sample] { emit sampleChosen(sample); });
    }
    connect(m_ui->openOwnFileButton, &QCommandLinkButton::clicked, this,
            &WelcomePage::openFileRequested);
    connect(m_ui->closeWelcomeButton, &QPushButton::clicked, this, &WelcomePage::closeRequested);
    setFocusProxy(m_ui->tableStartButton);
}

WelcomePage::~WelcomePage() = default;

void WelcomePage::keyPressEvent(QKeyEvent* event)
{
    if (event->key() == Qt::Key_Escape) return emit closeRequested();
    QWidget::keyPressEvent(event);
}

} // namespace il::app
