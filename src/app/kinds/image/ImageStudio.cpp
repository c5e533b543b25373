#include "StudioKind.h"

#include "ImageDataPage.h"
#include "ImageModelState.h"
#include "ImageOutputPage.h"
#include "ImageTask.h"

namespace il::app {

const StudioKind& imageStudioKind()
{
    // The studio trains a picture at 256 px on its longer side, where the CLI's --image-size
    // defaults to 512: a first run should show its picture at once. On the camera sample with
    // the hash grid, 256 px is at 37 dB after 128 steps where 512 px is at 26 dB after 83 and
    // 29 dB after 239 (CLI, 1 thread, 2-core EPYC), and a loaded 2-core machine may manage only
    // a few steps a second.
    static const StudioKindOf<ImageDataPage, ImageOutputPage> kind(
        tasks::imageTaskType(), "imageOutputPage",
        {.picture = imagePicture, .studioSettings = {{tasks::kImageSizeSetting, 256}}});
    return kind;
}

} // namespace il::app
