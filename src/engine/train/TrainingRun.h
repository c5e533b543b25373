// One call of Trainer::run: the loop of steps and what happens between them (reads of the
// device's scalars, the watches, evaluation and early stopping, progress reports, host copies of
// good weights), as members that share one state. Internal to the engine: Trainer.cpp makes one
// per run (a friend of Trainer), TrainingRun.cpp holds the loop.
#pragma once

#include "HostCopy.h"
#include "Trainer.h"
#include "TrainingStep.h"

#include <chrono>
#include <memory>
#include <string>

namespace il {

// The shape of a run over the data: checked against the network.
struct RunShape {
    int64_t rows = 0;
    int64_t batch = 0;
    int64_t stepsPerEpoch = 0;
    int64_t planned = 0; // steps in total; 0: a time budget only
    bool hasVal = false;
};

class TrainingRun {
public:
    using Clock = std::chrono::steady_clock;

    TrainingRun(Trainer& t, const TrainingData& data, const RunShape& shape, TrainResult result);
    TrainResult run();

private:
    bool budgetReached();                // finished, time budget or cancel: sets m_result
    bool afterStep(bool epochEnd);       // reads, evaluation, progress, host copies; false: stop
    bool readScalars();                  // false: the guard saw a non-finite value
    void watch();                        // a window of the watch ends: a stall or divergence?
    void noticeOverfitting(bool atStop); // the overfit watch saw it: a notice
    void stopOnNonFinite();
    bool evaluate();          // a history point; true to stop (target, early stopping)
    HistoryPoint lossPoint(); // the mean loss since the previous row (pending sums reset)
    bool lossRowDue() const;  // RunPolicy::historyEvery: a loss-only row now?
    bool targetReached(const HistoryPoint& h);
    bool earlyStopping(const HistoryPoint& h);
    void report(bool evaluated);
    void copyToHostIfDue(bool force);
    void deviceFailed(const BackendError& e, int64_t failedStep);
    TrainResult finish();

    double elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
    double epochPosition() const
    {
        return static_cast<double>(m_state.epoch) + static_cast<double>(m_state.stepInEpoch) /
                                                        static_cast<double>(m_shape.stepsPerEpoch);
    }
    int64_t scheduleTotal() const;

    Trainer& m_t;
    const TrainerConfig& m_cfg;
    TrainingState& m_state;
    Backend& m_b;
    const TrainingData& m_data;
    const RunShape m_shape;
    TrainResult m_result;
    TrainingStep m_step;
    const int64_t m_readEvery;
    int64_t m_stepsSinceRead = 0;
    double m_lr = 0;
    ScheduleConfig m_schedule; // the config's, with the rates lowered by each recovery

    // The watch for a stall or divergence, and its line for the next report.
    TrainingWatch m_watch;
    std::string m_notice;
    // The watch for overfitting, and the training loss since the previous evaluation for it.
    OverfitWatch m_overfit;
    double m_evalLossSum = 0;
    int64_t m_evalLossSteps = 0;

    // Evaluation and early stopping.
    Buffer m_evalScratch;
    Buffer m_bestParams;      // the best weights seen in this call (an earlier session's are gone)
    bool m_haveBest = false;  // m_bestParams holds weights of this call
    bool m_bestInRun = false; // this call's evaluations improved on the best
    HistoryPoint m_bestPoint; // the best evaluation of this call (of m_bestParams)
    double m_lastValLoss = NAN, m_lastMetric = NAN;

    // Progress.
    const Clock::time_point m_start = Clock::now();
    const int64_t m_startStep;
    double m_lastReport = -1e9;
    double m_lastReportTime = 0;
    int64_t m_reportStep;
    double m_reportLossSum = 0;
    int64_t m_reportLossSteps = 0;

    // Host copies of good weights, on a device backend only.
    const bool m_device;
    std::shared_ptr<HostCopy> m_lastGood;
    double m_lastSnapshot = -1e9;
};

} // namespace il
