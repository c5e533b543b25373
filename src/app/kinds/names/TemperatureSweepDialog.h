// The temperature sweep of a names model (Names > Sweep…): the innovation rate and the mean
// log-likelihood of the drawn characters at each temperature from 0.2 to 2.0, drawn on the
// training worker (NamesRequests::sweepTemperatures) and charted here, so a learner sees the trade:
// cold sampling repeats the training list, hot sampling invents names the network itself finds
// unlikely. Not modal: training and the rest of the window go on.
#pragma once

#include "NamesTask.h"

#include <QDialog>

#include <vector>

class QChart;
class QLabel;
class QLineSeries;
class QPushButton;
class QValueAxis;

namespace il::app {

class Session;

class TemperatureSweepDialog : public QDialog {
    Q_OBJECT
public:
    static constexpr int kNamesPerTemperature = 300;

    TemperatureSweepDialog(Session* session, QWidget* parent = nullptr);
    // Draws the sweep again with the current weights.
    void sweep();
    // Tests: the points as charted (temperature, innovation in %; temperature, mean ln p).
    QList<QPointF> innovationPoints() const;
    QList<QPointF> likelihoodPoints() const;

private:
    void swept(const std::vector<tasks::SweepPoint>& points, const QString& error);

    Session* m_session;
    QChart* m_chart;
    QLineSeries* m_innovation;
    QLineSeries* m_likelihood;
    QValueAxis* m_temperatureAxis;
    QValueAxis* m_innovationAxis;
    QValueAxis* m_likelihoodAxis;
    QLabel* m_status;
    QPushButton* m_again;
    bool m_busy = false;
};

} // namespace il::app
