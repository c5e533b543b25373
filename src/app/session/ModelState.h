// A model as the training worker owns it: a tasks::Model (backend, task, network, optimizer,
// training state, uploaded data) and what the studio knows about it besides. Only the worker
// thread touches a ModelState once it has been handed over (TrainingWorker::replaceModel); the
// GUI asks for what it needs through jobs.
#pragma once

#include "BestWeights.h"
#include "Model.h"
#include "Task.h"

#include "Network.h"
#include "Optimizer.h"
#include "Trainer.h"

#include <QImage>
#include <QJsonObject>
#include <QString>

#include <any>
#include <memory>

namespace il::app {

using tasks::BestWeights;
using tasks::BestWeightsInfo;

// Where a model lives or a run trains: a backend by name, and its options.
struct DeviceChoice {
    QString backend = "cpu"; // "cpu" or "cuda"
    bool tf32 = false;       // CUDA: TF32 matrix products (never set for the CPU)
    int threads = 0;         // CPU: OpenMP threads, 0: one per core (the CLI's --threads)
    bool operator==(const DeviceChoice&) const = default;
};

// The studio's model: the tasks::Model, plus where its data came from and where it lives.
struct ModelState : tasks::Model {
    QString dataPath;    // where the data came from ("" if unknown)
    DeviceChoice device; // what the backend is (the worker moves the model between runs)
    QString buildError;  // why the network could not be built (no network then)
    BestWeights best;    // the best weights of its training so far (Revert to best weights)

    // What the model's kind keeps of it besides the task, for its own views (kinds/<kind>/): a
    // names model's alphabet or a picture's size, read from the task metadata of a model opened
    // without its data.
    std::any kindView;

    // The model's kind: its task's, or the one its task metadata names (null for none).
    const tasks::TaskType* type() const;
    // The task metadata to save: the task's own, plus where the data came from so the studio
    // can reopen it with the model.
    QJsonObject taskJsonForSaving() const;

    // Builds a fresh network for spec on a new CPU backend and initialises it from config.seed
    // (a run on another device moves it there first, on the worker thread).
    // Returns null with the engine's message on failure.
    static std::unique_ptr<ModelState> create(std::shared_ptr<tasks::Task> task,
                                              const QString& dataPath, const QString& spec,
                                              const TrainerConfig& config, QString* error);
    // What the network draws now, for a kind whose models draw pictures (StudioKindExtras::
    // picture): its longest side at most longestSide, or at the size it trains at for 0. Null for
    // other kinds and before there is a network.
    QImage picture(int longestSide);
    bool drawsPictures() const;
    // tasks::Model::moveTo, remembering which device the model now lives on.
    void moveTo(std::unique_ptr<Backend> target, const DeviceChoice& where, const HostCopy& copy);
};

// The key under which the studio remembers a model's data file in the task metadata.
inline constexpr const char* kDataFileKey = "studio_data_file";

} // namespace il::app
