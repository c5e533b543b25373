// Hyperparameters and training state as JSON: stored in model files and reused by the CLI
// (config files, --json output) and the GUI (presets, the run panel).
//
// Numbers: NaN is null and infinities are the strings "Infinity" and "-Infinity" (JSON has
// neither). Doubles are written shortest-round-trip, so a loss history reads back bit for bit.
// A seed above 2^53 (beyond what a JSON number holds exactly) is written as a decimal string.
#pragma once

#include "Trainer.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace il::io {

// Keys are snake_case field names; optimizer and schedule are nested objects with a "kind"
// name (OptimizerType::name, scheduleName), loss a name (lossName). The optimizer object holds
// the settings its OptimizerType describes, under their keys, and "groups": for each parameter
// group (ParameterGroupType), {"lr": its peak (0: the run's), the settings it overrides}.
QJsonObject trainerConfigToJson(const TrainerConfig& config);
// Reads the keys present in json over the values already in config, so a partial object
// overrides defaults. Unknown keys are ignored (files from newer builds); a key with the wrong
// type or an unknown name fails with a one-line message naming it, leaving config unchanged.
bool trainerConfigFromJson(const QJsonObject& json, TrainerConfig& config, QString* error);

// History rows are arrays [step, epoch, train_loss, val_loss, lr, metric]; a bucket of a long
// run's evaluations (TrainingHistory.h) appends [count, first_step, train_min, train_max,
// val_min, val_max]. Reading merges rows beyond the history's limit (older files kept every
// evaluation), so what a file holds never grows the history past its bound.
QJsonObject trainingStateToJson(const TrainingState& state);
bool trainingStateFromJson(const QJsonObject& json, TrainingState& state, QString* error);

// A double as JSON (NaN -> null, +-inf -> "Infinity"/"-Infinity") and back; fromJson accepts
// exactly what toJson writes, returning false for anything else.
QJsonValue doubleToJson(double v);
bool doubleFromJson(const QJsonValue& v, double& out);

} // namespace il::io
