// Training settings a layer preset carries (LayerPreset::recipe, set beside the preset by its
// kind): the optimizer, rate, batch, epochs, weight decay and
// label smoothing with which the preset's measured result was reached. `train --preset NAME`
// starts from them instead of the task's defaults; an option given on the command line still
// wins, and a resumed model keeps its own settings.
#pragma once

#include "Trainer.h"

#include <QString>

#include <cmath>
#include <optional>

namespace il::tasks {

struct PresetRecipe {
    const char* optimizer = "";
    float lr = NAN;
    int64_t batch = 0;
    int64_t epochs = 0;
    float weightDecay = NAN;
    float labelSmoothing = NAN;
    const char* why = ""; // where the recipe's figure was measured
    // A setting of the kind's data it was measured at (KindSetting: the names' "context", 8), or
    // none (""): the studio sets it with the preset while the data may still change; the CLI
    // leaves it to its option.
    QString setting;
    int settingValue = 0;

    // "--optimizer adamw --lr 0.001 --batch 32 --epochs 25 --weight-decay 0.05
    // --label-smoothing 0": the options that set the same.
    QString flags() const;
    // "adamw, learning rate 0.001, batch 32, 25 epochs, weight decay 0.05, label smoothing 0":
    // the same in words, for the studio.
    QString describe() const;
    // Sets config's fields from the recipe (the budget: epochs, no step limit).
    void applyTo(TrainerConfig& config) const;
    // Puts back, from `defaults`, each field the recipe sets: another preset's recipe no
    // longer applies.
    void restore(TrainerConfig& config, const TrainerConfig& defaults) const;
};

class TaskType;

// The recipe of a kind's preset (LayerPreset::recipe), or none when the preset has none (the
// task's defaults) or the kind has no such preset.
std::optional<PresetRecipe> presetRecipe(const TaskType& type, const QString& preset);

} // namespace il::tasks
