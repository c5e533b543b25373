#include "StudioKind.h"

#include "Session.h"

#include "TaskType.h"

#include <QTimer>

#include <algorithm>

namespace il::app {

// The kinds, each defined in its folder (StudioKinds.inc is written by CMake from the folders'
// names).
#define IRONLEARN_STUDIO_KIND(kind) const StudioKind& kind##StudioKind();
#include "StudioKinds.inc"
#undef IRONLEARN_STUDIO_KIND

const std::vector<const StudioKind*>& studioKinds()
{
    static const std::vector<const StudioKind*> kinds = [] {
        std::vector<const StudioKind*> list{
#define IRONLEARN_STUDIO_KIND(kind) &kind##StudioKind(),
#include "StudioKinds.inc"
#undef IRONLEARN_STUDIO_KIND
        };
        // In the order of the task types.
        std::stable_sort(list.begin(), list.end(), [](const StudioKind* a, const StudioKind* b) {
            return a->type().order() < b->type().order();
        });
        return list;
    }();
    return kinds;
}

int studioKindIndex(const tasks::TaskType* type)
{
    const std::vector<const StudioKind*>& kinds = studioKinds();
    for (size_t i = 0; i < kinds.size(); ++i)
        if (&kinds[i]->type() == type) return static_cast<int>(i);
    return -1;
}

const StudioKind* studioKindOf(const tasks::TaskType* type)
{
    const int i = studioKindIndex(type);
    return i < 0 ? nullptr : studioKinds()[static_cast<size_t>(i)];
}

void StudioPage::setEditable(bool editable, const QString& why)
{
    for (QWidget* w : m_optionWidgets) {
        w->setEnabled(editable);
        w->setStatusTip(why);
    }
}

void StudioPage::reopenWith(Session* session, const tasks::TaskOptions& options)
{
    QTimer::singleShot(0, this, [this, session, options] {
        if (!session->setTaskOptions(options)) refresh();
    });
}

} // namespace il::app
