// Internal to the table task: how a schema's columns are found in a table and checked,
// which rows are kept, and how a new model's roles and kind are chosen. Shared by
// TabularColumns.cpp and TabularEncode.cpp; not for other code.
#pragma once

#include "TabularTask.h"

#include <QHash>

#include <vector>

namespace il::tasks::tabular {

using io::CsvColumn;
using io::CsvTable;

// A column's cells as indices into a list of labels (one-hot categories, class names).
class LabelMap {
public:
    static constexpr int32_t kMissing = -1, kUnseen = -2;

    void init(const CsvColumn& col, const QStringList& labels)
    {
        m_col = &col;
        m_byCode.clear();
        m_byValue.clear();
        if (!col.codes.empty()) {
            for (const QString& c : col.categories) {
                const auto i = labels.indexOf(c);
                m_byCode.push_back(i < 0 ? kUnseen : static_cast<int32_t>(i));
            }
        } else { // read as numbers ("1", "2"): match the labels by value
            for (qsizetype j = 0; j < labels.size(); ++j) {
                float v = 0;
                if (io::parseNumber(labels[j], v)) m_byValue.insert(v, static_cast<int32_t>(j));
            }
        }
    }
    int32_t at(int64_t row) const
    {
        if (m_col->isMissing(row)) return kMissing;
        if (!m_col->codes.empty()) {
            const int32_t code = m_col->codes[static_cast<size_t>(row)];
            if (code < 0) return code == CsvColumn::kMissingCode ? kMissing : kUnseen;
            return m_byCode[static_cast<size_t>(code)];
        }
        return m_byValue.value(m_col->numbers[static_cast<size_t>(row)], kUnseen);
    }
    QString text(int64_t row) const
    {
        if (m_col->codes.empty())
            return QString::number(static_cast<double>(m_col->numbers[static_cast<size_t>(row)]));
        const int32_t code = m_col->codes[static_cast<size_t>(row)];
        return code >= 0 ? m_col->categories[code].left(40) : QString("(a rare value)");
    }

private:
    const CsvColumn* m_col = nullptr;
    std::vector<int32_t> m_byCode;
    QHash<float, int32_t> m_byValue;
};

// Which table column plays each part of a schema.
struct Plan {
    std::vector<int> featureCols;
    std::vector<LabelMap> featureLabels; // per feature (unused for numeric ones)
    std::vector<int> targetCols;         // empty when the file has no target (predict)
    LabelMap classLabels;                // text classes
    std::vector<int> usedCols() const
    {
        std::vector<int> u = featureCols;
        u.insert(u.end(), targetCols.begin(), targetCols.end());
        return u;
    }
    // The numeric features (of schema s): what policy "mean" fills.
    std::vector<int> fillableCols(const TabularSchema& s) const
    {
        std::vector<int> f;
        for (size_t i = 0; i < featureCols.size(); ++i)
            if (s.featureCategories[i].isEmpty()) f.push_back(featureCols[i]);
        return f;
    }
};

bool fail(QString* error, const QString& why);
QString quoted(const QString& s);
QString shortList(const QStringList& items, int most = 12);

// A column used as numbers: false + the first text cell or bad number (whichever is first).
bool checkNumeric(const CsvTable& t, int column, QString* error);

// Finds the schema's columns in a table and checks them. Targets: needed (training), used
// when present (evaluate), or ignored (predict).
enum class Targets { Required, IfPresent, Ignore };
bool bindColumns(const CsvTable& t, const TabularSchema& s, Targets targets, Plan& p,
                 QString* error);

// The rows to use: those without a missing cell in a used column, and under policy "mean" also
// those whose missing cells are all in fillable columns (noted as filled). The others fail
// the load (policy "fail", naming their lines, with a hint for the reader) or are dropped
// (every other policy, with a note).
bool keepRows(const CsvTable& t, const std::vector<int>& used, const std::vector<int>& fillable,
              const QString& policy, MessageReader reader, std::vector<int64_t>& kept,
              QStringList* notes, QString* error);
// Counts what each policy would do with the missing cells of the used columns.
void countMissing(const CsvTable& t, const std::vector<int>& features,
                  const std::vector<int>& fillable, const std::vector<int>& targets,
                  MissingValues& out);

// A new model: its features and targets (checked), then its kind and classes.
// Policy "ignore" leaves out the features with missing cells (noted).
bool chooseRoles(const CsvTable& t, const TabularOptions& opt, TabularSchema& s, Plan& p,
                 QStringList* notes, QString* error);
bool chooseKind(const CsvTable& t, const TabularOptions& opt, const Plan& p,
                const std::vector<int64_t>& kept, TabularSchema& s, QString* error);
// Sorted distinct texts of a text column over some rows (one-hot categories, classes).
QStringList labelsOf(const CsvColumn& col, const std::vector<int64_t>& rows);

} // namespace il::tasks::tabular
