#include "TrainingStep.h"
#include "Errors.h"
#include "RecordingStats.h"

#include <algorithm>
#include <mutex>
#include <numeric>

namespace il {

namespace {

std::mutex g_statsMutex;
RecordingStats g_stats;

void noteRecorded()
{
    std::lock_guard lock(g_statsMutex);
    ++g_stats.recorded;
}

void noteFallback(const char* why)
{
    std::lock_guard lock(g_statsMutex);
    ++g_stats.fellBack;
    g_stats.lastFailure = why;
}

std::string describeValue(float v)
{
    if (std::isnan(v)) return "NaN";
    return v > 0 ? "+Inf" : "-Inf";
}

} // namespace

RecordingStats recordingStats()
{
    std::lock_guard lock(g_statsMutex);
    return g_stats;
}

TrainingStep::TrainingStep(Network& net, Optimizer& optimizer, const TrainerConfig& config,
                           bool recordSteps, const TrainingData& data, int64_t batch)
    : m_net(net), m_opt(optimizer), m_b(net.backend()), m_config(config), m_data(data),
      m_rows(data.trainX.rows()), m_batch(batch),
      m_yCols(config.loss == LossKind::CrossEntropy ? 1 : net.outputWidth()),
      m_gather(batch < m_rows), m_gradTensors(net.namedGradients()),
      m_tensorCount(static_cast<int>(m_gradTensors.size())), m_record(recordSteps)
{
    Backend& b = m_b;
    m_scalars = Buffer(&b, static_cast<size_t>(SlotNorms + m_tensorCount));
    m_stepLoss = m_scalars.data() + SlotStepLoss;
    m_guard = m_scalars.data() + SlotGuard;
    m_norms = m_scalars.data() + SlotNorms;
    b.fill(m_scalars.view(1, static_cast<int64_t>(m_scalars.floats())), 0.f);
    const float guardInit[GuardSlots] = {1.f, 0.f, 0.f, 0.f, 0.f};
    b.upload(m_guard, guardInit, sizeof(guardInit));
    for (const NamedTensor& g : m_gradTensors)
        m_gradViews.push_back(g.tensor);
    m_ranDirectly.reserve(2);
    m_lossSum = m_scalars.view(1, 1, SlotLossSum);
    m_stepLossT = m_scalars.view(1, 1, SlotStepLoss);

    if (m_gather) {
        m_batchX = Buffer(&b, static_cast<size_t>(batch * data.trainX.cols()));
        m_batchY = Buffer(&b, static_cast<size_t>(batch * m_yCols));
        m_order = IndexBuffer(&b, static_cast<size_t>(m_rows));
        if (!config.shuffle) { // the same order every epoch: uploaded once
            std::vector<int32_t> identity(static_cast<size_t>(m_rows));
            std::iota(identity.begin(), identity.end(), 0);
            b.upload(m_order.data(), identity.data(), identity.size() * sizeof(int32_t));
        }
    }
    m_grad = Buffer(&b, static_cast<size_t>(batch * net.outputWidth()));
    if (!config.classWeights.empty()) { // once per run: the steps only read them
        const auto k = static_cast<int64_t>(config.classWeights.size());
        m_classWeights = Buffer(&b, static_cast<size_t>(k));
        b.upload(m_classWeights.view(1, k), config.classWeights.data());
        m_classWeightsT = m_classWeights.view(1, k);
    }
    m_net.reserve(batch);
    m_params = m_net.parameters();
    m_grads = m_net.gradients();
}

TrainingStep::~TrainingStep()
{
    m_b.discardRecordings();
}

void TrainingStep::loadEpochOrder(int64_t epoch)
{
    if (!m_gather || !m_config.shuffle) return;
    m_b.shuffledOrder(Rng::derive(m_config.seed, "shuffle", static_cast<uint64_t>(epoch)).next(),
                      m_rows, m_order.data());
}

void TrainingStep::gradients(int64_t stepInEpoch, int64_t step, bool record)
{
    const int64_t first = stepInEpoch * m_batch;
    const int64_t n = std::min(m_batch, m_rows - first);
    ConstTensor xb = m_data.trainX, yb = m_data.trainY;
    if (m_gather) {
        Tensor bx = m_batchX.view(n, m_data.trainX.cols());
        Tensor by = m_batchY.view(n, m_yCols);
        m_b.gatherRows(m_data.trainX, m_order.data(), first, bx);
        m_b.gatherRows(m_data.trainY, m_order.data(), first, by);
        xb = bx;
        yb = by;
    }
    const int handle = record && m_record ? recording(xb, yb, n) : -1;
    if (handle >= 0) {
        m_b.replay(handle);
    } else {
        forwardBackward(xb, yb, n);
        if (m_record && std::find(m_ranDirectly.begin(), m_ranDirectly.end(), n) ==
                                      m_ranDirectly.end())
            m_ranDirectly.push_back(n);
    }
    // The guard and the update take per-step host values (step, learning rate): run directly.
    m_b.guardAndClip(m_norms, m_tensorCount, m_stepLoss, m_config.clipNorm, step, m_guard);
}

void TrainingStep::update(float lr, int64_t step)
{
    m_opt.step(m_params, m_grads, lr, m_config.schedule.lrMax, step + 1, m_guard);
}

void TrainingStep::forwardBackward(ConstTensor xb, ConstTensor yb, int64_t n)
{
    Tensor out = m_net.forward(xb);
    Tensor g = m_grad.view(n, m_net.outputWidth());
    m_b.lossForwardBackward(m_config.loss, m_config.labelSmoothing, m_classWeightsT, out, yb, g,
                            m_stepLoss, false);
    m_b.axpby(1.f, m_stepLossT, 1.f, m_lossSum);
    m_net.backward(xb, g);
    m_b.sumSquaresEach(m_gradViews, m_norms);
}

int TrainingStep::recording(ConstTensor xb, ConstTensor yb, int64_t n)
{
    if (m_net.reservedRows() != m_recordedReserve) { // the activation buffers moved
        m_b.discardRecordings();
        m_recordings.clear();
        m_recordedReserve = m_net.reservedRows();
    }
    if (const auto it = m_recordings.find(n); it != m_recordings.end()) return it->second;
    // A row count is recorded only after it ran once directly: that run sizes what its ops
    // need (a short last batch meets its shapes here first), so the capture allocates nothing.
    if (std::find(m_ranDirectly.begin(), m_ranDirectly.end(), n) == m_ranDirectly.end()) return -1;
    if (!m_b.beginRecording()) {
        m_record = false; // this backend runs ops directly
        return -1;
    }
    try {
        forwardBackward(xb, yb, n);
        const int handle = m_b.endRecording();
        m_recordings.emplace(n, handle);
        noteRecorded();
        return handle;
    } catch (const BackendError& e) {
        // Could not record (say, a workspace had to grow): run directly, and count it (the run
        // stays correct but loses the recording's speed; the device check requires none).
        noteFallback(e.what());
        m_b.discardRecordings();
        m_recordings.clear();
        m_record = false;
        return -1;
    }
}

bool TrainingStep::read(double& lossSum)
{
    m_b.download(m_readBack, m_scalars.data(), sizeof(m_readBack));
    if (m_readBack[SlotGuard + GuardBad] != 0.f) return false;
    lossSum = m_readBack[SlotLossSum];
    m_b.fill(m_lossSum, 0.f);
    return true;
}

int64_t TrainingStep::badStep() const
{
    return guardStep(m_readBack + SlotGuard);
}

std::string TrainingStep::describeFailure() const
{
    // The first layer whose output (last forward) is not finite...
    const auto& layers = m_net.layers();
    for (size_t i = 0; i < layers.size(); ++i) {
        const auto out = m_b.toHost(m_net.layerOutput(static_cast<int>(i)));
        for (float v : out)
            if (!std::isfinite(v))
                return "the output of layer " + std::to_string(i + 1) + " \"" + layers[i]->spec() +
                       "\" became " + describeValue(v);
    }
    // ...otherwise the first gradient that is not, or the loss.
    const auto badTensor = static_cast<int>(m_readBack[SlotGuard + GuardBadTensor]);
    if (badTensor >= 0 && badTensor < m_tensorCount) {
        const int layer = m_net.layerOfTensor(badTensor);
        return "the gradient of " + m_gradTensors[static_cast<size_t>(badTensor)].name +
               " (layer " + std::to_string(layer + 1) + " \"" +
               layers[static_cast<size_t>(layer)]->spec() + "\") became NaN or Inf";
    }
    const float loss = m_readBack[SlotStepLoss];
    return std::string("the loss became ") +
           (std::isfinite(loss) ? std::string("NaN or Inf") : describeValue(loss));
}

} // namespace il
