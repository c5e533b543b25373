// The optimizers, each described once (Optimizer.h, OptimizerType). To add one, add an entry
// here; the model files, the CLI's options and help and the studio's list follow from it.
// Each update runs an update rule of OptimizerMath.h, which holds the arithmetic for every
// backend; an optimizer with new maths adds its rule there. The parameter groups, whose
// parameters train with settings of their own, are described here too.
#include "Optimizer.h"

namespace il {

namespace {

constexpr OptimizerSetting weightDecay(const char* help, float defaultValue = 0.f)
{
    return {"weight_decay", "Weight decay", help, defaultValue, 0.f, 10.f};
}

constexpr const char* kL2Help = "L2 penalty: adds weight_decay * w to every gradient.";

// w -= lr * (g + wd * w), or with momentum mu: v = mu * v + g + wd * w;  w -= lr * v.
// Momentum 0 is plain SGD: the velocity is neither read nor written.
void sgdUpdate(const OptimizerUpdate& u, float momentum)
{
    const float wd = u.config.value("weight_decay");
    if (momentum == 0.f)
        u.run(OptimizerRule::Sgd, {wd}, {});
    else
        u.run(OptimizerRule::Momentum, {momentum, wd, 0.f}, u.state); // 0: not Nesterov
}

void adamUpdate(const OptimizerUpdate& u, bool decoupled)
{
    u.run(OptimizerRule::Adam,
          {u.config.value("beta1"), u.config.value("beta2"), u.config.value("eps"),
           u.config.value("weight_decay"), decoupled ? 1.f : 0.f},
          u.state);
}

// ε is above 0: a weight whose gradient has always been 0 has m = v = 0, and with ε = 0 its
// step would be 0 / 0 (NaN). 1e-30 leaves room for the hash grid's 1e-15.
constexpr float kMinEps = 1e-30f;

std::vector<OptimizerSetting> adamSettings(OptimizerSetting decay)
{
    return {{"beta1", "β₁", "Decay of the running mean of gradients (m).", 0.9f, 0.f, 0.9999f},
            {"beta2", "β₂", "Decay of the running mean of squared gradients (v).", 0.999f, 0.f,
             0.999999f},
            {"eps", "ε", "Added to √v̂ so a tiny v cannot blow a step up.", 1e-8f, kMinEps, 1.f},
            decay};
}

std::vector<OptimizerType> makeTypes()
{
    return {
        {"sgd",
         {},
         "SGD",
         "Stochastic gradient descent: w ← w − lr·g.",
         {weightDecay(kL2Help)},
         {},
         [](const OptimizerUpdate& u) { sgdUpdate(u, 0.f); },
         {}},
        {"momentum",
         {"sgd-momentum"},
         "SGD with momentum",
         "Keeps a running direction: v ← μ·v + g, w ← w − lr·v.",
         {{"momentum", "Momentum", "How much of the previous direction each step keeps (μ).", 0.9f,
           0.f, 0.9999f},
          weightDecay(kL2Help)},
         {"velocity"},
         [](const OptimizerUpdate& u) { sgdUpdate(u, u.config.value("momentum")); },
         {}},
        {"adam",
         {},
         "Adam",
         "Scales each weight's step by its recent gradient size: w ← w − lr·m̂ / (√v̂ + ε).",
         adamSettings(weightDecay(kL2Help)),
         {"m", "v"},
         [](const OptimizerUpdate& u) { adamUpdate(u, false); },
         {"v"}},
        {"adamw",
         {},
         "AdamW",
         "Adam with decoupled weight decay: w ← w·(1 − lr·λ) before Adam's step.",
         adamSettings(weightDecay("Decoupled decay: shrinks every weight by lr * weight_decay "
                                  "of itself each step.",
                                  0.01f)),
         {"m", "v"},
         [](const OptimizerUpdate& u) { adamUpdate(u, true); },
         {"v"}},
        {"rmsprop",
         {},
         "RMSprop",
         "Divides each weight's step by its recent gradient size: v ← ρ·v + (1 − ρ)·g², "
         "w ← w − lr·g / (√v + ε).",
         {{"rho", "ρ", "Decay of the running mean of squared gradients (v).", 0.99f, 0.f,
           0.999999f},
          {"eps", "ε", "Added to √v so a tiny v cannot blow a step up.", 1e-8f, kMinEps, 1.f},
          weightDecay(kL2Help)},
         {"v"},
         [](const OptimizerUpdate& u) {
             u.run(OptimizerRule::RmsProp,
                   {u.config.value("rho"), u.config.value("eps"), u.config.value("weight_decay")},
                   u.state);
         },
         {"v"}},
        {"adagrad",
         {},
         "Adagrad",
         "Divides each weight's step by the root of all its squared gradients so far: "
         "s ← s + g², w ← w − lr·g / (√s + ε). Rarely updated weights keep larger steps.",
         {{"eps", "ε", "Added to √s so a tiny s cannot blow a step up.", 1e-10f, kMinEps, 1.f},
          weightDecay(kL2Help)},
         {"sum"},
         [](const OptimizerUpdate& u) {
             u.run(OptimizerRule::Adagrad, {u.config.value("eps"), u.config.value("weight_decay")},
                   u.state);
         },
         {"sum"}},
    };
}

// Parameter groups (Optimizer.h, ParameterGroupType).
std::vector<ParameterGroupType> makeGroups()
{
    return {
        // Instant NGP (Müller et al. 2022, section 4): Adam with β₂ 0.99 and ε 1e-15 for the
        // hash tables (a row read by few points gets a step of about lr, not one that ε
        // shrinks), and no weight decay on them. The lr was chosen on 8 kinds of picture at 256
        // px (packaging/bench/hashgrid_lr_sweep.sh; docs/benchmarks.md, Images): 5e-2 has the best
        // median
        // PSNR after 1500 steps (93 dB; the paper's 1e-2: 89), with the MLP at 2e-3; 2e-2 to
        // 1e-1 are within 2 dB. (The paper's 1e-2 goes with batches of 2^18 points; ours are
        // 4096 pixels.)
        {"grid_tables",
         "Hash-grid tables",
         "grid-lr",
         "Learning rate of the hash grid's tables (peak; follows the schedule).",
         5e-2f,
         {{"beta2", 0.99f}, {"eps", 1e-15f}, {"weight_decay", 0.f}}},
    };
}

} // namespace

const std::vector<OptimizerType>& optimizerTypes()
{
    static const std::vector<OptimizerType> types = makeTypes();
    return types;
}

const std::vector<ParameterGroupType>& parameterGroupTypes()
{
    static const std::vector<ParameterGroupType> groups = makeGroups();
    return groups;
}

} // namespace il
