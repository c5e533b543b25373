#include "PresetRecipe.h"

#include "NumberText.h"
#include "Optimizer.h"
#include "TaskType.h"

#include <QStringList>

#include <stdexcept>

namespace il::tasks {

QString PresetRecipe::flags() const
{
    QStringList f;
    if (*optimizer) f << "--optimizer" << optimizer;
    if (std::isfinite(lr)) f << "--lr" << QString::fromStdString(formatGeneral(lr));
    if (batch > 0) f << "--batch" << QString::number(batch);
    if (epochs > 0) f << "--epochs" << QString::number(epochs);
    if (std::isfinite(weightDecay))
        f << "--weight-decay" << QString::fromStdString(formatGeneral(weightDecay));
    if (std::isfinite(labelSmoothing))
        f << "--label-smoothing" << QString::fromStdString(formatGeneral(labelSmoothing));
    return f.join(' ');
}

QString PresetRecipe::describe() const
{
    QStringList d;
    if (*optimizer) d << optimizer;
    if (std::isfinite(lr)) d << "learning rate " + QString::fromStdString(formatGeneral(lr));
    if (batch > 0) d << "batch " + QString::number(batch);
    if (epochs > 0) d << QString::number(epochs) + (epochs == 1 ? " epoch" : " epochs");
    if (std::isfinite(weightDecay))
        d << "weight decay " + QString::fromStdString(formatGeneral(weightDecay));
    if (std::isfinite(labelSmoothing))
        d << "label smoothing " + QString::fromStdString(formatGeneral(labelSmoothing));
    return d.join(", ");
}

void PresetRecipe::applyTo(TrainerConfig& config) const
{
    if (*optimizer) {
        const OptimizerType* type = findOptimizer(optimizer);
        if (!type) throw std::logic_error(std::string("preset recipe: no optimizer ") + optimizer);
        if (type != &config.optimizer.type()) config.optimizer = config.optimizer.switchedTo(*type);
    }
    if (std::isfinite(lr)) config.schedule.lrMax = lr;
    if (batch > 0) config.batchSize = batch;
    if (epochs > 0) {
        config.epochs = epochs;
        config.steps = 0;
    }
    if (std::isfinite(weightDecay)) config.optimizer.set("weight_decay", weightDecay);
    if (std::isfinite(labelSmoothing)) config.labelSmoothing = labelSmoothing;
}

void PresetRecipe::restore(TrainerConfig& config, const TrainerConfig& defaults) const
{
    if (*optimizer && &defaults.optimizer.type() != &config.optimizer.type())
        config.optimizer = config.optimizer.switchedTo(defaults.optimizer.type());
    if (std::isfinite(lr)) config.schedule.lrMax = defaults.schedule.lrMax;
    if (batch > 0) config.batchSize = defaults.batchSize;
    if (epochs > 0) {
        config.epochs = defaults.epochs;
        config.steps = defaults.steps;
    }
    if (std::isfinite(weightDecay) && defaults.optimizer.has("weight_decay") &&
        config.optimizer.has("weight_decay"))
        config.optimizer.set("weight_decay", defaults.optimizer.value("weight_decay"));
    if (std::isfinite(labelSmoothing)) config.labelSmoothing = defaults.labelSmoothing;
}

std::optional<PresetRecipe> presetRecipe(const TaskType& type, const QString& preset)
{
    for (const LayerPreset& p : type.presets())
        if (p.name == preset) return p.recipe;
    return std::nullopt;
}

} // namespace il::tasks
