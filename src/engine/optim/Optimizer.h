// Optimizers, learning-rate schedules and gradient clipping.
#pragma once

#include "Backend.h"

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace il {

enum class ScheduleKind { Constant, StepDecay, Cosine };

// lr(t) for step t of a run of T steps:
//   constant:  lr_max
//   step:      lr_max * gamma^floor(t / stepEvery)
//   cosine:    lr_min + (lr_max - lr_min) * 0.5 * (1 + cos(pi * t / T))
// With warm-up, the first warmupSteps steps ramp linearly from lr_max / warmupSteps to the
// scheduled value (so step 0 never runs at lr 0).
struct ScheduleConfig {
    ScheduleKind kind = ScheduleKind::Cosine;
    float lrMax = 1e-3f;
    float lrMin = 0.f;
    int64_t stepEvery = 1000;
    float gamma = 0.5f;
    int64_t warmupSteps = 0;
};

double learningRate(const ScheduleConfig& s, int64_t step, int64_t totalSteps);

// ---- The optimizer registry ------------------------------------------------------------
// Each optimizer is described once, in Optimizers.cpp: its name, what it does, its settings
// with their defaults and ranges, the state tensors it keeps and its update. The engine, the
// model files (ModelJson), the studio's optimizer list and the CLI's options and help all
// read these descriptions.

// One hyperparameter of an optimizer.
struct OptimizerSetting {
    const char* key;   // snake_case: the model file's key; the CLI option is the kebab-case form
    const char* label; // for people: "Weight decay"
    const char* help;  // one sentence: what it does in this optimizer
    float defaultValue;
    float min, max; // accepted values, inclusive
};

class OptimizerConfig;

// ---- Parameter groups ------------------------------------------------------------------
// Some parameters train best with settings of their own: Instant NGP trains a hash grid's
// tables at lr 1e-2 with Adam's β₂ 0.99 and ε 1e-15, without weight decay, while its MLP takes
// the run's settings. A layer puts such parameters in a named group (ParamSpec::group); each
// group is described once, here (Optimizers.cpp), with its defaults. Parameters in no group
// ("") take the run's settings.
struct ParameterGroupType {
    const char* name;     // "grid_tables": ParamSpec::group, the model file's key
    const char* label;    // "Hash-grid tables": the studio
    const char* lrOption; // "grid-lr": the CLI option that sets its learning rate
    const char* help;     // one sentence for the CLI's help and the studio's tooltip
    float lr;             // its default peak learning rate
    // Its defaults for optimizer settings (OptimizerSetting::key), used where the run's optimizer
    // has that setting; the others come from the run's optimizer.
    std::vector<std::pair<const char*, float>> settings;
};

const std::vector<ParameterGroupType>& parameterGroupTypes();
const ParameterGroupType* findParameterGroup(std::string_view name); // nullptr if unknown

// A group's settings in a run: its own peak learning rate (0: the run's) and the optimizer
// settings it overrides (any optimizer's keys; those the run's optimizer lacks are unused).
struct GroupSettings {
    std::string group;
    float lr = 0.f;
    std::vector<std::pair<std::string, float>> overrides;

    bool operator==(const GroupSettings&) const = default;
};

// A run of trainable parameters, in the network's flat arena, that share one group.
struct ParameterRange {
    std::string group; // "" for the run's settings
    int64_t offset = 0;
    int64_t count = 0;
};

// What one update works on. state holds the optimizer's tensors in the order of
// OptimizerType::state, each with the parameters' layout.
struct OptimizerUpdate {
    Backend& backend;
    const OptimizerConfig& config;
    Tensor params;
    ConstTensor grads;
    std::span<const Tensor> state;
    float lr;
    int64_t step;       // 1-based (Adam's bias correction)
    const float* guard; // Backend.h: scales the gradients, skips the update after a bad step

    // Runs the update rule (OptimizerMath.h) over all parameters: values are the rule's
    // hyperparameters in its order (EngineError if their count is not the rule's), slots the
    // state tensors it keeps.
    void run(OptimizerRule rule, std::initializer_list<float> values,
             std::span<const Tensor> slots) const;
};

struct OptimizerType {
    const char* name;                 // "adamw": the CLI, model files
    std::vector<std::string> aliases; // other names accepted for it
    const char* label;                // "AdamW": the studio
    const char* description;          // one or two sentences with the update rule
    std::vector<OptimizerSetting> settings;
    std::vector<const char*> state; // tensors kept between steps, saved as "optimizer.<name>"
    void (*update)(const OptimizerUpdate& u); // one step over all parameters, no allocation
    // State tensors that are never negative (running means of squared gradients): a model file
    // whose state says otherwise is refused, as the update would take their square root.
    std::vector<const char*> nonNegativeState;

    const OptimizerSetting* setting(std::string_view key) const; // nullptr if it has none
};

// Every optimizer, in the order shown to people.
const std::vector<OptimizerType>& optimizerTypes();
// By name or alias; nullptr if unknown.
const OptimizerType* findOptimizer(std::string_view name);
// "sgd, momentum, adam or adamw"
std::string optimizerNameList();

// An optimizer, the values of its settings and the parameter groups' settings. Equality
// compares all three, so two configs are the same exactly when they would train the same.
class OptimizerConfig {
public:
    OptimizerConfig();                                   // Adam with its defaults
    explicit OptimizerConfig(const OptimizerType& type); // type with its defaults
    // The named optimizer with its defaults; throws EngineError for an unknown name.
    static OptimizerConfig named(std::string_view name);

    const OptimizerType& type() const { return *m_type; }
    std::string name() const { return m_type->name; }
    bool has(std::string_view key) const { return m_type->setting(key) != nullptr; }
    // A setting's value; throws EngineError when the optimizer has no such setting.
    float value(std::string_view key) const;
    // Throws EngineError when the optimizer has no such setting or v is out of its range.
    void set(std::string_view key, float v);
    // The same settings on another optimizer: a setting both have keeps its value unless it
    // was left at this optimizer's default, in which case it takes the other's default (Adam's
    // weight decay 0 becomes SGD's 0, a chosen 0.05 stays). A setting that means something else
    // there takes the other's default: AdamW's decoupled weight decay is no L2 penalty (the
    // tables' AdamW decay 1 would be a crushing L2 penalty for Adam or SGD), so it does not
    // carry over to or from the optimizers whose weight decay adds to the gradient.
    // The settings of each group keep theirs.
    OptimizerConfig switchedTo(const OptimizerType& type) const;

    // Every registered group's settings (parameterGroupTypes() order), its defaults unless set.
    const std::vector<GroupSettings>& groups() const { return m_groups; }
    // The named group's settings; throws EngineError for an unknown group.
    const GroupSettings& group(std::string_view name) const;
    // Sets a group's peak learning rate (0: the run's); EngineError if the group is unknown or
    // lr is negative or not finite.
    void setGroupLr(std::string_view name, float lr);
    // Sets one optimizer setting of a group; EngineError if the group is unknown, no optimizer
    // has the key, or v is outside that setting's range.
    void setGroupSetting(std::string_view name, std::string_view key, float v);
    // The settings parameters of the group train with: this optimizer with the group's
    // overrides (those it has) applied. "" is this config.
    OptimizerConfig forGroup(std::string_view name) const;
    // The peak learning rate of a group, given the run's: its own, or the run's.
    float groupLr(std::string_view name, float runLr) const;

    bool operator==(const OptimizerConfig& other) const = default;

private:
    GroupSettings& groupRef(std::string_view name);

    const OptimizerType* m_type;
    std::vector<float> m_values; // in the order of m_type->settings
    std::vector<GroupSettings> m_groups;
};

// Owns the optimizer state (one flat buffer per state tensor, same layout as the parameters).
class Optimizer {
public:
    // Parameters in ranges (Network::parameterRanges: contiguous, in order, from offset 0),
    // each trained with its group's settings. Throws EngineError for an unknown group.
    Optimizer(Backend& backend, const OptimizerConfig& config, std::vector<ParameterRange> ranges);
    // parameterCount parameters in no group.
    Optimizer(Backend& backend, const OptimizerConfig& config, int64_t parameterCount);

    const OptimizerConfig& config() const { return m_config; }
    // One update of all parameters, one backend update per range of parameters that share
    // settings. lr: the run's learning rate at this step; peakLr: the run's configured peak
    // (the schedule's lr_max), so a group with a peak of its own steps at
    // its peak * lr / peakLr and follows the run's schedule, warm-up and lowered rates. step is
    // 1-based (Adam's bias correction). The guard block (Backend.h) scales gradients by its
    // clip factor and skips the update after a bad step.
    void step(Tensor params, ConstTensor grads, float lr, float peakLr, int64_t step,
              const float* guard);
    // State tensors for saving, named "optimizer.<state name>" (OptimizerType::state).
    std::vector<std::pair<std::string, Tensor>> state() const;
    void reset();

private:
    // Adjacent parameters that train with the same settings, and their state's views.
    struct Span {
        int64_t offset, count;
        OptimizerConfig config;
        float ownLr; // the group's peak learning rate, 0: the run's
        std::vector<Tensor> state;
    };

    Backend& m_backend;
    OptimizerConfig m_config;
    int64_t m_count = 0;
    std::vector<Buffer> m_buffers; // one per OptimizerType::state entry
    std::vector<Tensor> m_views;   // views of m_buffers, made once
    std::vector<Span> m_spans;
};

std::string scheduleName(ScheduleKind k);
bool parseSchedule(const std::string& s, ScheduleKind& k);
std::string lossName(LossKind k);
bool parseLoss(const std::string& s, LossKind& k);

} // namespace il
