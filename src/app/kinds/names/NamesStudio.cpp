#include "StudioKind.h"

#include "NamesDataPage.h"
#include "NamesOutputPage.h"
#include "NamesTask.h"

namespace il::app {

const StudioKind& namesStudioKind()
{
    static const StudioKindOf<NamesDataPage, NamesOutputPage> kind(tasks::namesTaskType(),
                                                                   "namesOutputPage");
    return kind;
}

} // namespace il::app
