// The record of a run for the charts: the training loss of every step, the validation loss and
// the task metric of every evaluation, the learning rate. Bounded like the model's history
// (TrainingHistory.h): each series keeps every point up to kMaxKept, then merges neighbours in
// pairs (means of step and value), so a month-long run holds at most kMaxKept points a series
// spread over the whole curve. The charts never draw it all: decimated() gives at most a few
// thousand points (bucket means), so a long run draws as fast as a short one.
#pragma once

#include "OverfitWatch.h"

#include <QList>
#include <QPointF>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace il {
struct HistoryPoint;
}

namespace il::app {

class LossHistory {
public:
    static constexpr size_t kMaxKept = 100000; // points per series
    explicit LossHistory(size_t maxKept = kMaxKept) : m_maxKept(std::max<size_t>(maxKept, 2)) {}

    void clear();
    // One training step (or, for a reopened model, one recorded evaluation).
    void addTrainLoss(int64_t step, double loss, double lr);
    // An evaluation: validation loss and task metric (NaN when absent).
    void addEvaluation(int64_t step, double valLoss, double metric);
    // The task's second measure at an evaluation (Task::sideMetric: a names model's innovation
    // rate), kept for the run it was measured in (a model file does not save it).
    void addSideMetric(int64_t step, double value);
    // A model's saved history: training loss, learning rate, validation loss and metric per
    // recorded row (a bucket of a long run's evaluations at the middle of its steps; a row's
    // training loss, the mean since the previous row, at the middle of those steps).
    void load(const std::vector<HistoryPoint>& history);
    // Forgets everything after step (a run that went back to the weights of that step).
    void truncateAfter(int64_t step);

    bool isEmpty() const { return m_train.points.empty() && m_val.points.empty(); }
    int64_t lastStep() const;
    size_t trainCount() const { return m_train.points.size(); }
    size_t validationCount() const { return m_val.points.size(); }
    size_t metricCount() const { return m_metric.points.size(); }

    // At most maxPoints points in step order: bucket means when there are more. positiveOnly
    // drops values <= 0 (for a logarithmic axis); non-finite values are always dropped.
    QList<QPointF> train(int maxPoints, bool positiveOnly = false) const;
    // The training loss smoothed by an exponential moving average (weight `keep` on the past),
    // as TensorBoard draws it: the trend through minibatch noise.
    QList<QPointF> trainSmoothed(int maxPoints, bool positiveOnly = false, double keep = 0.9) const;
    QList<QPointF> validation(int maxPoints, bool positiveOnly = false) const;
    QList<QPointF> learningRate(int maxPoints) const;
    QList<QPointF> metric(int maxPoints) const;
    QList<QPointF> sideMetric(int maxPoints) const;

    static QList<QPointF> decimated(const std::vector<QPointF>& points, int maxPoints,
                                    bool positiveOnly);

    // The overfit watch over this curve (OverfitWatch.h), fed as the points arrive (a loaded
    // history replays through it, so a reopened model shows what its run saw, from the
    // evaluations it saved): the latest sighting, !valid() when none. The loss chart marks it.
    const OverfitSighting& overfitting() const { return m_overfit.last(); }

private:
    // One series: points of `width` merged points each, but the last, which holds lastCount.
    struct Series {
        std::vector<QPointF> points;
        int64_t width = 1, lastCount = 0;
        void add(QPointF p, size_t maxKept);
        void clear() { *this = Series(); }
        void truncateAfter(double x);
    };

    // Feeds the watch anew from the kept points (after truncateAfter).
    void rewatch();

    size_t m_maxKept;
    Series m_train, m_val, m_lr, m_metric, m_side;
    OverfitWatch m_overfit;
    double m_trainSinceEval = 0; // training losses since the last evaluation, for the watch
    int64_t m_trainsSinceEval = 0;
};

} // namespace il::app
