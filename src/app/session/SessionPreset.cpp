// The training settings that come with a layer preset (tasks::PresetRecipe).
#include "Session.h"

#include "PresetRecipe.h"

namespace il::app {

QString Session::applyPresetRecipe(const QString& preset)
{
    if (!m_task || m_runState != RunState::Idle) return {};
    const std::optional<tasks::PresetRecipe> recipe = tasks::presetRecipe(m_task->type(), preset);
    const std::optional<tasks::PresetRecipe> last =
        tasks::presetRecipe(m_task->type(), m_recipePreset);
    if (!recipe && !last) return {};
    QString said;
    if (recipe) {
        said = QString("The %1 preset trains with %2 (%3). The Training tab shows them; change "
                       "any there.")
                   .arg(preset, recipe->describe(), QString::fromUtf8(recipe->why));
        // The figure needs the data as it was measured: the setting (the Data tab's, such as the
        // names' context) goes with the preset while the data options can change.
        const tasks::TaskType& type = m_task->type();
        const QString& name = recipe->setting;
        QString label;
        for (const tasks::KindSetting& s : type.settings())
            if (s.name == name) label = s.label;
        const int before = label.isEmpty() ? 0 : type.setting(m_options, name);
        if (!label.isEmpty() && before != recipe->settingValue) {
            tasks::TaskOptions options = m_options;
            options.settings[name] = recipe->settingValue;
            if (!hasTrained() && setTaskOptions(options)) { // keeps the settings
                said += QString(" The %1 is now %2 (the Data tab), as measured; it was %3.")
                            .arg(label)
                            .arg(recipe->settingValue)
                            .arg(before);
            } else {
                said += QString(" Its figure needs a %1 of %2 (the Data tab, after Reset weights; "
                                "now %3).")
                            .arg(label)
                            .arg(recipe->settingValue)
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
