#include "LayerStackModel.h"

#include "Errors.h"
#include "LayerSpec.h"

#include <QFont>
#include <QLocale>
#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>
#include <cmath>

namespace il::app {

namespace {

// One edit: the stack before and after. Consecutive edits of the same cell merge into one.
class StackCommand : public QUndoCommand {
public:
    StackCommand(LayerStackModel* model, LayerRows before, LayerRows after, const QString& text,
                 int mergeId)
        : QUndoCommand(text), m_model(model), m_before(std::move(before)),
          m_after(std::move(after)), m_id(mergeId)
    {
    }
    void undo() override { m_model->applyRows(m_before); }
    void redo() override { m_model->applyRows(m_after); }
    int id() const override { return m_id; }
    bool mergeWith(const QUndoCommand* other) override
    {
        if (other->id() != m_id) return false;
        m_after = static_cast<const StackCommand*>(other)->m_after;
        return true;
    }

private:
    LayerStackModel* m_model;
    LayerRows m_before, m_after;
    int m_id;
};

constexpr double kMaxParameters = 100e6;

QString typeLabel(const QString& type)
{
    const LayerType* t = findLayerType(type.toStdString());
    return t ? QString::fromStdString(t->label) : type;
}

EditorColumn editorColumn(int column)
{
    switch (column) {
    case LayerStackModel::SizeColumn:
        return EditorColumn::Size;
    case LayerStackModel::SettingColumn:
        return EditorColumn::Setting;
    case LayerStackModel::InitColumn:
        return EditorColumn::Init;
    default:
        return EditorColumn::None;
    }
}

// A column's header tooltip: what each layer type shows there, from the registry.
QString columnTooltip(EditorColumn column)
{
    QStringList lines;
    for (const LayerType& t : layerTypes())
        for (const LayerArg& a : t.args)
            if (a.column == column) lines << QString::fromStdString(t.label + ": " + a.tooltip);
    return lines.join('\n');
}

} // namespace

LayerStackModel::LayerStackModel(QObject* parent)
    : QAbstractTableModel(parent), m_undo(new QUndoStack(this))
{
}

LayerStackModel::~LayerStackModel() = default;

int LayerStackModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int LayerStackModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LayerStackModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o == Qt::Vertical) return role == Qt::DisplayRole ? QVariant(section + 1) : QVariant();
    if (role == Qt::DisplayRole) {
        static const char* names[] = {"Layer", "Size", "Setting", "Init", "Output", "Params"};
        return QString(names[section]);
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case TypeColumn:
            return QString("What the layer computes. Dense: y = xW\u1d40 + b. Activations bend the "
                           "line so layers can learn curves.");
        case SizeColumn:
        case SettingColumn:
        case InitColumn:
            return columnTooltip(editorColumn(section));
        case OutputColumn:
            return QString("The width of this layer's output: the numbers each example becomes.");
        case ParamsColumn:
            return QString("Parameters: the trainable numbers in this layer, inputs \u00d7 units "
                           "weights + units biases for a dense layer.");
        }
    }
    return {};
}

const LayerArg* LayerStackModel::argumentAt(const QModelIndex& index) const
{
    if (!index.isValid() || index.row() >= rowCount()) return nullptr;
    const LayerRow& r = m_rows[static_cast<size_t>(index.row())];
    const int k = argumentIndex(r, editorColumn(index.column()));
    return k < 0 ? nullptr : &r.type->args[static_cast<size_t>(k)];
}

QVariant LayerStackModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid()) return {};
    const auto row = static_cast<size_t>(index.row());
    const LayerRow& r = m_rows[row];
    const bool output = index.row() == outputLayerIndex(m_rows);
    const bool haveSummary = m_error.isEmpty() && row < m_widths.size();
    const LayerArg* arg = argumentAt(index);
    const int k = argumentIndex(r, editorColumn(index.column()));
    const double value = k < 0 ? 0 : r.args[static_cast<size_t>(k)];
    if (role == Qt::DisplayRole || role == Qt::EditRole) {
        switch (index.column()) {
        case TypeColumn:
            return role == Qt::EditRole ? QVariant(QString::fromStdString(r.type->name))
                                        : QVariant(QString::fromStdString(r.type->label));
        case SizeColumn:
            if (!arg) return {};
            if (output && arg->fromData == DataValue::OutputWidth)
                return role == Qt::EditRole ? QVariant()
                                            : QVariant::fromValue<qlonglong>(m_outputWidth);
            return QVariant::fromValue<int>(static_cast<int>(value));
        case SettingColumn:
            // Four significant digits on screen (1.203); the editor gets the exact value.
            if (!arg) return {};
            return role == Qt::EditRole ? QVariant(value)
                                        : QVariant(QLocale().toString(value, 'g', 4));
        case InitColumn:
            return arg ? QVariant(QString::fromStdString(arg->choices[static_cast<size_t>(value)]))
                       : QVariant();
        case OutputColumn:
            return haveSummary ? QVariant(QString::number(m_widths[row])) : QVariant();
        case ParamsColumn:
            return haveSummary ? QVariant(QLocale().toString(static_cast<qlonglong>(m_params[row])))
                               : QVariant();
        }
    }
    if (role == Qt::ToolTipRole) {
        if (index.column() == SizeColumn && output)
            return QString("The output layer's width (%1, in italics) comes from the data, so it "
                           "always fits.")
                .arg(m_outputWidth);
        if (index.column() == TypeColumn) return QString::fromStdString(r.type->help);
        if (index.column() == ParamsColumn && r.type->details)
            return QString::fromStdString(r.type->details(r));
        if (arg) return QString::fromStdString(arg->tooltip);
    }
    if (role == Qt::FontRole && index.column() == SizeColumn && output && arg &&
        arg->fromData == DataValue::OutputWidth) {
        QFont font;
        font.setItalic(true);
        return font;
    }
    if (role == Qt::TextAlignmentRole && index.column() >= SizeColumn &&
        index.column() != InitColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

Qt::ItemFlags LayerStackModel::flags(const QModelIndex& index) const
{
    if (!index.isValid()) return Qt::NoItemFlags;
    const Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == TypeColumn) return f | Qt::ItemIsEditable;
    const LayerArg* arg = argumentAt(index);
    if (!arg) return f;
    const bool output = index.row() == outputLayerIndex(m_rows);
    if (output && arg->fromData == DataValue::OutputWidth) return f;
    return f | Qt::ItemIsEditable;
}

bool LayerStackModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || role != Qt::EditRole) return false;
    LayerRows after = m_rows;
    LayerRow& r = after[static_cast<size_t>(index.row())];
    if (index.column() == TypeColumn) {
        const LayerType* type = findLayerType(value.toString().toStdString());
        if (!type || type == r.type) return false;
        r = newLayerItem(*type);
        edit(std::move(after), "Change layer type", 1000 + index.row() * ColumnCount);
        return true;
    }
    const LayerArg* arg = argumentAt(index);
    if (!arg) return false;
    double v = 0;
    QString text;
    switch (arg->kind) {
    case LayerArg::Kind::Count:
        v = static_cast<double>(value.toLongLong());
        if (v < 1 || v > 1'000'000) return false;
        text = "Change layer size";
        break;
    case LayerArg::Kind::Real:
        v = value.toDouble();
        if (!std::isfinite(v) || (arg->positive && !(v > 0))) return false;
        text = "Change layer setting";
        break;
    case LayerArg::Kind::Choice: {
        const auto it =
            std::find(arg->choices.begin(), arg->choices.end(), value.toString().toStdString());
        if (it == arg->choices.end()) return false;
        v = static_cast<double>(it - arg->choices.begin());
        text = "Change initialisation";
        break;
    }
    }
    r.args[static_cast<size_t>(argumentIndex(r, editorColumn(index.column())))] = v;
    if (after == m_rows) return false;
    // Edits of the same cell merge, so spinning a value is one undo step.
    edit(std::move(after), text, 1000 + index.row() * ColumnCount + index.column());
    return true;
}

void LayerStackModel::setDataShape(int64_t inputWidth, int64_t outputWidth, int64_t vocab)
{
    m_inputWidth = inputWidth;
    m_outputWidth = outputWidth;
    m_vocab = vocab;
    recompute();
    if (!m_rows.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    emit stackChanged();
}

void LayerStackModel::resetSpec(const QString& spec)
{
    LayerRows rows;
    if (!parseLayerRows(spec, rows, nullptr)) rows.clear();
    normaliseLayerRows(rows);
    m_undo->clear();
    applyRows(rows);
}

bool LayerStackModel::setSpec(const QString& spec, QString* error)
{
    LayerRows rows;
    if (!parseLayerRows(spec, rows, error)) return false;
    normaliseLayerRows(rows);
    if (rows != m_rows) edit(std::move(rows), "Set layers");
    return true;
}

void LayerStackModel::insertLayer(int at, const QString& type)
{
    const LayerType* t = findLayerType(type.toStdString());
    if (!t) return;
    LayerRows after = m_rows;
    at = std::clamp(at, 0, static_cast<int>(after.size()));
    after.insert(after.begin() + at, newLayerItem(*t));
    edit(std::move(after), "Add " + typeLabel(type));
}

void LayerStackModel::removeLayer(int row)
{
    if (row < 0 || row >= rowCount()) return;
    LayerRows after = m_rows;
    after.erase(after.begin() + row);
    edit(std::move(after), "Remove layer");
}

void LayerStackModel::duplicateLayer(int row)
{
    if (row < 0 || row >= rowCount()) return;
    LayerRows after = m_rows;
    // The copy goes before the original, which keeps its place (and stays the output layer).
    after.insert(after.begin() + row, after[static_cast<size_t>(row)]);
    edit(std::move(after), "Duplicate layer");
}

void LayerStackModel::moveLayer(int row, int delta)
{
    const int to = row + delta;
    if (row < 0 || row >= rowCount() || to < 0 || to >= rowCount()) return;
    LayerRows after = m_rows;
    std::swap(after[static_cast<size_t>(row)], after[static_cast<size_t>(to)]);
    edit(std::move(after), delta < 0 ? "Move layer up" : "Move layer down");
}

QString LayerStackModel::spec() const
{
    return formatLayerRows(m_rows);
}

void LayerStackModel::edit(LayerRows after, const QString& text, int mergeId)
{
    normaliseLayerRows(after);
    m_undo->push(new StackCommand(this, m_rows, std::move(after), text, mergeId));
}

void LayerStackModel::applyRows(const LayerRows& rows)
{
    beginResetModel();
    m_rows = rows;
    recompute();
    endResetModel();
    emit stackChanged();
}

void LayerStackModel::recompute()
{
    m_widths.clear();
    m_params.clear();
    m_total = 0;
    m_error.clear();
    if (m_rows.empty()) {
        m_error = "The stack is empty: add at least one dense layer.";
        return;
    }
    if (m_outputWidth <= 0) return; // no data yet: nothing to check against
    try {
        const auto plans =
            planLayerSpec(spec().toStdString(), m_inputWidth, m_outputWidth, m_vocab);
        double total = 0;
        for (const LayerPlan& p : plans)
            total += static_cast<double>(p.parameters);
        if (total > kMaxParameters) {
            m_error = QString("This stack has about %1 million parameters; the studio trains at "
                              "most %2 million. Make the layers narrower.")
                          .arg(total / 1e6, 0, 'f', 0)
                          .arg(kMaxParameters / 1e6, 0, 'f', 0);
            return;
        }
        for (const LayerPlan& p : plans) {
            m_widths.push_back(p.outputWidth);
            m_params.push_back(p.parameters);
        }
        m_total = static_cast<int64_t>(total);
    } catch (const EngineError& e) {
        m_error = QString::fromStdString(e.what());
    }
}

} // namespace il::app
