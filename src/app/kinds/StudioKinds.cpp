#include "StudioKind.h"

#include "Session.h"

#include <QTimer>

namespace il::app {

// The kinds, each defined in its folder: a new kind is a line here and one in the list.
const StudioKind& tabularStudioKind(); // tabular/TabularStudio.cpp
const StudioKind& imageStudioKind();   // image/ImageStudio.cpp
const StudioKind& namesStudioKind();   // names/NamesStudio.cpp

const std::vector<const StudioKind*>& studioKinds()
{
    static const std::vector<const StudioKind*> kinds = {&tabularStudioKind(), &imageStudioKind(),
                                                         &namesStudioKind()};
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
