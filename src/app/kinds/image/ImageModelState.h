// What the studio's model is as an image model (ImageModelState.cpp): its task when the data is
// open, its geometry with or without it, and the picture it draws.
#pragma once

#include "ImageTask.h"
#include "ModelState.h"

#include <QImage>

namespace il::app {

// The model's image task; null without its data (or for another kind).
const tasks::ImageTask* imageTaskOf(const ModelState& m);
// Its geometry: the task's, or read once from the model file's task metadata without it (kept in
// ModelState::kindView); null for another kind.
const tasks::ImageGeometry* imageGeometryOf(ModelState& m);
// The current reconstruction with its longest side at most longestSide, or at the training size
// for 0 (exactly the training image when that fits): the image kind's StudioKindExtras::picture.
QImage imagePicture(ModelState& m, int longestSide);

} // namespace il::app
