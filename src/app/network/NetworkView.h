// The Network tab's picture (NetworkPanel): a tasks::NetworkInside drawn. Plane and picture
// views: each layer's units as small maps in a column, left to right as the data flows, with the
// dense weights between two columns as lines (width: magnitude, blue: positive, orange:
// negative) and, for a table, the output's map at the right. Other tables: each unit's outputs
// as a histogram. Names: the characters' embeddings as letters on a plane. Dead units get a red
// frame, saturated ones an amber frame; hovering a unit shows what it computes and its incoming
// weights, hovering a letter its nearest letters. No math beyond placing and colouring: the
// numbers come from the worker.
#pragma once

#include "NetworkInside.h"

#include <QImage>
#include <QWidget>

#include <vector>

namespace il::app {

class NetworkView : public QWidget {
    Q_OBJECT
public:
    explicit NetworkView(QWidget* parent = nullptr);

    void setInside(const tasks::NetworkInside& inside);
    const tasks::NetworkInside& inside() const { return m_inside; }
    QSize sizeHint() const override { return m_size; }
    QSize minimumSizeHint() const override { return m_size; }
    // The picture as the view draws it, on white (Export PNG).
    QImage picture() const;

    // What hovering shows at a point ("" where nothing is), and where unit `unit` of column
    // `column` is drawn (empty when it is not): for tests, as a pointer would find them.
    QString toolTipAt(QPointF at) const;
    QRectF unitRect(int column, int unit) const;
    // The letter drawn at each embedding point's place (Embedding view), in inside().letters order.
    QPointF letterPoint(int index) const;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Cell {
        QRectF rect;
        int column = -1, unit = -1; // column -1: an input of the plane (unit 0: x, 1: y)
    };
    void layOut();
    void paint(QPainter& p) const;
    void paintMaps(QPainter& p) const;
    void paintHistograms(QPainter& p) const;
    void paintEmbedding(QPainter& p) const;
    QImage mapImage(const tasks::UnitColumn& c, int unit) const;
    QImage outputImage() const;
    QString unitText(int column, int unit) const;

    tasks::NetworkInside m_inside;
    std::vector<Cell> m_cells;
    std::vector<double> m_columnX; // left edge of each column
    QRectF m_output, m_plot;
    QSize m_size{360, 240};
};

} // namespace il::app
