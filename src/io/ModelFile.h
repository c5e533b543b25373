// The Iron Learn model file: one .safetensors file holding everything needed to predict with
// a model and to continue training it exactly where it stopped.
//
// Tensors (F32):
//   the network's named tensors, "layers.0.weight", "layers.0.bias", ... as PyTorch names the
//   modules of a `self.layers = nn.Sequential(...)` (dense weights out x in like nn.Linear,
//   biases 1-D), so load_state_dict(strict=True) takes the "layers.*" tensors of an MLP as
//   they are; fixed tensors (the Fourier projection) are stored too. "optimizer.m",
//   "optimizer.v" or "optimizer.velocity": the optimizer state, flat, in the layout of
//   Network::parameters().
// Metadata (all strings; structured values are compact JSON):
//   format "ironlearn", format_version "1", architecture {spec, input_width, output_width,
//   vocab, parameters, layers: [{index, spec, output_width, parameters}]}, task (the caller's
//   object), hyperparameters (trainerConfigToJson), training (trainingStateToJson),
//   optimizer ("adam"...), created_by ("Iron Learn Studio 0.1.0").
#pragma once

#include "ModelJson.h"
#include "SafeTensors.h"

#include "Network.h"

#include <QJsonObject>
#include <QString>

#include <memory>
#include <string>
#include <vector>

namespace il::io {

// The version this build writes and the newest it reads. Bump it when an older build would
// misread a newer file (not for added optional fields, which older builds ignore).
inline constexpr int kModelFormatVersion = 1;

// What a model file says about itself: everything but the tensors.
struct ModelInfo {
    int formatVersion = kModelFormatVersion;
    QString createdBy;
    std::string spec; // the layer spec, e.g. "dense:16,tanh,dense:1"
    int64_t inputWidth = 0;
    int64_t outputWidth = 0;
    int64_t vocab = 0;        // embedding vocabulary, 0 if none
    QJsonObject architecture; // as stored, including the per-layer summary
    QJsonObject task;         // opaque to io: task kind, normalisation, class names...
    TrainerConfig config;
    TrainingState state;
    QString optimizer; // OptimizerType::name of the optimizer the state tensors belong to
};

struct LoadedModel {
    ModelInfo info;
    // Built on the backend given to openModel, every tensor uploaded. Ready to predict, or to
    // train further with info.config and info.state.
    std::unique_ptr<Network> network;
    // The "optimizer.*" tensors, host side, for restoreOptimizer (empty if none were saved).
    std::vector<StoredTensor> optimizerState;
};

// Saves network weights, optimizer state (if optimizer is not null), hyperparameters, training
// state and task atomically: on failure an existing file at path is left untouched. Returns
// false with a one-line message in *error (if not null).
bool saveModel(const QString& path, const Network& network, const Optimizer* optimizer,
               const TrainerConfig& config, const TrainingState& state, const QJsonObject& task,
               QString* error);

// Opens a model file: checks the format and version, the hyperparameters against the ranges
// the CLI's options accept (configRange, the optimizer registry), that every weight and
// optimizer state value is finite (and Adam's v not negative), builds the network from its
// architecture on backend, checks that every tensor the architecture needs is in the file with
// the right shape (and nothing else is), and uploads them. Returns null with a one-line message
// naming the file and the field or tensor at fault (file text in it shown by io::printable).
std::unique_ptr<LoadedModel> openModel(const QString& path, Backend& backend, QString* error);

// Reads only the header: what the model is, how it was trained, without loading its weights.
bool readModelInfo(const QString& path, ModelInfo& info, QString* error);

// Puts the saved optimizer state into optimizer (built on backend with the same kind and the
// network's parameterCount()). Fails, changing nothing, if the file holds state for another
// optimizer or none at all; the caller then continues with fresh state and tells the user.
// (backend: the optimizer's; Optimizer does not expose it, and model.network may have been
// moved out by then.)
bool restoreOptimizer(const LoadedModel& model, Backend& backend, Optimizer& optimizer,
                      QString* error);

// "Iron Learn Studio 0.1.0"
QString createdByString();

} // namespace il::io
