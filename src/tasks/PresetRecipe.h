// Training settings a layer preset carries: the optimizer, rate, batch, epochs, weight decay and
// label smoothing with which the preset's measured result was reached. `train --preset NAME`
// starts from them instead of the task's defaults; an option given on the command line still
// wins, and a resumed model keeps its own settings.
#pragma once

#include "Trainer.h"

#include <QString>

#include <cmath>

namespace il::tasks {

struct PresetRecipe {
    const char* task = "";   // TaskType::name()
    const char* preset = ""; // LayerPreset::name
    const char* optimizer = "";
    float lr = NAN;
    int64_t batch = 0;
    int64_t epochs = 0;
    float weightDecay = NAN;
    float labelSmoothing = NAN;
    const char* why = ""; // where the recipe's figure was measured

    // "--optimizer adamw --lr 0.001 --batch 32 --epochs 25 --weight-decay 0.05
    // --label-smoothing 0": the options that set the same.
    QString flags() const;
    // Sets config's fields from the recipe (the budget: epochs, no step limit).
    void applyTo(TrainerConfig& config) const;
};

// The recipe of a task's preset, or null when the preset has none (the task's defaults).
const PresetRecipe* presetRecipe(const QString& task, const QString& preset);

} // namespace il::tasks
