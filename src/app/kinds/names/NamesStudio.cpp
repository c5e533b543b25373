#include "StudioKind.h"

#include <QPushButton>

#include "NamesDataPage.h"
#include "NamesOutputPage.h"
#include "NamesTask.h"

namespace il::app {

const StudioKind& namesStudioKind()
{
    static const StudioKindOf<NamesDataPage, NamesOutputPage> kind(
        tasks::namesTaskType(), "namesOutputPage",
        {.afterScriptedRun = [](QWidget* window) { // a few names in the screenshot
            if (auto* generate = window->findChild<QPushButton*>("generateButton"))
                generate->click();
        }});
    return kind;
}

} // namespace il::app
