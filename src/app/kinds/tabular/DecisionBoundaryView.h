// The decision-boundary picture (as TensorFlow Playground draws it): a table model's prediction
// over a plane of two features as a coloured field, with the training rows on top as dots and
// the validation rows as rings, and axes in the file's units. Classes blend their colours by
// the predicted probabilities, paler where the network is unsure (the boundary reads as a pale
// band); a regression target runs along a colour ramp, with a colour bar beside the plot.
// Drawing only: the numbers come from tasks::boundaryGrid, computed on the training worker.
#pragma once

#include "TabularBoundary.h"

#include <QImage>
#include <QWidget>

namespace il::app {

class DecisionBoundaryView : public QWidget {
    Q_OBJECT
public:
    explicit DecisionBoundaryView(QWidget* parent = nullptr);

    // A new picture of the weights at step.
    void setGrid(qint64 step, const tasks::BoundaryGrid& grid);
    // No picture: the text instead (why there is none yet).
    void setMessage(const QString& text);

    bool hasGrid() const { return m_hasGrid; }
    const tasks::BoundaryGrid& grid() const { return m_grid; }
    // The field at the grid's resolution, as it is stretched over the plot.
    const QImage& field() const { return m_field; }
    qint64 step() const { return m_step; }
    int pictures() const { return m_pictures; } // grids shown since the view was made
    QString message() const { return m_message; }

    // Class c's colour (dots, legend, field), and a regression value's place on the ramp (0..1).
    static QColor classColour(int c);
    static QColor rampColour(double t);

    QSize minimumSizeHint() const override { return {180, 160}; }
    QSize sizeHint() const override { return {360, 300}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void buildField();
    // The square plot area inside the widget, leaving room for the axes (and the colour bar).
    QRectF plotRect() const;

    tasks::BoundaryGrid m_grid;
    QImage m_field;
    bool m_hasGrid = false;
    qint64 m_step = 0;
    int m_pictures = 0;
    QString m_message;
};

} // namespace il::app
