// The task metadata of older model files in today's form, for every reader of it: the tasks
// library (TabularSchema::fromJson) and the exports, which live below it (they cannot link the
// tasks library) yet must build from the same task the engine's commands read.
#pragma once

#include <QJsonObject>

namespace il::io {

// task with the fields older files wrote under other names brought to today's names, and the
// ones they left out filled in as their readers always did. Tables saved before one-hot
// features and several targets kept z-score statistics as feature_mean / feature_std and
// target_mean / target_std (regression), and had no feature_categories (numbers only) and no
// targets (the one target). Anything else is returned as it is. Nothing is checked here: the
// reader checks the result (sizes, ranges) as it would check a new file.
QJsonObject savedTaskInCurrentForm(const QJsonObject& task);

} // namespace il::io
