// The full record of a run for the charts: the training loss of every step, the validation loss
// and the task metric of every evaluation, the learning rate. The charts never draw it all:
// decimated() gives at most a few thousand points (bucket means), so a 100,000-step run draws
// as fast as a short one while nothing is thrown away.
#pragma once

#include <QList>
#include <QPointF>

#include <cstdint>
#include <vector>

namespace il {
struct HistoryPoint;
}

namespace il::app {

class LossHistory {
public:
    void clear();
    // One training step (or, for a reopened model, one recorded evaluation).
    void addTrainLoss(int64_t step, double loss, double lr);
    // An evaluation: validation loss and task metric (NaN when absent).
    void addEvaluation(int64_t step, double valLoss, double metric);
    // A model's saved history: training loss, learning rate, validation loss and metric per
    // recorded evaluation.
    void load(const std::vector<HistoryPoint>& history);
    // Forgets everything after step (a run that went back to the weights of that step).
    void truncateAfter(int64_t step);

    bool isEmpty() const { return m_train.empty() && m_val.empty(); }
    int64_t lastStep() const;
    size_t trainCount() const { return m_train.size(); }
    size_t validationCount() const { return m_val.size(); }
    size_t metricCount() const { return m_metric.size(); }

    // At most maxPoints points in step order: bucket means when there are more. positiveOnly
    // drops values <= 0 (for a logarithmic axis); non-finite values are always dropped.
    QList<QPointF> train(int maxPoints, bool positiveOnly = false) const;
    // The training loss smoothed by an exponential moving average (weight `keep` on the past),
    // as TensorBoard draws it: the trend through minibatch noise.
    QList<QPointF> trainSmoothed(int maxPoints, bool positiveOnly = false, double keep = 0.9) const;
    QList<QPointF> validation(int maxPoints, bool positiveOnly = false) const;
    QList<QPointF> learningRate(int maxPoints) const;
    QList<QPointF> metric(int maxPoints) const;

    static QList<QPointF> decimated(const std::vector<QPointF>& points, int maxPoints,
                                    bool positiveOnly);

private:
    std::vector<QPointF> m_train, m_val, m_lr, m_metric;
};

} // namespace il::app
