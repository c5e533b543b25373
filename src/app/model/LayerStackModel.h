// The Model panel's table: one row per layer with its output width and parameter count, every
// edit an undoable command. Labels, tooltips and which cells are editable come from the layer
// registry; the counts from the engine's shape-only plan (planLayerSpec: no network is built,
// nothing is allocated), and an EngineError from planning is the inline explanation of an
// invalid stack.
#pragma once

#include "LayerStack.h"

#include <QAbstractTableModel>

#include <memory>

class QUndoStack;

namespace il::app {

class LayerStackModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        TypeColumn,
        SizeColumn,
        SettingColumn,
        InitColumn,
        OutputColumn,
        ParamsColumn,
        ColumnCount
    };

    explicit LayerStackModel(QObject* parent = nullptr);
    ~LayerStackModel() override;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;

    QUndoStack* undoStack() const { return m_undo; }

    // The data's shape: input columns, outputs, embedding vocabulary (0 if none).
    void setDataShape(int64_t inputWidth, int64_t outputWidth, int64_t vocab);
    // Replaces the stack without an undo step (a new dataset or model) and clears the history.
    void resetSpec(const QString& spec);
    // Undoable edits. setSpec returns false (changing nothing) if the text does not parse.
    bool setSpec(const QString& spec, QString* error = nullptr);
    void insertLayer(int at, const QString& type);
    void removeLayer(int row);
    void duplicateLayer(int row);
    void moveLayer(int row, int delta);

    const LayerRows& rows() const { return m_rows; }
    // The layer argument a cell edits, or nullptr (the delegate sizes its editor from it).
    const LayerArg* argumentAt(const QModelIndex& index) const;
    QString spec() const;
    bool isValid() const { return m_error.isEmpty(); }
    QString errorString() const { return m_error; }
    int64_t totalParameters() const { return m_total; }

    // Called by the undo commands: the stack as it should be now.
    void applyRows(const LayerRows& rows);

signals:
    void stackChanged();

private:
    void edit(LayerRows after, const QString& text, int mergeId = -1);
    void recompute();

    LayerRows m_rows;
    QUndoStack* m_undo;
    int64_t m_inputWidth = 0, m_outputWidth = 0, m_vocab = 0;
    std::vector<int64_t> m_widths, m_params; // per row, from the plan
    int64_t m_total = 0;
    QString m_error;
};

} // namespace il::app
