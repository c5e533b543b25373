#include "Optimizer.h"
#include "Errors.h"

#include <algorithm>

#include <cmath>
#include <numbers>

namespace il {

double learningRate(const ScheduleConfig& s, int64_t step, int64_t totalSteps)
{
    double lr = s.lrMax;
    switch (s.kind) {
    case ScheduleKind::Constant:
        break;
    case ScheduleKind::StepDecay:
        lr = s.lrMax * std::pow(static_cast<double>(s.gamma),
                                static_cast<double>(step / std::max<int64_t>(1, s.stepEvery)));
        break;
    case ScheduleKind::Cosine: {
        const double t = std::clamp(static_cast<double>(step), 0.0,
                                    static_cast<double>(std::max<int64_t>(totalSteps, 1)));
        const double T = static_cast<double>(std::max<int64_t>(totalSteps, 1));
        lr = s.lrMin + (s.lrMax - s.lrMin) * 0.5 * (1.0 + std::cos(std::numbers::pi * t / T));
        break;
    }
    }
    if (s.warmupSteps > 0 && step < s.warmupSteps)
        lr *= static_cast<double>(step + 1) / static_cast<double>(s.warmupSteps);
    return lr;
}

void OptimizerUpdate::run(OptimizerRule rule, std::initializer_list<float> values,
                          std::span<const Tensor> slots) const
{
    size_t expected = 0;
    visitOptimizerRule(rule, [&]<class Rule>() { expected = Rule::kValues; });
    if (values.size() != expected)
        throw EngineError(config.name() + ": its update rule takes " + std::to_string(expected) +
                          " values, " + std::to_string(values.size()) + " given");
    OptimizerHyper h;
    h.lr = lr;
    h.step = step;
    std::copy(values.begin(), values.end(), h.values);
    backend.optimizerStep(rule, h, params, grads, slots, guard);
}

const OptimizerSetting* OptimizerType::setting(std::string_view key) const
{
    for (const OptimizerSetting& s : settings)
        if (key == s.key) return &s;
    return nullptr;
}

const OptimizerType* findOptimizer(std::string_view name)
{
    for (const OptimizerType& t : optimizerTypes()) {
        if (name == t.name) return &t;
        for (const std::string& alias : t.aliases)
            if (name == alias) return &t;
    }
    return nullptr;
}

std::string optimizerNameList()
{
    const auto& types = optimizerTypes();
    std::string list;
    for (size_t i = 0; i < types.size(); ++i)
        list += (i == 0 ? "" : i + 1 == types.size() ? " or " : ", ") + std::string(types[i].name);
    return list;
}

OptimizerConfig::OptimizerConfig() : OptimizerConfig(*findOptimizer("adam")) {}

OptimizerConfig::OptimizerConfig(const OptimizerType& type) : m_type(&type)
{
    for (const OptimizerSetting& s : type.settings)
        m_values.push_back(s.defaultValue);
    for (const ParameterGroupType& g : parameterGroupTypes()) {
        GroupSettings settings{g.name, g.lr, {}};
        for (const auto& [key, value] : g.settings)
            settings.overrides.emplace_back(key, value);
        m_groups.push_back(std::move(settings));
    }
}

OptimizerConfig OptimizerConfig::named(std::string_view name)
{
    const OptimizerType* type = findOptimizer(name);
    if (!type)
        throw EngineError("unknown optimizer \"" + std::string(name) +
                          "\" (known: " + optimizerNameList() + ")");
    return OptimizerConfig(*type);
}

float OptimizerConfig::value(std::string_view key) const
{
    for (size_t i = 0; i < m_type->settings.size(); ++i)
        if (key == m_type->settings[i].key) return m_values[i];
    throw EngineError(std::string(m_type->name) + " has no setting \"" + std::string(key) + "\"");
}

void OptimizerConfig::set(std::string_view key, float v)
{
    for (size_t i = 0; i < m_type->settings.size(); ++i) {
        const OptimizerSetting& s = m_type->settings[i];
        if (key != s.key) continue;
        if (!(v >= s.min && v <= s.max))
            throw EngineError(std::string(m_type->name) + ": " + s.key + " must be between " +
                              std::to_string(s.min) + " and " + std::to_string(s.max));
        m_values[i] = v;
        return;
    }
    throw EngineError(std::string(m_type->name) + " has no setting \"" + std::string(key) + "\"");
}

OptimizerConfig OptimizerConfig::switchedTo(const OptimizerType& type) const
{
    OptimizerConfig c(type);
    for (size_t i = 0; i < m_type->settings.size(); ++i) {
        const OptimizerSetting& s = m_type->settings[i];
        const OptimizerSetting* there = type.setting(s.key);
        // The same key with another help text is another quantity (OptimizerSetting::help).
        const bool sameMeaning = there && std::string_view(there->help) == s.help;
        if (sameMeaning && m_values[i] != s.defaultValue && m_values[i] >= there->min &&
            m_values[i] <= there->max)
            c.set(s.key, m_values[i]);
    }
    c.m_groups = m_groups;
    return c;
}

const ParameterGroupType* findParameterGroup(std::string_view name)
{
    for (const ParameterGroupType& g : parameterGroupTypes())
        if (name == g.name) return &g;
    return nullptr;
}

GroupSettings& OptimizerConfig::groupRef(std::string_view name)
{
    for (GroupSettings& g : m_groups)
        if (g.group == name) return g;
    throw EngineError("no parameter group is called \"" + std::string(name) + "\"");
}

const GroupSettings& OptimizerConfig::group(std::string_view name) const
{
    return const_cast<OptimizerConfig*>(this)->groupRef(name);
}

void OptimizerConfig::setGroupLr(std::string_view name, float lr)
{
    GroupSettings& g = groupRef(name);
    if (!(lr >= 0.f && std::isfinite(lr)))
        throw EngineError(g.group + ": the learning rate must be 0 (the run's) or more");
    g.lr = lr;
}

void OptimizerConfig::setGroupSetting(std::string_view name, std::string_view key, float v)
{
    GroupSettings& g = groupRef(name);
    const OptimizerSetting* setting = nullptr;
    for (const OptimizerType& t : optimizerTypes())
        if (!setting) setting = t.setting(key);
    if (!setting)
        throw EngineError(g.group + ": no optimizer has a setting \"" + std::string(key) + "\"");
    if (!(v >= setting->min && v <= setting->max))
        throw EngineError(g.group + ": " + setting->key + " must be between " +
                          std::to_string(setting->min) + " and " + std::to_string(setting->max));
    for (auto& [k, value] : g.overrides)
        if (k == key) {
            value = v;
            return;
        }
    g.overrides.emplace_back(key, v);
}

OptimizerConfig OptimizerConfig::forGroup(std::string_view name) const
{
    OptimizerConfig c = *this;
    if (name.empty()) return c;
    for (const auto& [key, value] : group(name).overrides)
        if (c.has(key)) c.set(key, value);
    return c;
}

float OptimizerConfig::groupLr(std::string_view name, float runLr) const
{
    if (name.empty()) return runLr;
    const float own = group(name).lr;
    return own > 0.f ? own : runLr;
}

Optimizer::Optimizer(Backend& backend, const OptimizerConfig& config,
                     std::vector<ParameterRange> ranges)
    : m_backend(backend), m_config(config)
{
    for (const ParameterRange& r : ranges) {
        if (r.offset != m_count || r.count < 0)
            throw EngineError("optimizer: the parameter ranges must follow each other from 0");
        m_count += r.count;
    }
    const auto n = static_cast<size_t>(m_count);
    for (size_t i = 0; i < config.type().state.size(); ++i)
        m_buffers.emplace_back(&backend, n);
    for (const Buffer& b : m_buffers)
        m_views.push_back(b.view(1, m_count));
    for (const ParameterRange& r : ranges) {
        OptimizerConfig own = config.forGroup(r.group);
        const float ownLr = r.group.empty() ? 0.f : config.group(r.group).lr;
        if (r.count == 0) continue;
        if (!m_spans.empty() && m_spans.back().config == own && m_spans.back().ownLr == ownLr) {
            m_spans.back().count += r.count; // the same settings: one update
            continue;
        }
        m_spans.push_back({r.offset, r.count, std::move(own), ownLr, {}});
    }
    for (Span& s : m_spans)
        for (const Buffer& b : m_buffers)
            s.state.push_back(b.view(1, s.count, static_cast<size_t>(s.offset)));
    reset();
}

Optimizer::Optimizer(Backend& backend, const OptimizerConfig& config, int64_t parameterCount)
    : Optimizer(backend, config, std::vector<ParameterRange>{{"", 0, parameterCount}})
{
}

void Optimizer::reset()
{
    for (const Tensor& t : m_views)
        m_backend.fill(t, 0.f);
}

void Optimizer::step(Tensor params, ConstTensor grads, float lr, float peakLr, int64_t step,
                     const float* guard)
{
    if (params.size() != m_count)
        throw ShapeError("optimizer: " + std::to_string(params.size()) + " parameters, state for " +
                         std::to_string(m_count));
    if (grads.size() != m_count)
        throw ShapeError("optimizer: " + std::to_string(grads.size()) + " gradients for " +
                         std::to_string(m_count) + " parameters");
    const float schedule = peakLr > 0.f ? lr / peakLr : 1.f;
    for (const Span& s : m_spans) {
        const Tensor p{params.data + s.offset, {1, s.count}};
        const ConstTensor g{grads.data + s.offset, {1, s.count}};
        const float spanLr = s.ownLr > 0.f ? s.ownLr * schedule : lr;
        s.config.type().update(
            OptimizerUpdate{m_backend, s.config, p, g, s.state, spanLr, step, guard});
    }
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const
{
    std::vector<std::pair<std::string, Tensor>> named;
    for (size_t i = 0; i < m_views.size(); ++i)
        named.emplace_back("optimizer." + std::string(m_config.type().state[i]), m_views[i]);
    return named;
}

std::string scheduleName(ScheduleKind k)
{
    switch (k) {
    case ScheduleKind::Constant:
        return "constant";
    case ScheduleKind::StepDecay:
        return "step";
    case ScheduleKind::Cosine:
        return "cosine";
    }
    return "?";
}

bool parseSchedule(const std::string& s, ScheduleKind& k)
{
    if (s == "constant")
        k = ScheduleKind::Constant;
    else if (s == "step")
        k = ScheduleKind::StepDecay;
    else if (s == "cosine")
        k = ScheduleKind::Cosine;
    else
        return false;
    return true;
}

std::string lossName(LossKind k)
{
    switch (k) {
    case LossKind::MSE:
        return "mse";
    case LossKind::MAE:
        return "mae";
    case LossKind::BinaryCrossEntropy:
        return "bce";
    case LossKind::CrossEntropy:
        return "cross-entropy";
    }
    return "?";
}

bool parseLoss(const std::string& s, LossKind& k)
{
    if (s == "mse")
        k = LossKind::MSE;
    else if (s == "mae")
        k = LossKind::MAE;
    else if (s == "bce" || s == "binary-cross-entropy")
        k = LossKind::BinaryCrossEntropy;
    else if (s == "cross-entropy" || s == "ce" || s == "crossentropy")
        k = LossKind::CrossEntropy;
    else
        return false;
    return true;
}

} // namespace il
