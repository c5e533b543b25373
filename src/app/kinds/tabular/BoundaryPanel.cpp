#include "BoundaryPanel.h"
#include "ui_BoundaryPanel.h"

#include "Counting.h"
#include "DecisionBoundaryView.h"
#include "Session.h"
#include "TableRequests.h"
#include "TabularTask.h"

#include <QLocale>
#include <QShowEvent>

namespace il::app {

namespace {

const tasks::TabularTask* tableOf(const Session* session)
{
    return session ? dynamic_cast<const tasks::TabularTask*>(session->task().get()) : nullptr;
}

// A small square of colour for the legend, then the text.
QString swatch(const QColor& c, const QString& text)
{
    return QString("<span style=\"color:%1\">&#9632;</span>&nbsp;%2")
        .arg(c.name(), text.toHtmlEscaped());
}

} // namespace

BoundaryPanel::BoundaryPanel(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::BoundaryPanel>())
{
    m_ui->setupUi(this);
    // The controls keep to a narrow column; the picture takes the rest.
    for (QLabel* l :
         {m_ui->boundaryHeldValuesLabel, m_ui->boundaryLegendLabel, m_ui->boundaryStepLabel})
        l->setMaximumWidth(fontMetrics().horizontalAdvance(QString(26, 'x')));
    m_later.setSingleShot(true);
    connect(&m_later, &QTimer::timeout, this, &BoundaryPanel::request);
    connect(m_ui->boundaryXComboBox, &QComboBox::activated, this, [this] {
        keepAxesApart(true);
        request();
    });
    connect(m_ui->boundaryYComboBox, &QComboBox::activated, this, [this] {
        keepAxesApart(false);
        request();
    });
    connect(m_ui->boundaryHeldComboBox, &QComboBox::activated, this, [this] {
        updateHeldControls();
        request();
    });
    connect(m_ui->boundaryRowSpinBox, &QSpinBox::valueChanged, this, [this] { request(); });
    m_sinceRequest.start();
    refill();
}

BoundaryPanel::~BoundaryPanel() = default;

DecisionBoundaryView* BoundaryPanel::view() const
{
    return m_ui->decisionBoundaryView;
}

void BoundaryPanel::setSession(Session* session)
{
    m_session = session;
    connect(session, &Session::datasetOpened, this, &BoundaryPanel::refill);
    connect(session, &Session::modelChanged, this, &BoundaryPanel::refill);
    // Fresh weights (Start after a change, Reset weights, a rewind): a picture of them.
    connect(session, &Session::historyReset, this, &BoundaryPanel::request);
    connect(session, &Session::progressed, this, &BoundaryPanel::requestSoon);
    connect(session, &Session::trainingFinished, this, &BoundaryPanel::request);
    connect(session, &Session::modelOpened, this, &BoundaryPanel::request);
    connect(&TableRequests::of(*session), &TableRequests::boundaryReady, this,
            &BoundaryPanel::onReady);
    refill();
}

void BoundaryPanel::refill()
{
    const tasks::TabularTask* table = tableOf(m_session);
    const QString keptX = m_ui->boundaryXComboBox->currentText();
    const QString keptY = m_ui->boundaryYComboBox->currentText();
    for (QComboBox* box : {m_ui->boundaryXComboBox, m_ui->boundaryYComboBox}) {
        const QSignalBlocker block(box);
        box->clear();
    }
    bool available = false;
    m_features = 0;
    if (!table) {
        m_unavailable = m_session && m_session->isKind(tasks::tabularTaskType())
                            ? "Open the data this model was trained on to see its decision "
                              "boundary (File > Open Dataset)."
                            : "Open a table to see a model's decision boundary.";
    } else {
        const tasks::TabularSchema& s = table->schema();
        m_features = static_cast<int>(s.features.size());
        const std::vector<int> axes = tasks::boundaryAxes(s);
        for (QComboBox* box : {m_ui->boundaryXComboBox, m_ui->boundaryYComboBox}) {
            const QSignalBlocker block(box);
            for (int f : axes) {
                box->addItem(s.features[f], f);
                // A long name may be cut short in the box; its tooltip has it whole.
                box->setItemData(box->count() - 1, s.features[f], Qt::ToolTipRole);
            }
        }
        available = axes.size() >= 2;
        m_unavailable =
            available
                ? QString()
                : QString("The decision boundary spans two numeric features; "
                          "this table has %1.")
                      .arg(tasks::countOf(static_cast<qint64>(axes.size()), "numeric feature"));
        if (available) {
            const QSignalBlocker bx(m_ui->boundaryXComboBox), by(m_ui->boundaryYComboBox);
            const int x = m_ui->boundaryXComboBox->findText(keptX);
            const int y = m_ui->boundaryYComboBox->findText(keptY);
            m_ui->boundaryXComboBox->setCurrentIndex(x >= 0 && x != y ? x : 0);
            m_ui->boundaryYComboBox->setCurrentIndex(y >= 0 && x != y ? y : 1);
            keepAxesApart(true);
        }
        const QSignalBlocker block(m_ui->boundaryRowSpinBox);
        m_ui->boundaryRowSpinBox->setMaximum(
            static_cast<int>(std::max<int64_t>(1, table->data().trainRows)));
    }
    for (QWidget* w : {static_cast<QWidget*>(m_ui->boundaryXComboBox),
                       static_cast<QWidget*>(m_ui->boundaryYComboBox)})
        w->setEnabled(available);
    updateHeldControls();
    m_ui->boundaryHeldValuesLabel->clear();
    m_ui->boundaryLegendLabel->clear();
    m_ui->boundaryStepLabel->clear();
    view()->setMessage(available ? "Press Start: the network's prediction over two features "
                                   "appears here and changes as it learns."
                                 : m_unavailable);
    m_available = available;
    emit availabilityChanged(available); // also when only the reason changed

    if (available) request();
}

void BoundaryPanel::keepAxesApart(bool xChanged)
{
    QComboBox* moved = xChanged ? m_ui->boundaryXComboBox : m_ui->boundaryYComboBox;
    QComboBox* other = xChanged ? m_ui->boundaryYComboBox : m_ui->boundaryXComboBox;
    if (moved->count() < 2 || moved->currentIndex() != other->currentIndex()) return;
    // The same feature twice is no plane: the other axis moves to the next feature.
    const QSignalBlocker block(other);
    other->setCurrentIndex((moved->currentIndex() + 1) % other->count());
}

void BoundaryPanel::updateHeldControls()
{
    const bool others = m_available && m_features > 2;
    m_ui->boundaryHeldComboBox->setEnabled(others);
    const bool atRow = others && m_ui->boundaryHeldComboBox->currentIndex() == 1;
    m_ui->boundaryRowSpinBox->setEnabled(atRow);
    m_ui->boundaryHeldComboBox->setToolTip(
        others ? "Where every other feature stays while the two on the axes vary: at its mean "
                 "over the training rows (a category: the most common one), or at the values "
                 "of one training row."
               : "The table has no other features to hold.");
}

tasks::BoundaryPlane BoundaryPanel::plane() const
{
    tasks::BoundaryPlane p;
    p.featureA = m_ui->boundaryXComboBox->currentData().toInt();
    p.featureB = m_ui->boundaryYComboBox->currentData().toInt();
    p.width = p.height = kGridSide;
    if (m_ui->boundaryRowSpinBox->isEnabled()) p.heldRow = m_ui->boundaryRowSpinBox->value() - 1;
    return p;
}

void BoundaryPanel::request()
{
    m_later.stop();
    if (!m_session || !m_available) return;
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    m_stale = false;
    m_sinceRequest.restart();
    TableRequests::of(*m_session).requestBoundary(plane());
}

void BoundaryPanel::requestSoon()
{
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    if (m_later.isActive()) return;
    const qint64 wait = kRefreshMs - m_sinceRequest.elapsed();
    if (wait <= 0)
        request();
    else
        m_later.start(static_cast<int>(wait));
}

void BoundaryPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale) request();
}

void BoundaryPanel::onReady(qint64 step, const tasks::BoundaryGrid& grid, const QString& error)
{
    if (!m_available) return;
    if (!error.isEmpty()) {
        view()->setMessage(error);
        m_ui->boundaryStepLabel->clear();
        return;
    }
    view()->setGrid(step, grid);
    m_ui->boundaryHeldValuesLabel->setText(grid.heldText.isEmpty() ? QString()
                                                                   : "Held: " + grid.heldText);
    QStringList legend;
    if (grid.classification) {
        for (int c = 0; c < grid.classes.size(); ++c)
            legend << swatch(DecisionBoundaryView::classColour(c), grid.classes[c]);
    } else {
        legend << swatch(DecisionBoundaryView::rampColour(0.8),
                         "colour: predicted " + grid.valueName);
    }
    legend << QString("&#9679;&nbsp;training rows, &#9675;&nbsp;validation");
    m_ui->boundaryLegendLabel->setText(legend.join("<br>"));
    QString rows = tasks::countOf(grid.trainRows, "training row");
    if (grid.valRows > 0) rows += ", " + QString::number(grid.valRows) + " validation";
    const size_t shown = grid.points.size();
    if (shown < static_cast<size_t>(grid.trainRows + grid.valRows))
        rows += QString(" (%1 shown)").arg(shown);
    m_ui->boundaryStepLabel->setText(
        QString("Step %1 · %2").arg(QLocale().toString(static_cast<qlonglong>(step)), rows));
}

} // namespace il::app
