// One model in training, as the CLI and the studio both hold it: the backend it lives on, the
// task (its data, when open), the network, the optimizer, the configuration and training state,
// and the task's data uploaded to the backend.
//
// Create a model with build() (a fresh network for a layer spec) or open() (a model file, to
// use or to resume), attach data with attach(), choose the optimizer with makeOptimizer(), train
// with a Trainer over network, optimizer, config and state, and save(). moveTo() carries it to
// another backend; after a device failure recoverOnCpu() is the one way back to the CPU.
//
// A Model is used from one thread at a time (the studio's training worker, or the CLI's main
// thread). Errors: build() and the moves throw the engine's exceptions; open() and save()
// return false with a message naming the file.
#pragma once

#include "Task.h"

#include "HostCopy.h"
#include "ModelFile.h"
#include "Network.h"
#include "Optimizer.h"
#include "Trainer.h"

#include <QJsonObject>
#include <QString>

#include <memory>

namespace il::tasks {

struct Model {
    // Declared first, destroyed last: every buffer below lives in it.
    std::unique_ptr<Backend> backend;
    std::shared_ptr<Task> task;       // null: a model opened without its data
    QJsonObject taskJson;             // the task metadata saved with the model
    std::unique_ptr<Network> network; // null until built or opened
    std::unique_ptr<Optimizer> optimizer;
    TrainerConfig config;
    TrainingState state;
    UploadedData data; // the task's data on the backend, once upload() ran
    bool uploaded = false;

    Model() = default;
    virtual ~Model() = default;
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    // Builds a fresh network for spec on backend with task's widths (task set first), initialised
    // from config.seed, and a fresh optimizer for config.optimizer. Throws EngineError when the
    // spec does not fit, std::bad_alloc when memory runs out.
    void build(const std::string& spec);
    // Reads a model file onto backend (set first): network, configuration, training state and
    // task metadata; the optimizer comes from makeOptimizer(). info: the file's header. Returns
    // false with a message naming the file.
    bool open(const QString& path, io::ModelInfo* info, QString* error);
    // Uses task's data from now on; false, changing nothing, when its widths differ from the
    // network's (error says what the model needs).
    bool attach(std::shared_ptr<Task> task, QString* error);
    // A fresh optimizer for optimizerConfig. Right after open() it takes the optimizer state
    // saved in the file; when that state belongs to another optimizer, returns false with why in
    // note and the state stays fresh.
    bool makeOptimizer(const OptimizerConfig& optimizerConfig, QString* note = nullptr);

    // Uploads the task's tensors once; trainingData() views them.
    void upload();
    const TrainingData& trainingData() const { return data.view; }

    bool save(const QString& path, const QJsonObject& taskMetadata, QString* error) const;

    // Puts the weights back to their initial values for config.seed and forgets the run.
    void resetWeights();
    // Rebuilds the network and optimizer on target from a host copy of them (weights and
    // optimizer state; the training state is left as it is) and makes target the backend; the
    // data is uploaded again by the next upload(). Throws (BackendError, EngineError) with
    // nothing changed when the target cannot hold the model.
    void moveTo(std::unique_ptr<Backend> target, const HostCopy& copy);
    // After a device failure: rebuilds the model on cpu from good, the last good host copy (the
    // trainer's TrainResult::lastGood, or one taken before the model moved to the device), or,
    // when good is null, from a copy taken now (a device out of memory is still readable). The
    // training state goes back to that copy's step, keeping the training time. Returns the
    // step kept; throws when no copy can be had or the CPU cannot hold the model.
    int64_t recoverOnCpu(std::unique_ptr<Backend> cpu, std::shared_ptr<const HostCopy> good);

private:
    std::unique_ptr<io::LoadedModel> m_opened; // the file's optimizer state, until makeOptimizer
};

} // namespace il::tasks
