// The tabular task's type: its name, files, layer presets, the metric it follows and how it
// describes a saved table model; it opens tables with openTabularTask (TabularTaskAdapter.cpp).
#include "KindScripts.h"
#include "TabularTask.h"

#include <QJsonArray>

namespace il::tasks {

namespace {

class TabularTaskType final : public TaskType {
public:
    QString name() const override { return "tabular"; }
    QString title() const override { return "Tables"; }
    int order() const override { return 10; }
    Example example() const override
    {
        // Two numeric features and three classes, 30 rows.
        QByteArray csv = "x1,x2,label\n";
        const char* labels[] = {"cat", "dog", "emu"};
        for (int i = 0; i < 30; ++i)
            csv += QByteArray::number(i) + "," + QByteArray::number(i % 7) + "," + labels[i % 3] +
                   "\n";
        return {"example.csv", csv};
    }
    OnnxGraph onnxGraph() const override { return IRONLEARN_ONNX_GRAPH(tabularOnnxGraph); }
    PyTorchSections pytorch() const override
    {
        return {kPyTorch_tabular_model, kPyTorch_tabular_train_more};
    }
    QStringList trainOptions() const override
    {
        return {"target",  "kind",  "features",      "ignore",    "normalise",
                "missing", "folds", "average-folds", "test-split"};
    }
    QStringList fileSuffixes() const override { return {"csv", "tsv", "json"}; }
    std::vector<LayerPreset> presets() const override
    {
        // wide is the default: on the table corpus it is the one stack at or above the linear
        // baseline on every table (it starts there and keeps it unless it beats it: settle).
        // ensemble is the default for regression tables that are cross-validated (by default
        // those under 5,000 rows, TabularTask.h): the folds' networks, averaged and blended with
        // least squares. Checked on held-out tables chosen before it was run
        // (docs/cross-validation.md).
        return {{"wide", "dense:32,tanh,dense:32,tanh,dense,skip",
                 "wide and deep: starts as the linear baseline and keeps it unless it beats it; "
                 "the default for classes and for regression on a validation split"},
                {"ensemble", "dense:100:xavier,relu,dense",
                 "the default for regression tables under 5,000 rows: the 5 folds' networks "
                 "averaged, blended with least squares fitted on every row",
                 PresetRecipe{"adam",
                              0.001f,
                              200,
                              0,
                              0.f,
                              NAN,
                              "scikit-learn's MLP settings; on 8 held-out regression tables "
                              "0.96x its test error, where the wide stack had 1.10x",
                              {},
                              0},
                 true},
                {"mlp", "dense:32,tanh,dense:32,tanh,dense", ""},
                {"linear", "dense", "linear / logistic regression"},
                {"deep", "dense:64,relu,dense:64,relu,dense:64,relu,dense", ""}};
    }
    MetricInfo metric(const QJsonObject& savedTask) const override
    {
        MetricInfo m;
        // Cross-validated: the run trains on every row, so its metric is on the training rows
        // (the folds' held-out figures are in the results).
        const bool folds = savedTask.value("folds").toInt() > 0;
        if (savedTask.value("kind").toString() != "regression") {
            m.title = folds ? "Accuracy on the training rows" : "Validation accuracy";
            m.description =
                folds ? "The share of the rows whose class the network gets right. It trains on "
                        "every row (cross-validation held each out once before, and the results "
                        "give the folds' accuracy on rows they had not seen)."
                      : "The share of validation rows whose class the network gets right.";
            return m;
        }
        const QJsonArray targets = savedTask.value("targets").toArray();
        const QString units = targets.size() == 1 ? targets.first().toString() + "'s units"
                                                  : QString("the targets' units");
        const bool zscore = savedTask.value("normalisation").toString() != "minmax";
        // Short, whatever the column is called: the chart elides a long title.
        m.title = folds ? "Training RMSE (file units)" : "Validation RMSE (file units)";
        m.description =
            "Root mean squared error of the predictions on the validation rows (the "
            "training rows without any), in " +
            units +
            ": how far off a typical "
            "prediction is; lower is better. The loss chart measures the same error on the "
            "normalised targets the network is trained on.";
        m.lossTitle = zscore ? "on standardised targets (z-scores), not the file's units"
                             : "on targets scaled to 0..1, not the file's units";
        m.lossNote = QString("The network learns ") +
                     (zscore ? "each target standardised: (value − mean) / standard deviation"
                             : "each target scaled: (value − minimum) / (maximum − minimum)") +
                     ", so its loss does not depend on the file's units. The metric chart and "
                     "the results show the error in " +
                     units + ".";
        return m;
    }
    bool checkSaved(const QJsonObject& savedTask, QString* error) const override
    {
        TabularSchema s;
        return TabularSchema::fromJson(savedTask, s, error);
    }
    QString describeSaved(const QJsonObject& savedTask) const override
    {
        QString line = name();
        TabularSchema s;
        if (TabularSchema::fromJson(savedTask, s, nullptr)) {
            line += ": " + s.kindName() + ", " + QString::number(s.features.size()) +
                    " features -> " + s.target;
            if (s.isClassification()) line += " (classes: " + s.classes.join(", ") + ")";
        }
        return line;
    }
    // Tables saved before one-hot features and several targets kept z-score statistics as
    // feature_mean / feature_std and target_mean / target_std (regression), and had no
    // feature_categories (numbers only) and no targets (the one target).
    QJsonObject savedInCurrentForm(const QJsonObject& task) const override
    {
        if (task.value(QLatin1String("task")).toString() != name()) return task;
        QJsonObject o = task;
        if (!o.contains(QLatin1String("input_offset"))) {
            // Inserting an undefined value removes the key: a file without the old names reads as
            // one without statistics, which its reader refuses.
            o.insert(QLatin1String("input_offset"), o.value(QLatin1String("feature_mean")));
            o.insert(QLatin1String("input_scale"), o.value(QLatin1String("feature_std")));
            const bool regression = o.value(QLatin1String("kind")).toString() == "regression";
            o.insert(QLatin1String("target_offset"),
                     regression ? QJsonArray{o.value(QLatin1String("target_mean")).toDouble(0)}
                                : QJsonArray{});
            o.insert(QLatin1String("target_scale"),
                     regression ? QJsonArray{o.value(QLatin1String("target_std")).toDouble(1)}
                                : QJsonArray{});
            for (const char* old : {"feature_mean", "feature_std", "target_mean", "target_std"})
                o.remove(QLatin1String(old));
        }
        if (!o.contains(QLatin1String("targets")))
            o.insert(QLatin1String("targets"), QJsonArray{o.value(QLatin1String("target"))});
        const qsizetype features = o.value(QLatin1String("features")).toArray().size();
        QJsonArray categories = o.value(QLatin1String("feature_categories")).toArray();
        if (categories.size() < features) {
            while (categories.size() < features)
                categories.append(QJsonArray{});
            o.insert(QLatin1String("feature_categories"), categories);
        }
        return o;
    }
    bool readsUnclaimedFiles() const override { return true; }
    std::unique_ptr<Task> open(const QString& path, const QByteArray& bytes,
                               const TaskOptions& options, const QJsonObject* savedTask,
                               bool forEvaluation, QString* error) const override
    {
        return openTabularTask(path, bytes, options, savedTask, forEvaluation, error);
    }
};

} // namespace

const TaskType& tabularTaskType()
{
    static const TabularTaskType type;
    return type;
}

} // namespace il::tasks
