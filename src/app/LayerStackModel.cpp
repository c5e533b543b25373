#include "LayerStackModel.h"

#include "Backend.h"
#include "Errors.h"
#include "Network.h"

#include <QLocale>
#include <QUndoCommand>
#include <QUndoStack>

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
    static const QHash<QString, QString> labels = {{"dense", "Dense"},
                                                   {"relu", "ReLU"},
                                                   {"tanh", "Tanh"},
                                                   {"sigmoid", "Sigmoid"},
                                                   {"leakyrelu", "Leaky ReLU"},
                                                   {"sine", "Sine (SIREN)"},
                                                   {"fourier", "Fourier features"},
                                                   {"embedding", "Embedding"}};
    return labels.value(type, type);
}

} // namespace

LayerStackModel::LayerStackModel(QObject* parent)
    : QAbstractTableModel(parent), m_undo(new QUndoStack(this)), m_backend(createCpuBackend(0))
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
        static const char* names[] = {"Layer", "Size", "Setting", "Init", "Output", "Parameters"};
        return QString(names[section]);
    }
    if (role == Qt::ToolTipRole) {
        static const char* tips[] = {
            "What the layer computes. Dense: y = xW\u1d40 + b. Activations bend the line so "
            "layers can learn curves.",
            "Dense: the number of units (outputs). Fourier: how many random frequencies. "
            "Embedding: numbers per character.",
            "Sine: w0 in sin(w0\u00b7x) \u2014 higher w0 fits finer detail. Leaky ReLU: the "
            "slope for negative inputs. Fourier: the scale S of the frequencies B ~ N(0, S\u00b2).",
            "How a dense layer's weights start. Automatic picks from the next activation: He "
            "before ReLU, SIREN before sine, Xavier otherwise.",
            "The width of this layer's output: the numbers each example becomes.",
            "Trainable numbers in this layer: inputs \u00d7 units weights + units biases for a "
            "dense layer."};
        return QString(tips[section]);
    }
    return {};
}

QVariant LayerStackModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid()) return {};
    const LayerRow& r = m_rows[static_cast<size_t>(index.row())];
    const bool output = index.row() == outputLayerIndex(m_rows);
    const auto row = static_cast<size_t>(index.row());
    const bool haveSummary = m_error.isEmpty() && row < m_widths.size();
    if (role == Qt::DisplayRole || role == Qt::EditRole) {
        switch (index.column()) {
        case TypeColumn:
            return role == Qt::EditRole ? QVariant(r.type) : QVariant(typeLabel(r.type));
        case SizeColumn:
            if (!r.hasSize()) return {};
            if (output)
                return role == Qt::EditRole ? QVariant()
                                            : QVariant(QString("%1 (output)").arg(m_outputWidth));
            return QVariant::fromValue<int>(static_cast<int>(r.size));
        case SettingColumn:
            return r.hasParam() ? QVariant(r.param) : QVariant();
        case InitColumn:
            if (r.type != "dense") return {};
            return role == Qt::EditRole ? QVariant(r.init)
                                        : QVariant(r.init.isEmpty() ? "auto" : r.init);
        case OutputColumn:
            return haveSummary ? QVariant(QString::number(m_widths[row])) : QVariant();
        case ParamsColumn:
            return haveSummary ? QVariant(QLocale().toString(static_cast<qlonglong>(m_params[row])))
                               : QVariant();
        }
    }
    if (role == Qt::ToolTipRole && index.column() == SizeColumn && output)
        return "The output layer's width comes from the data, so it always fits.";
    if (role == Qt::TextAlignmentRole && index.column() >= SizeColumn &&
        index.column() != InitColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

Qt::ItemFlags LayerStackModel::flags(const QModelIndex& index) const
{
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    const LayerRow& r = m_rows[static_cast<size_t>(index.row())];
    const bool output = index.row() == outputLayerIndex(m_rows);
    switch (index.column()) {
    case TypeColumn:
        return f | Qt::ItemIsEditable;
    case SizeColumn:
        return r.hasSize() && !output ? f | Qt::ItemIsEditable : f;
    case SettingColumn:
        return r.hasParam() ? f | Qt::ItemIsEditable : f;
    case InitColumn:
        return r.type == "dense" ? f | Qt::ItemIsEditable : f;
    default:
        return f;
    }
}

bool LayerStackModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || role != Qt::EditRole) return false;
    LayerRows after = m_rows;
    LayerRow& r = after[static_cast<size_t>(index.row())];
    QString text;
    switch (index.column()) {
    case TypeColumn: {
        const QString type = value.toString();
        if (!layerTypes().contains(type) || type == r.type) return false;
        r = LayerRow::defaults(type);
        text = "Change layer type";
        break;
    }
    case SizeColumn:
        if (value.toLongLong() <= 0) return false;
        r.size = value.toLongLong();
        text = "Change layer size";
        break;
    case SettingColumn:
        if (!(value.toDouble() > 0)) return false;
        r.param = value.toDouble();
        text = "Change layer setting";
        break;
    case InitColumn:
        r.init = value.toString() == "auto" ? QString() : value.toString();
        text = "Change initialisation";
        break;
    default:
        return false;
    }
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
    LayerRows after = m_rows;
    at = std::clamp(at, 0, static_cast<int>(after.size()));
    LayerRow r = LayerRow::defaults(type);
    after.insert(after.begin() + at, r);
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
    LayerRow copy = after[static_cast<size_t>(row)];
    if (copy.type == "dense" && copy.size <= 0) copy.size = 32;
    after.insert(after.begin() + row, copy);
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
    // A rough count first, so a typo like dense:100000 is explained instead of allocated.
    double estimate = 0, width = static_cast<double>(m_inputWidth);
    const int output = outputLayerIndex(m_rows);
    for (int i = 0; i < static_cast<int>(m_rows.size()); ++i) {
        const LayerRow& r = m_rows[static_cast<size_t>(i)];
        const double size =
            i == output ? static_cast<double>(m_outputWidth) : static_cast<double>(r.size);
        if (r.type == "dense") {
            estimate += width * size + size;
            width = size;
        } else if (r.type == "fourier") {
            width = 2 * size;
        } else if (r.type == "embedding") {
            estimate += static_cast<double>(r.vocab > 0 ? r.vocab : m_vocab) * size;
            width *= size;
        }
    }
    if (estimate > kMaxParameters) {
        m_error = QString("This stack has about %1 million parameters; the studio trains at most "
                          "%2 million. Make the layers narrower.")
                      .arg(estimate / 1e6, 0, 'f', 0)
                      .arg(kMaxParameters / 1e6, 0, 'f', 0);
        return;
    }
    try {
        Network net(*m_backend, m_inputWidth, spec().toStdString(), m_outputWidth, m_vocab);
        for (const LayerSummary& s : net.summary()) {
            m_widths.push_back(s.outputWidth);
            m_params.push_back(s.parameters);
        }
        m_total = net.parameterCount();
    } catch (const EngineError& e) {
        m_error = QString::fromStdString(e.what());
    } catch (const std::bad_alloc&) {
        m_error = "There is not enough memory for this stack. Make the layers narrower.";
    }
}

} // namespace il::app
