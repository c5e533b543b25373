#include "StudioKind.h"

#include "ImageDataPage.h"
#include "ImageOutputPage.h"
#include "ImageTask.h"

namespace il::app {

const StudioKind& imageStudioKind()
{
    static const StudioKindOf<ImageDataPage, ImageOutputPage> kind(
        tasks::imageTaskType(), "imageOutputPage", {.drawsPictures = true});
    return kind;
}

} // namespace il::app
