// Finding and checking a table's columns, missing values, and choosing a new model's
// column roles and kind of problem.
#include "TabularColumns.h"

#include "Counting.h"
#include "PrintableText.h"

#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace il::tasks::tabular {

bool fail(QString* error, const QString& why)
{
    if (error) *error = why;
    return false;
}

QString quoted(const QString& s)
{
    return io::quoted(s, 60);
}

QString shortList(const QStringList& items, int most)
{
    QString s = items.mid(0, most).join(", ");
    if (items.size() > most) s += ", ... (" + QString::number(items.size()) + " in all)";
    return s;
}

// A column used as numbers: its first text cell or bad number (whichever comes first).
bool checkNumeric(const CsvTable& t, int c, QString* error)
{
    const CsvColumn& col = t.columns[static_cast<size_t>(c)];
    const io::CsvCell* bad = col.firstText.isSet() ? &col.firstText : nullptr;
    if (col.firstBad.isSet() && (!bad || col.firstBad.row < bad->row)) bad = &col.firstBad;
    if (!bad) return true;
    const QString why = bad == &col.firstText ? quoted(bad->text) + " is not a number"
                                              : quoted(bad->text) + ": " + bad->why;
    return fail(error, t.cellWhere(bad->row, c) + ": " + why);
}

static bool checkUtf8(const CsvTable& t, int c, QString* error)
{
    const CsvColumn& col = t.columns[static_cast<size_t>(c)];
    if (!col.firstInvalidUtf8.isSet()) return true;
    return fail(error, t.cellWhere(col.firstInvalidUtf8.row, c) + ": the text is not valid UTF-8");
}

static int findByName(const CsvTable& t, const QString& name)
{
    for (int i = 0; i < t.columnCount(); ++i)
        if (t.columns[static_cast<size_t>(i)].name == name) return i;
    for (int i = 0; i < t.columnCount(); ++i)
        if (t.columns[static_cast<size_t>(i)].name.compare(name, Qt::CaseInsensitive) == 0)
            return i;
    return -1;
}

bool bindColumns(const CsvTable& t, const TabularSchema& s, Targets targets, Plan& p,
                 QString* error)
{
    p = Plan{};
    for (int i = 0; i < s.features.size(); ++i) {
        const int c = findByName(t, s.features[i]);
        if (c < 0)
            return fail(error, t.path + ": the model needs column " + quoted(s.features[i]) +
                                   ", which this file lacks");
        p.featureCols.push_back(c);
        p.featureLabels.emplace_back();
        const QStringList& cats = s.featureCategories[static_cast<size_t>(i)];
        if (cats.isEmpty()) {
            if (!checkNumeric(t, c, error)) return false;
        } else {
            if (!checkUtf8(t, c, error)) return false;
            p.featureLabels.back().init(t.columns[static_cast<size_t>(c)], cats);
        }
    }
    if (targets == Targets::Ignore) return true;
    std::vector<int> cols;
    for (const QString& name : s.targets) {
        const int c = findByName(t, name);
        if (c < 0 && targets == Targets::Required)
            return fail(error, t.path + ": no target column " + quoted(name) +
                                   " (columns: " + shortList(t.columnNames()) + ")");
        if (c >= 0) cols.push_back(c);
    }
    if (cols.size() != static_cast<size_t>(s.targets.size())) return true; // none or partial
    p.targetCols = cols;
    if (s.textClasses) {
        if (!checkUtf8(t, cols[0], error)) return false;
        p.classLabels.init(t.columns[static_cast<size_t>(cols[0])], s.classes);
        return true;
    }
    for (int c : cols)
        if (!checkNumeric(t, c, error)) return false;
    return true;
}

// "line 12" (CSV) or "example 3" / "test example 2" (JSON).
static QString rowName(const CsvTable& t, int64_t row)
{
    return t.jsonRows ? t.where(row).mid(t.path.size() + 2)
                      : "line " + QString::number(t.lineOf(row));
}

static QString rowList(const CsvTable& t, const std::vector<int64_t>& rows, int64_t total)
{
    QStringList items;
    for (int64_t r : rows)
        items << (t.jsonRows ? t.where(r).mid(t.path.size() + 2) : QString::number(t.lineOf(r)));
    QString s =
        (t.jsonRows ? QString() : QString(total == 1 ? "line " : "lines ")) + items.join(", ");
    return total > static_cast<int64_t>(rows.size()) ? s + ", ..." : s;
}

static bool contains(const std::vector<int>& cols, int c)
{
    return std::find(cols.begin(), cols.end(), c) != cols.end();
}

// The used columns that have missing cells, each once.
static std::vector<int> withMissing(const CsvTable& t, const std::vector<int>& used)
{
    std::vector<int> out;
    for (int c : used)
        if (t.columns[static_cast<size_t>(c)].missingCount > 0 && !contains(out, c))
            out.push_back(c);
    return out;
}

// "("b" 2, "y" 1; lines 3, 5, 6)": the columns' missing counts and the first rows.
static QString missingDetail(const CsvTable& t, const std::vector<int>& cols,
                             const std::vector<int64_t>& firstRows, int64_t total)
{
    QStringList perColumn;
    for (int c : cols)
        perColumn << quoted(t.columns[static_cast<size_t>(c)].name) + " " +
                         QString::number(t.columns[static_cast<size_t>(c)].missingCount);
    return "(" + shortList(perColumn, 5) + "; " + rowList(t, firstRows, total) + ")";
}

bool keepRows(const CsvTable& t, const std::vector<int>& used, const std::vector<int>& fillable,
              const QString& policy, MessageReader reader, std::vector<int64_t>& kept,
              QStringList* notes, QString* error)
{
    const std::vector<int> missingCols = withMissing(t, used);
    const bool fill = policy == "mean";
    kept.clear();
    kept.reserve(static_cast<size_t>(t.rows));
    std::vector<int64_t> firstRows, firstFilled;
    int64_t dropped = 0, filled = 0, firstRow = -1;
    int firstCol = -1;
    std::vector<int> droppedCols, filledCols; // the columns that made rows go or filled them
    for (int64_t r = 0; r < t.rows; ++r) {
        int missingCol = -1;
        bool fillableOnly = true;
        for (int c : missingCols)
            if (t.columns[static_cast<size_t>(c)].isMissing(r)) {
                if (missingCol < 0) missingCol = c;
                if (!contains(fillable, c)) fillableOnly = false;
            }
        if (missingCol < 0) {
            kept.push_back(r);
            continue;
        }
        if (fill && fillableOnly) {
            kept.push_back(r);
            if (firstFilled.size() < 5) firstFilled.push_back(r);
            ++filled;
            for (int c : missingCols)
                if (t.columns[static_cast<size_t>(c)].isMissing(r) && !contains(filledCols, c))
                    filledCols.push_back(c);
            continue;
        }
        if (firstRow < 0) {
            firstRow = r;
            firstCol = missingCol;
        }
        if (firstRows.size() < 5) firstRows.push_back(r);
        for (int c : missingCols)
            if (t.columns[static_cast<size_t>(c)].isMissing(r) &&
                (!fill || !contains(fillable, c)) && !contains(droppedCols, c))
                droppedCols.push_back(c);
        ++dropped;
    }
    if (filled > 0 && notes)
        notes->append("filled the missing values of " + countOf(filled, "row") +
                      " with the mean of the training rows " +
                      missingDetail(t, filledCols, firstFilled, filled));
    if (dropped == 0) return true;
    std::sort(droppedCols.begin(), droppedCols.end());
    const QString detail = missingDetail(t, droppedCols, firstRows, dropped);
    const QString rows = countOf(dropped, "row");
    if (policy == "fail")
        return fail(error, t.cellWhere(firstRow, firstCol) + ": missing value; " + rows +
                               (dropped == 1 ? " has" : " have") + " missing values " + detail +
                               forReader(reader, "; --missing drop leaves such rows out", ""));
    if (kept.empty()) return fail(error, t.path + ": every row has a missing value " + detail);
    if (notes) notes->append("dropped " + rows + " with missing values " + detail);
    return true;
}

void countMissing(const CsvTable& t, const std::vector<int>& features,
                  const std::vector<int>& fillable, const std::vector<int>& targets,
                  MissingValues& out)
{
    out = MissingValues{};
    out.rows = t.rows;
    std::vector<int> used = features;
    used.insert(used.end(), targets.begin(), targets.end());
    const std::vector<int> missingCols = withMissing(t, used);
    for (int c : missingCols)
        if (contains(features, c)) out.features << t.columns[static_cast<size_t>(c)].name;
    for (int64_t r = 0; r < t.rows; ++r) {
        bool any = false, target = false, unfillable = false;
        for (int c : missingCols) {
            if (!t.columns[static_cast<size_t>(c)].isMissing(r)) continue;
            any = true;
            target = target || contains(targets, c);
            unfillable = unfillable || !contains(fillable, c);
        }
        out.incompleteRows += any;
        out.targetRows += target;
        out.filledRows += any && !unfillable;
        out.unfillableRows += unfillable;
    }
}

// Resolves "name", "3" or "2-5" (1-based) to column indices.
static bool resolveColumns(const CsvTable& t, const QStringList& specs, const QString& option,
                           std::vector<int>& out, QString* error)
{
    static const QRegularExpression range(R"(^\s*(\d+)\s*-\s*(\d+)\s*$)");
    for (const QString& spec : specs) {
        if (spec.trimmed().isEmpty()) continue;
        const int c = t.findColumn(spec);
        if (c >= 0) {
            out.push_back(c);
            continue;
        }
        const auto m = range.match(spec);
        const int a = m.hasMatch() ? m.captured(1).toInt() : 0;
        const int b = m.hasMatch() ? m.captured(2).toInt() : 0;
        if (a >= 1 && a <= b && b <= t.columnCount()) {
            for (int i = a; i <= b; ++i)
                out.push_back(i - 1);
            continue;
        }
        return fail(error, t.path + ": " + option + "no column " + quoted(spec.trimmed()) +
                               " (columns: " + shortList(t.columnNames()) + ")");
    }
    return true;
}

static QStringList splitList(const QStringList& items)
{
    QStringList out;
    for (const QString& i : items)
        out << i.split(',');
    return out;
}

// The columns of a new model, its kind, classes and one-hot categories.
// Long: ignored, target and feature columns resolved in that order, each checked against the
// ones before, with errors that name the option that chose them.
bool chooseRoles(const CsvTable& t, const TabularOptions& opt, TabularSchema& s, Plan& p,
                 QStringList* notes, QString* error)
{
    std::vector<int> ignored, targets, features;
    QStringList leftOut; // policy "ignore": features with missing cells
    const QString ignoreName = forReader(opt.reader, "--ignore: ", "ignored columns: ");
    const QString featuresName = forReader(opt.reader, "--features: ", "feature columns: ");
    if (!resolveColumns(t, splitList(opt.ignore), ignoreName, ignored, error)) return false;
    auto isIgnored = [&](int c) {
        return std::find(ignored.begin(), ignored.end(), c) != ignored.end();
    };
    if (opt.target.trimmed().isEmpty()) {
        for (int c = t.columnCount() - 1; c >= 0 && targets.empty(); --c)
            if (!isIgnored(c)) targets.push_back(c);
    } else if (!resolveColumns(t,
                               t.findColumn(opt.target) >= 0 ? QStringList{opt.target}
                                                             : opt.target.split(','),
                               "", targets, error)) {
        return false;
    }
    for (int c : targets)
        if (isIgnored(c))
            return fail(error, t.path + ": " + ignoreName + quoted(t.columns[size_t(c)].name) +
                                   " is the target");
    auto isTarget = [&](int c) {
        return std::find(targets.begin(), targets.end(), c) != targets.end();
    };
    std::vector<int> wanted;
    if (!opt.features.isEmpty()) {
        if (!resolveColumns(t, splitList(opt.features), featuresName, wanted, error)) return false;
    } else {
        for (int c = 0; c < t.columnCount(); ++c)
            wanted.push_back(c);
    }
    for (int c : wanted) {
        if (isTarget(c)) {
            if (!opt.features.isEmpty())
                return fail(error, t.path + ": " + featuresName +
                                       quoted(t.columns[size_t(c)].name) + " is the target");
            continue;
        }
        if (isIgnored(c) || std::find(features.begin(), features.end(), c) != features.end())
            continue;
        // Policy "ignore": a feature with missing cells is left out.
        if (opt.missing == "ignore" && t.columns[static_cast<size_t>(c)].missingCount > 0) {
            leftOut << quoted(t.columns[static_cast<size_t>(c)].name) + " " +
                           QString::number(t.columns[static_cast<size_t>(c)].missingCount);
            continue;
        }
        features.push_back(c);
    }
    if (features.empty())
        return fail(error, t.path + ": no feature columns are left (the others are ignored" +
                               (leftOut.isEmpty()
                                    ? QString(")")
                                    : " or have missing values: " + leftOut.join(", ") + ")"));
    if (!leftOut.isEmpty() && notes)
        notes->append("left out " + countOf(leftOut.size(), "column") + " with missing values (" +
                      shortList(leftOut, 5) + ")");

    for (int c : features) {
        const CsvColumn& col = t.columns[static_cast<size_t>(c)];
        s.features << col.name;
        s.featureCategories.emplace_back();
        if (!col.isText()) {
            if (!checkNumeric(t, c, error)) return false;
            continue;
        }
        if (col.moreCategories || col.categories.size() > kMaxOneHot)
            return fail(error,
                        t.path + ": column " + QString::number(c + 1) + " (" + quoted(col.name) +
                            ") holds text with " +
                            (col.moreCategories ? QString("over 1000")
                                                : QString::number(col.categories.size())) +
                            " distinct values (such as " + quoted(col.firstText.text) + " at " +
                            rowName(t, col.firstText.row) + "); a text feature can have at most " +
                            QString::number(kMaxOneHot) + " (one-hot encoded); " +
                            forReader(opt.reader, "leave it out with --ignore " + quoted(col.name),
                                      "leave the column out of the file to open it"));
        if (!checkUtf8(t, c, error)) return false;
        s.featureCategories.back() << QString("?"); // marks one-hot; categories come later
    }
    for (int c : targets) {
        s.targets << t.columns[static_cast<size_t>(c)].name;
        const bool text = t.columns[static_cast<size_t>(c)].isText();
        if (text && targets.size() > 1)
            return fail(error, t.path + ": target " + s.targets.back() +
                                   " holds text; several targets must all be numbers");
        if (!text && !checkNumeric(t, c, error)) return false;
        if (text && !checkUtf8(t, c, error)) return false;
    }
    s.target = s.targets.first();
    p.featureCols = features;
    p.targetCols = targets;
    return true;
}

// Sorted distinct texts of a column over some rows.
QStringList labelsOf(const CsvColumn& col, const std::vector<int64_t>& rows)
{
    std::vector<bool> seen(static_cast<size_t>(col.categories.size()), false);
    for (int64_t r : rows) {
        const int32_t code = col.codes[static_cast<size_t>(r)];
        if (code >= 0) seen[static_cast<size_t>(code)] = true;
    }
    QStringList labels;
    for (size_t i = 0; i < seen.size(); ++i)
        if (seen[i]) labels << col.categories[static_cast<qsizetype>(i)];
    labels.sort();
    return labels;
}

bool chooseKind(const CsvTable& t, const TabularOptions& opt, const Plan& p,
                const std::vector<int64_t>& kept, TabularSchema& s, QString* error)
{
    const CsvColumn& col = t.columns[static_cast<size_t>(p.targetCols[0])];
    const QString name = quoted(s.target);
    if (p.targetCols.size() > 1) {
        if (opt.kind == "classification")
            return fail(error, t.path + ": several targets make a regression task, not "
                                        "classification");
        s.kind = TabularKind::Regression;
        return true;
    }
    if (col.isText()) {
        if (opt.kind == "regression")
            return fail(error, t.path + ": target " + name +
                                   " holds text, so it cannot be a regression target");
        if (col.moreCategories)
            return fail(error, t.path + ": target " + name + " has over " +
                                   QString::number(kMaxClasses) +
                                   " distinct labels; too many "
                                   "classes");
        s.classes = labelsOf(col, kept);
        s.textClasses = true;
        for (int k = 0; k < s.classes.size(); ++k)
            s.classValues.push_back(static_cast<float>(k));
    } else {
        std::vector<float> distinct; // sorted; stops growing past kMaxClasses
        bool integral = true;
        for (int64_t r : kept) {
            const float v = col.numbers[static_cast<size_t>(r)];
            integral = integral && v == std::round(v);
            const auto it = std::lower_bound(distinct.begin(), distinct.end(), v);
            if (it == distinct.end() || *it != v) {
                if (distinct.size() > static_cast<size_t>(kMaxClasses)) break;
                distinct.insert(it, v);
            }
        }
        const auto n = static_cast<int64_t>(distinct.size());
        const bool classify = opt.kind == "classification" ||
                              (opt.kind == "auto" && integral && n >= 2 && n <= kMaxAutoClasses &&
                               n * 2 <= std::max<int64_t>(static_cast<int64_t>(kept.size()), 4));
        if (!classify) {
            s.kind = TabularKind::Regression;
            return true;
        }
        if (n > kMaxClasses)
            return fail(error, t.path + ": target " + name + " has over " +
                                   QString::number(kMaxClasses) +
                                   " distinct values; too many classes (is it a regression "
                                   "target?)");
        s.classValues = distinct;
        for (float v : distinct)
            s.classes << QString::number(static_cast<double>(v));
    }
    if (s.classes.size() < 2)
        return fail(error, t.path + ": target " + name +
                               " has a single value; nothing to "
                               "classify");
    s.kind = s.classes.size() == 2 ? TabularKind::Binary : TabularKind::MultiClass;
    return true;
}

} // namespace il::tasks::tabular
