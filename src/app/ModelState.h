// A model as the training worker owns it: a tasks::Model (backend, task, network, optimizer,
// training state, uploaded data) and what the studio knows about it besides. Only the worker
// thread touches a ModelState once it has been handed over (TrainingWorker::replaceModel); the
// GUI asks for what it needs through jobs.
#pragma once

#include "BestWeights.h"
#include "ImageTask.h"
#include "Model.h"
#include "NamesTask.h"
#include "Task.h"

#include "Network.h"
#include "Optimizer.h"
#include "Trainer.h"

#include <QImage>
#include <QJsonObject>
#include <QString>

#include <memory>
#include <optional>

namespace il::app {

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

    // Task-specific views that work with or without the data file, defined in their kinds'
    // folders (kinds/image/ImageModelState.cpp, kinds/names/NamesModelState.cpp).
    const tasks::ImageTask* imageTask() const;
    const tasks::NamesSchema* namesSchema();
    const tasks::ImageGeometry* imageGeometry();
    // The task metadata to save: the task's own, plus where the data came from so the studio
    // can reopen it with the model.
    QJsonObject taskJsonForSaving() const;

    // Builds a fresh network for spec on a new CPU backend and initialises it from config.seed
    // (a run on another device moves it there first, on the worker thread).
    // Returns null with the engine's message on failure.
    static std::unique_ptr<ModelState> create(std::shared_ptr<tasks::Task> task,
                                              const QString& dataPath, const QString& spec,
                                              const TrainerConfig& config, QString* error);
    // The current reconstruction of an image model with its longest side at most longestSide
    // (exactly the training image when that fits); null for other models.
    QImage preview(int longestSide);
    // tasks::Model::moveTo, remembering which device the model now lives on.
    void moveTo(std::unique_ptr<Backend> target, const DeviceChoice& where,
                const HostSnapshot& snapshot);

private:
    std::optional<tasks::NamesSchema> m_names;
    std::optional<tasks::ImageGeometry> m_geometry;
};

// The key under which the studio remembers a model's data file in the task metadata.
inline constexpr const char* kDataFileKey = "studio_data_file";

} // namespace il::app
