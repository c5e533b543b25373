// The training settings that come with a layer preset (tasks::PresetRecipe).
#include "Session.h"

#include "PresetRecipe.h"

namespace il::app {

QString Session::applyPresetRecipe(const QString& preset)
{
    if (!m_task || m_runState != RunState::Idle) return {};
    const QString task = m_task->type().name();
    const tasks::PresetRecipe* recipe = tasks::presetRecipe(task, preset);
    const tasks::PresetRecipe* last = tasks::presetRecipe(task, m_recipePreset);
    if (!recipe && !last) return {};
    QString said;
    if (recipe) {
        said = QString("The %1 preset trains with %2 (%3). The Training tab shows them; change "
                       "any there.")
                   .arg(preset, recipe->describe(), QString::fromUtf8(recipe->why));
        // The figure needs the data as it was measured: the context (the Data tab's) goes with
        // the preset while the data options can change.
        if (recipe->context > 0 && m_options.context != recipe->context) {
            tasks::TaskOptions options = m_options;
            options.context = recipe->context;
            const int before = m_options.context;
            if (!hasTrained() && setTaskOptions(options)) { // keeps the settings
                said += QString(" The context is now %1 characters (the Data tab), as measured; "
                                "it was %2.")
                            .arg(recipe->context)
                            .arg(before);
            } else {
                said += QString(" Its figure needs a context of %1 characters (the Data tab, "
                                "after Reset weights; now %2).")
                            .arg(recipe->context)
                            .arg(before);
            }
        }
    } else {
        TrainerConfig defaults;
        m_task->applyDefaults(defaults);
        last->restore(m_config, defaults);
        said = QString("The %1 preset's training settings no longer apply: %2 are back to this "
                       "data's defaults.")
                   .arg(m_recipePreset, "the optimizer, learning rate, batch, budget, weight "
                                        "decay and label smoothing");
    }
    if (recipe) recipe->applyTo(m_config);
    m_recipePreset = recipe ? preset : QString();
    emit configChanged();
    emit recipeApplied();
    return said;
}

} // namespace il::app
