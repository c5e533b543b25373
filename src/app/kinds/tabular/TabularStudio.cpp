#include "StudioKind.h"

#include "TableDataPage.h"
#include "TableOutputPage.h"
#include "TabularTask.h"

namespace il::app {

const StudioKind& tabularStudioKind()
{
    static const StudioKindOf<TableDataPage, TableOutputPage> kind(tasks::tabularTaskType(),
                                                                   "tableOutputPage");
    return kind;
}

} // namespace il::app
