#include "CsvPreviewModel.h"

#include <QBrush>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

#include <cmath>

namespace il::app {

CsvPreviewModel::CsvPreviewModel(QObject* parent) : QAbstractTableModel(parent) {}

void CsvPreviewModel::setTable(io::CsvTable table, int maxRows)
{
    beginResetModel();
    m_table = std::move(table);
    m_rows = static_cast<int>(std::min<int64_t>(m_table.rows, maxRows));
    m_roles.assign(static_cast<size_t>(m_table.columnCount()), Role::Feature);
    endResetModel();
}

void CsvPreviewModel::setRoles(const std::vector<Role>& roles)
{
    m_roles = roles;
    m_roles.resize(static_cast<size_t>(m_table.columnCount()), Role::Feature);
    if (columnCount() > 0) {
        emit headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
        if (m_rows > 0) emit dataChanged(index(0, 0), index(m_rows - 1, columnCount() - 1));
    }
}

int CsvPreviewModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int CsvPreviewModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : m_table.columnCount();
}

QString CsvPreviewModel::cellText(int64_t row, int column) const
{
    const io::CsvColumn& c = m_table.columns[static_cast<size_t>(column)];
    const auto r = static_cast<size_t>(row);
    if (c.isMissing(row)) return {};
    if (r < c.codes.size() && c.codes[r] >= 0) return c.categories.value(c.codes[r]);
    if (r < c.numbers.size() && !std::isnan(c.numbers[r]))
        return QString::number(static_cast<double>(c.numbers[r]), 'g', 7);
    return {};
}

QVariant CsvPreviewModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid()) return {};
    const Role r = m_roles[static_cast<size_t>(index.column())];
    if (role == Qt::DisplayRole) return cellText(index.row(), index.column());
    if (role == Qt::TextAlignmentRole) {
        const bool text = m_table.columns[static_cast<size_t>(index.column())].isText();
        return QVariant::fromValue((text ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
    }
    if (role == Qt::FontRole && r == Role::Target) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::ForegroundRole && r == Role::Ignore)
        return QGuiApplication::palette().brush(QPalette::Disabled, QPalette::Text);
    return {};
}

QVariant CsvPreviewModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o == Qt::Vertical) {
        if (role == Qt::DisplayRole) return QString::number(m_table.lineOf(section));
        if (role == Qt::ToolTipRole)
            return QString("Line %1 of the file").arg(m_table.lineOf(section));
        return {};
    }
    if (section < 0 || section >= columnCount()) return {};
    const Role r = m_roles[static_cast<size_t>(section)];
    if (role == Qt::DisplayRole) {
        const char* names[] = {"feature", "target", "ignored"};
        return m_table.columns[static_cast<size_t>(section)].name + "\n" +
               names[static_cast<int>(r)];
    }
    if (role == Qt::FontRole && r == Role::Target) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

} // namespace il::app
