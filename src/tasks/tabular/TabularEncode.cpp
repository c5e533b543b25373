// From a table to encoded rows: splits, normalisation statistics (training rows only) and
// the encoding itself. Column roles, checks and missing values: TabularColumns.cpp.
#include "TabularColumns.h"

#include "CrossValidation.h"
#include "Random.h"

#include <algorithm>
#include <cmath>

namespace il::tasks {

using namespace tabular;

namespace {

// Feature f's number in row r: a missing cell stands for the schema's fill value (policy "mean").
float featureNumber(const CsvColumn& col, int64_t r, const TabularSchema& s, size_t f)
{
    if (!s.missingFill.empty() && col.isMissing(r)) return s.missingFill[f];
    return col.numbers[static_cast<size_t>(r)];
}

// Policy "mean": each numeric feature's mean over the training rows that have it (0 when none
// has), so validation and test rows stay unseen; one-hot features get 0 (unused).
std::vector<float> fitMissingFill(const CsvTable& t, const Plan& p, const TabularSchema& s,
                                  const std::vector<int64_t>& train)
{
    std::vector<float> fill(p.featureCols.size(), 0.f);
    for (size_t f = 0; f < p.featureCols.size(); ++f) {
        if (!s.featureCategories[f].isEmpty()) continue;
        const CsvColumn& col = t.columns[static_cast<size_t>(p.featureCols[f])];
        double sum = 0;
        int64_t n = 0;
        for (int64_t r : train)
            if (!col.isMissing(r)) {
                sum += col.numbers[static_cast<size_t>(r)];
                ++n;
            }
        fill[f] = n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.f;
    }
    return fill;
}

// Offsets and scales from the training rows only, so validation and test rows stay unseen.
void fitNormalisation(const CsvTable& t, const Plan& p, const std::vector<int64_t>& train,
                      TabularSchema& s)
{
    const bool minmax = s.normalisation == "minmax";
    // feature: the feature's index (its missing cells are filled), or -1 for a target.
    auto fit = [&](const CsvColumn& col, int feature, float& offset, float& scale) {
        double sum = 0, sumSq = 0, lo = INFINITY, hi = -INFINITY;
        for (int64_t r : train) {
            const double v = feature >= 0 ? featureNumber(col, r, s, static_cast<size_t>(feature))
                                          : col.numbers[static_cast<size_t>(r)];
            sum += v;
            sumSq += v * v;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        const auto n = static_cast<double>(train.size());
        if (minmax) {
            offset = static_cast<float>(lo);
            scale = hi - lo > 1e-12 ? static_cast<float>(hi - lo) : 1.f;
        } else {
            const double mean = sum / n;
            const double sd = std::sqrt(std::max(0.0, sumSq / n - mean * mean));
            offset = static_cast<float>(mean);
            scale = sd > 1e-12 ? static_cast<float>(sd) : 1.f; // a constant passes centred
        }
    };
    s.inputOffset.clear();
    s.inputScale.clear();
    for (size_t i = 0; i < p.featureCols.size(); ++i) {
        const QStringList& cats = s.featureCategories[i];
        if (!cats.isEmpty()) {
            s.inputOffset.insert(s.inputOffset.end(), static_cast<size_t>(cats.size()), 0.f);
            s.inputScale.insert(s.inputScale.end(), static_cast<size_t>(cats.size()), 1.f);
            continue;
        }
        float offset = 0, scale = 1;
        fit(t.columns[static_cast<size_t>(p.featureCols[i])], static_cast<int>(i), offset, scale);
        s.inputOffset.push_back(offset);
        s.inputScale.push_back(scale);
    }
    s.targetOffset.clear();
    s.targetScale.clear();
    if (s.kind != TabularKind::Regression) return;
    for (int c : p.targetCols) {
        float offset = 0, scale = 1;
        fit(t.columns[static_cast<size_t>(c)], -1, offset, scale);
        s.targetOffset.push_back(offset);
        s.targetScale.push_back(scale);
    }
}

bool encodeRows(const CsvTable& t, const TabularSchema& s, const Plan& p,
                const std::vector<int64_t>& rows, TabularSplit& out, QString* error)
{
    const auto width = static_cast<size_t>(s.inputWidth());
    const auto n = rows.size();
    const bool withTarget = !p.targetCols.empty();
    const auto tw = static_cast<size_t>(s.targetWidth());
    out = TabularSplit{};
    out.rows = static_cast<int64_t>(n);
    out.source = rows;
    out.x.assign(n * width, 0.f);
    if (withTarget) {
        out.y.assign(n * tw, 0.f);
        out.rawTarget.assign(n * tw, 0.f);
    }
    for (size_t i = 0; i < n; ++i) {
        const int64_t r = rows[i];
        float* x = out.x.data() + i * width;
        size_t k = 0;
        for (size_t f = 0; f < p.featureCols.size(); ++f) {
            const CsvColumn& col = t.columns[static_cast<size_t>(p.featureCols[f])];
            const QStringList& cats = s.featureCategories[f];
            if (cats.isEmpty()) {
                x[k] = (featureNumber(col, r, s, f) - s.inputOffset[k]) / s.inputScale[k];
                ++k;
                continue;
            }
            const int32_t c = p.featureLabels[f].at(r);
            if (c < 0)
                return fail(error, t.cellWhere(r, p.featureCols[f]) + ": category " +
                                       quoted(p.featureLabels[f].text(r)) +
                                       " was not seen in training (categories: " + shortList(cats) +
                                       ")");
            x[k + static_cast<size_t>(c)] = 1.f;
            k += static_cast<size_t>(cats.size());
        }
        if (!withTarget) continue;
        if (s.kind == TabularKind::Regression) {
            for (size_t j = 0; j < tw; ++j) {
                const float v =
                    t.columns[static_cast<size_t>(p.targetCols[j])].numbers[static_cast<size_t>(r)];
                out.rawTarget[i * tw + j] = v;
                out.y[i * tw + j] = (v - s.targetOffset[j]) / s.targetScale[j];
            }
            continue;
        }
        const int tc = p.targetCols[0];
        int32_t cls = -1;
        float raw = 0;
        if (s.textClasses) {
            cls = p.classLabels.at(r);
            raw = static_cast<float>(cls);
        } else {
            raw = t.columns[static_cast<size_t>(tc)].numbers[static_cast<size_t>(r)];
            const auto it = std::find(s.classValues.begin(), s.classValues.end(), raw);
            if (it != s.classValues.end()) cls = static_cast<int32_t>(it - s.classValues.begin());
        }
        if (cls < 0)
            return fail(
                error,
                t.cellWhere(r, tc) + ": class " +
                    quoted(s.textClasses ? p.classLabels.text(r) : QString::number(double(raw))) +
                    " was not seen in training (classes: " + shortList(s.classes) + ")");
        out.y[i] = static_cast<float>(cls);
        out.rawTarget[i] = raw;
    }
    return true;
}

bool checkChoice(const QString& value, const QStringList& allowed, const QString& option,
                 QString* error)
{
    if (allowed.contains(value)) return true;
    return fail(error, option + " must be " + allowed.join(" or ") + ", not " + quoted(value));
}

} // namespace

// Long: schema, splits, then fits on the training rows; each stage reads what the one before
// decided (the plan, the kept rows, the schema, the split sizes).
bool prepareTabular(const CsvTable& t, const TabularOptions& opt, TabularDataset& out,
                    QString* error)
{
    out = TabularDataset{};
    TabularSchema& s = out.schema;
    if (t.columnCount() < 2)
        return fail(error, t.path + ": a table needs at least two columns (features and a target)");
    Plan p;
    std::vector<int64_t> kept;
    if (opt.fixedSchema) {
        s = *opt.fixedSchema;
        s.valSplit = opt.valSplit; // the caller passes the saved split unless asked otherwise
        s.testSplit = opt.testSplit;
        s.splitSeed = opt.seed;
        if (s.valSplit > 0) s.folds = 0; // a validation split asked for instead
        if (!bindColumns(t, s, Targets::Required, p, error) ||
            !keepRows(t, p.usedCols(), p.fillableCols(s), s.missing, opt.reader, kept, &out.notes,
                      error))
            return false;
    } else {
        QString norm = opt.normalisation.toLower().remove('-');
        if (!checkChoice(opt.kind, {"auto", "regression", "classification"}, "--kind", error) ||
            !checkChoice(norm, {"zscore", "minmax"}, "--normalise", error) ||
            !checkChoice(opt.missing, {"fail", "drop", "ignore", "mean"}, "--missing", error) ||
            !chooseRoles(t, opt, s, p, &out.notes, error) ||
            !keepRows(t, p.usedCols(), p.fillableCols(s), opt.missing, opt.reader, kept, &out.notes,
                      error))
            return false;
        for (size_t f = 0; f < p.featureCols.size(); ++f)
            if (!s.featureCategories[f].isEmpty())
                s.featureCategories[f] =
                    labelsOf(t.columns[static_cast<size_t>(p.featureCols[f])], kept);
        if (!chooseKind(t, opt, p, kept, s, error)) return false;
        s.normalisation = norm;
        s.missing = opt.missing;
        s.valSplit = opt.valSplit;
        s.testSplit = opt.testSplit;
        s.splitSeed = opt.seed;
        if (!bindColumns(t, s, Targets::Required, p, error)) return false;
    }

    // Splits: the file's own test rows (JSON x_test) or a seeded fraction, then validation.
    const auto n = static_cast<int64_t>(kept.size());
    std::vector<int64_t> pool, trainIdx, valIdx, testIdx;
    for (int64_t r : kept)
        (t.testStart >= 0 && r >= t.testStart ? testIdx : pool).push_back(r);
    double testSplit = s.testSplit, valSplit = s.valSplit;
    if (t.testStart >= 0 && testSplit > 0)
        return fail(error, t.path + ": the file has its own test rows (x_test); --test-split "
                                    "does not apply");
    if (!opt.fixedSchema) {
        // Cross-validation: a small regression table by default, unless a validation split was
        // asked for.
        int folds = opt.folds;
        if (folds < 0)
            folds = valSplit < 0 && s.kind == TabularKind::Regression &&
                            n >= kMinRowsForValidation && n < kCrossValidateBelowRows
                        ? kDefaultFolds
                        : 0;
        if (folds > 0 && valSplit > 0)
            return fail(error, forReader(opt.reader,
                                         "give a validation split (--val-split) or "
                                         "cross-validation (--folds), not both",
                                         "cross-validation takes the place of a validation "
                                         "split: choose one"));
        if (folds == 1 || folds > kMaxFolds)
            return fail(error, QString("%1 folds: cross-validation takes 2 to %2 folds (0: off)")
                                   .arg(folds)
                                   .arg(kMaxFolds));
        if (folds > 0) valSplit = 0;
        s.folds = folds;
    }
    if (valSplit < 0) valSplit = n >= kMinRowsForValidation ? 0.2 : 0.0;
    if (valSplit + std::max(testSplit, 0.0) >= 1.0)
        return fail(error, "the validation and test splits must add up to less than 1 (got " +
                               QString::number(valSplit + testSplit) + ")");
    const auto poolN = static_cast<int64_t>(pool.size());
    auto count = [&](double fraction) {
        const auto k = static_cast<int64_t>(std::floor(fraction * static_cast<double>(n)));
        return fraction > 0 && k == 0 ? int64_t(1) : k;
    };
    const int64_t testRows = t.testStart >= 0 ? 0 : count(testSplit);
    const int64_t valRows = count(valSplit);
    if (poolN - testRows - valRows < 1)
        return fail(error, t.path + ": no rows left for training after the validation and "
                                    "test splits");
    if (s.folds > 0 && poolN - testRows < 2 * s.folds)
        return fail(error, QString("%1: %2 training rows are too few for %3 folds (each fold "
                                   "holds out at least 2)")
                               .arg(t.path)
                               .arg(poolN - testRows)
                               .arg(s.folds));
    if (valSplit == 0 && s.valSplit < 0 && s.folds == 0)
        out.notes << QString::number(n) + " rows: too few for a validation split, training on all";
    const std::vector<int32_t> order = Rng::derive(s.splitSeed, "split").permutation(poolN);
    for (int64_t i = 0; i < poolN; ++i) {
        const int64_t r = pool[static_cast<size_t>(order[static_cast<size_t>(i)])];
        (i < testRows ? testIdx : i < testRows + valRows ? valIdx : trainIdx).push_back(r);
    }
    std::sort(trainIdx.begin(), trainIdx.end());
    std::sort(valIdx.begin(), valIdx.end());
    std::sort(testIdx.begin(), testIdx.end());
    s.valSplit = valSplit;
    if (!opt.fixedSchema) {
        if (s.missing == "mean") s.missingFill = fitMissingFill(t, p, s, trainIdx);
        fitNormalisation(t, p, trainIdx, s);
    }
    return encodeRows(t, s, p, trainIdx, out.train, error) &&
           encodeRows(t, s, p, valIdx, out.val, error) &&
           encodeRows(t, s, p, testIdx, out.test, error);
}

bool encodeTabular(const CsvTable& t, const TabularSchema& s, const QString& missing,
                   bool withTargets, TabularSplit& out, QStringList* notes, QString* error,
                   MessageReader reader)
{
    Plan p;
    std::vector<int64_t> kept;
    if (missing == "mean" && s.missingFill.empty())
        return fail(error, "the model has no mean values to fill missing cells with (it was "
                           "not trained with missing values filled)");
    // Without policy "mean" nothing is filled, whatever the schema holds.
    TabularSchema filled;
    const TabularSchema* schema = &s;
    if (missing != "mean" && !s.missingFill.empty()) {
        filled = s;
        filled.missingFill.clear();
        schema = &filled;
    }
    return checkChoice(missing, {"fail", "drop", "mean"}, "--missing", error) &&
           bindColumns(t, *schema, withTargets ? Targets::IfPresent : Targets::Ignore, p, error) &&
           keepRows(t, p.usedCols(), p.fillableCols(*schema), missing, reader, kept, notes,
                    error) &&
           encodeRows(t, *schema, p, kept, out, error);
}

} // namespace il::tasks