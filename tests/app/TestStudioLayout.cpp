// The smallest supported window, 1024x700, on every kind of sample and every setup tab: the
// window does not grow past it, and no text is cut short. "Cut short" is checked the way a reader
// sees it: a button, a one-line label or a chart title narrower than its text needs, or a table
// that hides a column behind a horizontal scroll bar. Run twice by CTest, the second time at
// QT_SCALE_FACTOR=2 (high DPI). The window and the helpers are StudioTestCase.h's.
#include "StudioTestCase.h"

#include <QAbstractButton>
#include <QChart>
#include <QChartView>
#include <QDoubleSpinBox>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextDocument>

using namespace il::app;

class TestStudioLayout : public studiotest::StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup() { closeWindow(); }

    void smallestWindowFitsEveryTab_data();
    void smallestWindowFitsEveryTab();

private:
    // Every cut-short widget on screen now, one line each ("QPushButton duplicateButton
    // 'Duplicate': 60 < 88 px").
    QStringList clippedText() const;
};

// The smallest window the README promises.
constexpr int kSmallestWidth = 1024;
constexpr int kSmallestHeight = 700;

void TestStudioLayout::initTestCase()
{
    isolateSettings("testStudioLayout");
}

QStringList TestStudioLayout::clippedText() const
{
    QStringList cut;
    auto describe = [](const QWidget* w, const QString& text, int have, int need) {
        return QString("%1 %2 '%3': %4 < %5 px")
            .arg(w->metaObject()->className(), w->objectName(), text.left(40))
            .arg(have)
            .arg(need);
    };
    for (const QAbstractButton* b : m_window->findChildren<QAbstractButton*>()) {
        if (!b->isVisible() || b->text().isEmpty()) continue;
        if (b->width() < b->minimumSizeHint().width())
            cut << describe(b, b->text(), b->width(), b->minimumSizeHint().width());
    }
    for (const QLabel* l : m_window->findChildren<QLabel*>()) {
        if (!l->isVisible() || l->wordWrap() || l->text().isEmpty() || !l->pixmap().isNull())
            continue;
        if (l->width() < l->minimumSizeHint().width())
            cut << describe(l, l->text(), l->width(), l->minimumSizeHint().width());
    }
    // Chart titles: QtCharts elides one that does not fit ("PSNR (dB): measured every 128 …").
    for (const QChartView* v : m_window->findChildren<QChartView*>()) {
        const QChart* chart = v->chart();
        if (!v->isVisible() || !chart) continue;
        QTextDocument doc;
        doc.setHtml(chart->title());
        const int need = QFontMetrics(chart->titleFont()).horizontalAdvance(doc.toPlainText());
        const int have = static_cast<int>(chart->size().width()) - 2 * 12; // the title margins
        if (!chart->title().isEmpty() && have < need)
            cut << describe(v, doc.toPlainText(), have, need);
        // Axis labels and titles QtCharts had to elide ("..." where 31.5 should be), and labels
        // drawn over each other ("-2.77e+03-1.74e+03").
        QList<QPair<QString, QRectF>> texts;
        for (const QGraphicsItem* item : v->scene()->items()) {
            QString text;
            if (const auto* t = dynamic_cast<const QGraphicsTextItem*>(item))
                text = t->toPlainText();
            else if (const auto* t = dynamic_cast<const QGraphicsSimpleTextItem*>(item))
                text = t->text();
            if (!item->isVisible() || text.isEmpty()) continue;
            if (text.contains("...") || text.contains(QChar(0x2026)))
                cut << describe(v, "label " + text, static_cast<int>(item->boundingRect().width()),
                                static_cast<int>(v->chart()->plotArea().left()));
            // The glyphs' box (a text item's bounding rectangle has a margin around them); a
            // turned one (the vertical axis's title) stays out of this.
            if (item->rotation() != 0 || item->sceneTransform().isRotating()) continue;
            const auto* textItem = dynamic_cast<const QGraphicsTextItem*>(item);
            const QFontMetricsF metrics(textItem ? textItem->font() : QFont());
            const QRectF whole = item->sceneBoundingRect();
            QRectF box(0, 0, metrics.horizontalAdvance(text), metrics.ascent());
            box.moveCenter(whole.center());
            for (const auto& [other, otherBox] : texts)
                if (box.intersects(otherBox))
                    cut << describe(v, QString("labels '%1' and '%2' overlap").arg(text, other), 0,
                                    1);
            texts.append({text, box});
        }
    }
    // Tables whose columns must all be in view (the layer stack, the predictions, the confusion
    // matrix).
    for (const char* name : {"layersTableView", "predictionsTableWidget", "confusionTableWidget"}) {
        const auto* t = m_window->findChild<QTableView*>(name);
        if (t && t->isVisible() && t->horizontalScrollBar()->maximum() > 0)
            cut << describe(t, "columns", t->viewport()->width(),
                            t->viewport()->width() + t->horizontalScrollBar()->maximum());
    }
    return cut;
}

void TestStudioLayout::smallestWindowFitsEveryTab_data()
{
    QTest::addColumn<QString>("sample");
    QTest::addColumn<int>("steps");
    QTest::addColumn<double>("learningRate"); // 0: the task's
    QTest::newRow("classification table") << "iris" << 60 << 0.0;
    QTest::newRow("regression table") << "diabetes" << 60 << 0.0;
    // Two numbers: the table output opens on the decision boundary (BoundaryPanel).
    QTest::newRow("two-feature table") << "spiral" << 60 << 0.0;
    QTest::newRow("image") << "camera" << 300 << 0.0; // PSNR at 128 and 256: the axis moves
    QTest::newRow("names") << "names-ssa2018" << 30 << 0.0;
    QTest::newRow("diverged regression") << "diabetes" << 60 << 10.0; // the loss explodes
}

// At 1024x700 nothing may grow the window or cut a label short: switching tabs once grew it to
// 1142 px, layer names read "De…", the Duplicate button "uplicat", and the prediction columns
// hid behind a scroll bar.
void TestStudioLayout::smallestWindowFitsEveryTab()
{
    QFETCH(QString, sample);
    QFETCH(int, steps);
    QFETCH(double, learningRate);
    newWindow();
    m_window->resize(kSmallestWidth, kSmallestHeight);
    openSample(sample);
    // With the task's own budget in the progress bar ("0 / 3000 steps" is wider than the short
    // runs below): a run bar sized for it made the window 1031 px wide.
    QTest::qWait(50);
    QVERIFY2(m_window->minimumSizeHint().width() <= kSmallestWidth,
             qPrintable(QString("%1 opened: the window needs %2 px")
                            .arg(sample)
                            .arg(m_window->minimumSizeHint().width())));
    if (learningRate > 0) find<QDoubleSpinBox>("learningRateSpinBox")->setValue(learningRate);
    train(steps, learningRate == 0);
    QTest::qWait(500);
    auto* tabs = find<QTabWidget>("setupTabWidget");
    for (int i = 0; i < tabs->count(); ++i) {
        tabs->setCurrentIndex(i);
        QTest::qWait(50); // layouts settle in posted events
        const QString where = sample + ", tab " + tabs->tabText(i);
        const QSize least = m_window->minimumSizeHint();
        QVERIFY2(least.width() <= kSmallestWidth && least.height() <= kSmallestHeight,
                 qPrintable(QString("%1: the window needs %2x%3")
                                .arg(where)
                                .arg(least.width())
                                .arg(least.height())));
        QCOMPARE(m_window->size(), QSize(kSmallestWidth, kSmallestHeight));
        const QStringList cut = clippedText();
        QVERIFY2(cut.isEmpty(), qPrintable(where + ": " + cut.join("; ")));
    }
}

QTEST_MAIN(TestStudioLayout)
#include "TestStudioLayout.moc"
