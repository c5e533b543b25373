// The first rows of a table as the Dataset panel previews them, with each column's role shown
// in its header (target in bold, ignored dimmed).
#pragma once

#include "CsvTable.h"

#include <QAbstractTableModel>
#include <QStringList>

namespace il::app {

class CsvPreviewModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Role { Feature, Target, Ignore };

    explicit CsvPreviewModel(QObject* parent = nullptr);

    // Takes the table (only the first maxRows rows are shown).
    void setTable(io::CsvTable table, int maxRows = 200);
    void setRoles(const std::vector<Role>& roles);
    const io::CsvTable& table() const { return m_table; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    // A cell as the file wrote it (numbers in shortest form).
    QString cellText(int64_t row, int column) const;

private:
    io::CsvTable m_table;
    int m_rows = 0;
    std::vector<Role> m_roles;
};

} // namespace il::app
