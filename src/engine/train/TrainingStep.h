// One training step in backend memory, as Trainer.h draws it, and the small block of scalars
// the steps leave there. Internal to the engine: Trainer::run drives it.
//
//   gradients(): gather batch -> forward -> fused loss + dL/dy -> backward -> per-tensor
//                squared gradient norms (recorded once, replayed) -> guard (non-finite check,
//                clip factor)
//   update():    optimizer step, skipped on the device after a bad step
//   read():      the one host copy: the summed loss and the guard slots
#pragma once

#include "Trainer.h"

#include <map>
#include <string>
#include <vector>

namespace il {

class TrainingStep {
public:
    // Allocates everything the steps need for batches of `batch` rows: nothing allocates after.
    TrainingStep(Network& net, Optimizer& optimizer, const TrainerConfig& config, bool recordSteps,
                 const TrainingData& data, int64_t batch);
    ~TrainingStep(); // drops the recorded steps: they point at the buffers below
    TrainingStep(const TrainingStep&) = delete;
    TrainingStep& operator=(const TrainingStep&) = delete;

    // Makes the row order of an epoch on the backend from one key: no copy per epoch.
    void loadEpochOrder(int64_t epoch);
    // Gradients of batch stepInEpoch, then the guard. step counts the steps done before this
    // one; record: whether this step may be recorded (not the first of a call, which sizes
    // every workspace).
    void gradients(int64_t stepInEpoch, int64_t step, bool record);
    void update(float lr, int64_t step);

    // Downloads the scalars. Returns false if the guard saw a non-finite value; otherwise
    // returns the loss summed since the last read in lossSum and clears it on the backend.
    bool read(double& lossSum);
    // The run's class weights in backend memory (TrainerConfig::classWeights, uploaded once);
    // empty when the loss is unweighted.
    ConstTensor classWeights() const { return m_classWeightsT; }

    // After read() returned false: the step that went bad (its update and later ones were
    // skipped), and what went bad, in words.
    int64_t badStep() const;
    std::string describeFailure() const;

private:
    // Forward, loss, backward and norms: the same pointers and shapes every step (the batch is
    // gathered into one buffer), so a backend that records replays them.
    void forwardBackward(ConstTensor xb, ConstTensor yb, int64_t n);
    // The recorded step for batches of n rows, recording it if needed; -1: run directly.
    int recording(ConstTensor xb, ConstTensor yb, int64_t n);

    Network& m_net;
    Optimizer& m_opt;
    Backend& m_b;
    const TrainerConfig& m_config;
    const TrainingData& m_data;
    int64_t m_rows, m_batch, m_yCols;
    bool m_gather; // batches smaller than the data are gathered through m_order
    std::vector<NamedTensor> m_gradTensors;
    std::vector<ConstTensor> m_gradViews; // the same tensors, for sumSquaresEach
    int m_tensorCount;

    // Layout of the block of backend memory the steps write their scalars to.
    static constexpr int SlotLossSum = 0;  // sum of step losses since the last read
    static constexpr int SlotStepLoss = 1; // this step's loss
    static constexpr int SlotGuard = 2;    // GuardSlots floats (Backend.h)
    static constexpr int SlotNorms = 8;    // one squared gradient norm per trainable tensor
    static_assert(SlotGuard + GuardSlots <= SlotNorms);

    Buffer m_scalars;
    float* m_stepLoss;
    float* m_guard;
    float* m_norms;
    Tensor m_lossSum;
    ConstTensor m_stepLossT;
    Buffer m_batchX, m_batchY;
    IndexBuffer m_order;
    Buffer m_grad;               // dL/dy of a batch
    Buffer m_classWeights;       // 1 x classes, or nothing
    ConstTensor m_classWeightsT; // its view (empty: unweighted)
    Tensor m_params;
    ConstTensor m_grads;
    float m_readBack[SlotNorms]; // the scalar block up to the norms, as last read

    // Recorded steps (CUDA graphs), one per batch row count (a short last batch is another).
    bool m_record;
    std::map<int64_t, int> m_recordings;
    // Row counts run directly (not recorded) at least once: an epoch has at most two (full
    // batches and a short last one), reserved up front so that noting one allocates nothing.
    std::vector<int64_t> m_ranDirectly;
    int64_t m_recordedReserve = -1;
};

} // namespace il
