#include "ModelJson.h"

#include "NumberText.h"
#include "PrintableText.h"

#include <QJsonArray>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace il::io {

namespace {

constexpr double kMaxExactInteger = kMaxExactCount; // 2^53
// Counts without a range of their own: any whole number a JSON number holds exactly.
constexpr ValueRange kCount{0, kMaxExactCount, "a whole number"};

QString shown(const QJsonValue& v)
{
    switch (v.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double:
        return QString::number(v.toDouble(), 'g', 17);
    case QJsonValue::String:
        return quoted(v.toString(), 40);
    case QJsonValue::Array:
        return QStringLiteral("an array");
    case QJsonValue::Object:
        return QStringLiteral("an object");
    default:
        return QStringLiteral("nothing");
    }
}

// Reads the fields of one JSON object into variables, remembering the first error. A missing
// key leaves its variable alone.
class FieldReader {
public:
    FieldReader(const QJsonObject& o, QString where) : m_o(o), m_where(std::move(where)) {}

    // A whole number within range (and within what Int and a JSON number hold exactly).
    template <typename Int>
    void integer(const char* key, Int& out, const ValueRange& range = kCount)
    {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (v.isUndefined() || !m_error.isEmpty()) return;
        const double d = v.toDouble(std::nan(""));
        const double max = std::min(
            {kMaxExactInteger, static_cast<double>(std::numeric_limits<Int>::max()), range.max});
        if (!v.isDouble() || std::floor(d) != d || d < range.min || d > max)
            fail(key, QString::fromStdString(range.describe()), v);
        else
            out = static_cast<Int>(d);
    }

    // Any number (NaN and infinities as doubleToJson writes them).
    template <typename Real> void number(const char* key, Real& out)
    {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (v.isUndefined() || !m_error.isEmpty()) return;
        double d = 0;
        if (!doubleFromJson(v, d))
            fail(key, QStringLiteral("a number"), v);
        else
            out = static_cast<Real>(d);
    }

    // A number within range, which also refuses NaN.
    template <typename Real> void number(const char* key, Real& out, const ValueRange& range)
    {
        Real value = out;
        number(key, value);
        if (!m_error.isEmpty() || m_o.value(QLatin1String(key)).isUndefined()) return;
        bool inRange = range.contains(static_cast<double>(value));
        if constexpr (std::is_same_v<Real, float>) inRange = range.containsFloat(value);
        if (!inRange)
            fail(key, QString::fromStdString(range.describe()), m_o.value(QLatin1String(key)));
        else
            out = value;
    }

    void boolean(const char* key, bool& out)
    {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (v.isUndefined() || !m_error.isEmpty()) return;
        if (!v.isBool())
            fail(key, QStringLiteral("true or false"), v);
        else
            out = v.toBool();
    }

    // A name parsed by one of the engine's parseX(const std::string&, Enum&) functions.
    template <typename Enum, typename Parse> void name(const char* key, Enum& out, Parse parse)
    {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (v.isUndefined() || !m_error.isEmpty()) return;
        Enum e = out;
        if (!v.isString() || !parse(v.toString().toStdString(), e))
            fail(key, QStringLiteral("a known name"), v);
        else
            out = e;
    }

    // A seed: an integer number, or a decimal string for values beyond 2^53.
    void seed(const char* key, uint64_t& out)
    {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (v.isUndefined() || !m_error.isEmpty()) return;
        bool ok = false;
        uint64_t s = 0;
        if (v.isString()) {
            s = v.toString().toULongLong(&ok);
        } else if (v.isDouble()) {
            const double d = v.toDouble();
            ok = d >= 0 && d <= kMaxExactInteger && std::floor(d) == d;
            s = ok ? static_cast<uint64_t>(d) : 0;
        }
        if (!ok)
            fail(key, QStringLiteral("an unsigned 64-bit integer"), v);
        else
            out = s;
    }

    QJsonObject object(const char* key)
    {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (!v.isUndefined() && !v.isObject() && m_error.isEmpty())
            fail(key, QStringLiteral("an object"), v);
        return v.toObject();
    }

    void fail(const char* key, const QString& what, const QJsonValue& got)
    {
        if (m_error.isEmpty())
            m_error = QStringLiteral("%1: \"%2\" must be %3, not %4")
                          .arg(m_where, QLatin1String(key), what, shown(got));
    }
    const QString& error() const { return m_error; }

private:
    QJsonObject m_o;
    QString m_where;
    QString m_error;
};

// A float as the double of its shortest decimal form (1e-3f -> 0.001, not 0.0010000000474974513),
// when that double converts back to the same float, so the file stays readable and exact.
QJsonValue floatToJson(float f)
{
    if (!std::isfinite(f)) return doubleToJson(f);
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf - 1, f);
    *r.ptr = 0;
    double d = 0;
    if (readDouble(std::string_view(buf, static_cast<size_t>(r.ptr - buf)), d) != NumberRead::Ok)
        return static_cast<double>(f);
    return static_cast<float>(d) == f ? d : static_cast<double>(f);
}

bool finish(const QString& problem, QString* error)
{
    if (!problem.isEmpty() && error) *error = problem;
    return problem.isEmpty();
}

// The "groups" object of the optimizer: per parameter group (ParameterGroupType), its "lr" and
// the optimizer settings it overrides. Unknown groups and keys no optimizer has are ignored.
QString groupsFromJson(const QJsonObject& json, OptimizerConfig& c)
{
    for (const ParameterGroupType& type : parameterGroupTypes()) {
        const QJsonValue v = json.value(QLatin1String(type.name));
        if (v.isUndefined()) continue;
        const QString where = QStringLiteral("hyperparameters.optimizer.groups");
        if (!v.isObject()) {
            FieldReader r(json, where);
            r.fail(type.name, QStringLiteral("an object"), v);
            return r.error();
        }
        const QJsonObject o = v.toObject();
        FieldReader r(o, where + u'.' + QLatin1String(type.name));
        float lr = c.group(type.name).lr;
        r.number("lr", lr);
        if (!r.error().isEmpty()) return r.error();
        if (!(lr >= 0.f && std::isfinite(lr)))
            r.fail("lr", QStringLiteral("0 (the run's) or more"), o.value("lr"));
        else
            c.setGroupLr(type.name, lr);
        for (auto it = o.begin(); it != o.end() && r.error().isEmpty(); ++it) {
            const std::string key = it.key().toStdString();
            const OptimizerSetting* s = nullptr;
            for (const OptimizerType& t : optimizerTypes())
                if (!s) s = t.setting(key);
            if (!s) continue;
            float value = 0.f;
            r.number(s->key, value);
            if (!r.error().isEmpty()) break;
            if (!(value >= s->min && value <= s->max))
                r.fail(s->key, QStringLiteral("between %1 and %2").arg(s->min).arg(s->max),
                       it.value());
            else
                c.setGroupSetting(type.name, s->key, value);
        }
        if (!r.error().isEmpty()) return r.error();
    }
    return {};
}

// The "optimizer" object: a "kind", the settings that optimizer has (OptimizerType) and the
// parameter groups' settings ("groups"). Keys of other optimizers' settings are ignored: files
// written before the registry list them all. A file without "groups" (written before they
// existed) leaves the groups as they are: their defaults, unless the caller set them.
bool optimizerFromJson(const QJsonObject& json, OptimizerConfig& config, QString* error)
{
    FieldReader r(json, QStringLiteral("hyperparameters.optimizer"));
    const OptimizerType* type = &config.type();
    r.name("kind", type, [](const std::string& name, const OptimizerType*& out) {
        out = findOptimizer(name);
        return out != nullptr;
    });
    OptimizerConfig c = type == &config.type() ? config : config.switchedTo(*type);
    for (const OptimizerSetting& s : type->settings) {
        float v = c.value(s.key);
        r.number(s.key, v);
        if (!r.error().isEmpty()) break;
        if (!(v >= s.min && v <= s.max))
            r.fail(s.key, QStringLiteral("between %1 and %2").arg(s.min).arg(s.max),
                   json.value(QLatin1String(s.key)));
        else
            c.set(s.key, v);
    }
    if (!r.error().isEmpty()) return finish(r.error(), error);
    const QJsonObject groups = r.object("groups");
    if (!r.error().isEmpty()) return finish(r.error(), error);
    if (const QString problem = groupsFromJson(groups, c); !problem.isEmpty())
        return finish(problem, error);
    config = c;
    return true;
}

QJsonObject groupsToJson(const OptimizerConfig& c)
{
    QJsonObject groups;
    for (const GroupSettings& g : c.groups()) {
        QJsonObject o{{"lr", floatToJson(g.lr)}};
        for (const auto& [key, value] : g.overrides)
            o.insert(QString::fromStdString(key), floatToJson(value));
        groups.insert(QString::fromStdString(g.group), o);
    }
    return groups;
}

// An integer in a JSON number, exactly (|v| <= 2^53).
bool integerFromJson(const QJsonValue& v, int64_t& out)
{
    const double d = v.toDouble(std::nan(""));
    if (!v.isDouble() || std::floor(d) != d || std::fabs(d) > kMaxExactInteger) return false;
    out = static_cast<int64_t>(d);
    return true;
}

// One evaluation: [step, epoch, train_loss, val_loss, lr, metric]. A bucket of a long run's
// evaluations (TrainingHistory.h) adds [count, first_step, train_min, train_max, val_min,
// val_max]; files written before the history was bounded hold only the first kind.
QJsonArray historyRowToJson(const HistoryPoint& p)
{
    QJsonArray row{qint64(p.step),          doubleToJson(p.epoch), doubleToJson(p.trainLoss),
                   doubleToJson(p.valLoss), doubleToJson(p.lr),    doubleToJson(p.metric)};
    if (p.count > 1)
        for (const QJsonValue& v : {QJsonValue(qint64(p.count)), QJsonValue(qint64(p.firstStep)),
                                    doubleToJson(p.trainMin), doubleToJson(p.trainMax),
                                    doubleToJson(p.valMin), doubleToJson(p.valMax)})
            row.append(v);
    return row;
}

bool historyRowFromJson(const QJsonValue& value, HistoryPoint& p)
{
    const QJsonArray row = value.toArray();
    if (!value.isArray() || (row.size() != 6 && row.size() != 12)) return false;
    if (!integerFromJson(row.at(0), p.step) || !doubleFromJson(row.at(1), p.epoch) ||
        !doubleFromJson(row.at(2), p.trainLoss) || !doubleFromJson(row.at(3), p.valLoss) ||
        !doubleFromJson(row.at(4), p.lr) || !doubleFromJson(row.at(5), p.metric))
        return false;
    if (row.size() == 6) return true;
    return integerFromJson(row.at(6), p.count) && p.count >= 2 &&
           integerFromJson(row.at(7), p.firstStep) && p.firstStep <= p.step &&
           doubleFromJson(row.at(8), p.trainMin) && doubleFromJson(row.at(9), p.trainMax) &&
           doubleFromJson(row.at(10), p.valMin) && doubleFromJson(row.at(11), p.valMax);
}

} // namespace

QJsonValue doubleToJson(double v)
{
    if (std::isnan(v)) return QJsonValue(QJsonValue::Null);
    if (std::isinf(v)) return v > 0 ? QStringLiteral("Infinity") : QStringLiteral("-Infinity");
    return v;
}

bool doubleFromJson(const QJsonValue& v, double& out)
{
    if (v.isNull())
        out = std::numeric_limits<double>::quiet_NaN();
    else if (v.isDouble())
        out = v.toDouble();
    else if (v.toString() == QLatin1String("Infinity"))
        out = std::numeric_limits<double>::infinity();
    else if (v.toString() == QLatin1String("-Infinity"))
        out = -std::numeric_limits<double>::infinity();
    else
        return false;
    return true;
}

QJsonObject trainerConfigToJson(const TrainerConfig& c)
{
    const ScheduleConfig& s = c.schedule;
    QJsonObject optimizer{{"kind", QString::fromStdString(c.optimizer.name())}};
    for (const OptimizerSetting& setting : c.optimizer.type().settings)
        optimizer.insert(QLatin1String(setting.key), floatToJson(c.optimizer.value(setting.key)));
    optimizer.insert(QStringLiteral("groups"), groupsToJson(c.optimizer));
    QJsonObject schedule{{"kind", QString::fromStdString(scheduleName(s.kind))},
                         {"lr_max", floatToJson(s.lrMax)},
                         {"lr_min", floatToJson(s.lrMin)},
                         {"step_every", qint64(s.stepEvery)},
                         {"gamma", floatToJson(s.gamma)},
                         {"warmup_steps", qint64(s.warmupSteps)}};
    const QJsonValue seed = static_cast<double>(c.seed) <= kMaxExactInteger
                                ? QJsonValue(qint64(c.seed))
                                : QJsonValue(QString::number(c.seed));
    return QJsonObject{
        {"epochs", qint64(c.epochs)},
        {"steps", qint64(c.steps)},
        {"max_seconds", doubleToJson(c.maxSeconds)},
        {"batch_size", qint64(c.batchSize)},
        {"shuffle", c.shuffle},
        {"seed", seed},
        {"loss", QString::fromStdString(lossName(c.loss))},
        {"label_smoothing", floatToJson(c.labelSmoothing)},
        // The rule, not the weights: a resumed run computes them again from
        // its training rows (TrainerConfig::classWeights).
        {"class_weight", QString::fromStdString(classWeightingName(c.classWeighting))},
        {"optimizer", optimizer},
        {"schedule", schedule},
        {"clip_norm", floatToJson(c.clipNorm)},
        {"patience", c.patience},
        {"min_delta", floatToJson(c.minDelta)},
        {"restore_best", c.restoreBest},
        {"target_loss", doubleToJson(c.targetLoss)},
        {"eval_every", qint64(c.evalEvery)}};
}

bool trainerConfigFromJson(const QJsonObject& json, TrainerConfig& config, QString* error)
{
    TrainerConfig c = config;
    FieldReader r(json, QStringLiteral("hyperparameters"));
    // Every number within the range the CLI's options accept (configRange, Trainer.h).
    r.integer("epochs", c.epochs, configRange::epochs);
    r.integer("steps", c.steps, configRange::steps);
    r.number("max_seconds", c.maxSeconds, configRange::maxSeconds);
    r.integer("batch_size", c.batchSize, configRange::batchSize);
    r.boolean("shuffle", c.shuffle);
    r.seed("seed", c.seed);
    r.name("loss", c.loss, parseLoss);
    r.number("label_smoothing", c.labelSmoothing, configRange::labelSmoothing);
    // Files from before class weighting have no "class_weight": none, as they trained.
    r.name("class_weight", c.classWeighting, parseClassWeighting);
    const QJsonObject optimizer = r.object("optimizer");
    const QJsonObject schedule = r.object("schedule");
    r.number("clip_norm", c.clipNorm, configRange::clipNorm);
    r.integer("patience", c.patience, configRange::patience);
    r.number("min_delta", c.minDelta, configRange::minDelta);
    r.boolean("restore_best", c.restoreBest);
    r.number("target_loss", c.targetLoss, configRange::targetLoss);
    r.integer("eval_every", c.evalEvery, configRange::evalEvery);
    // "read_every" and "progress_interval", in files written before the run policy moved out
    // of the hyperparameters (RunPolicy), are ignored like any unknown key.
    if (!r.error().isEmpty()) return finish(r.error(), error);

    if (!optimizerFromJson(optimizer, c.optimizer, error)) return false;

    FieldReader s(schedule, QStringLiteral("hyperparameters.schedule"));
    s.name("kind", c.schedule.kind, parseSchedule);
    s.number("lr_max", c.schedule.lrMax, configRange::lrMax);
    s.number("lr_min", c.schedule.lrMin, configRange::lrMin);
    s.integer("step_every", c.schedule.stepEvery, configRange::stepEvery);
    s.number("gamma", c.schedule.gamma, configRange::gamma);
    s.integer("warmup_steps", c.schedule.warmupSteps, configRange::warmupSteps);
    if (!s.error().isEmpty()) return finish(s.error(), error);

    config = c;
    return true;
}

QJsonObject trainingStateToJson(const TrainingState& st)
{
    QJsonArray history;
    for (const HistoryPoint& p : st.history)
        history.append(historyRowToJson(p));
    return QJsonObject{{"step", qint64(st.step)},
                       {"epoch", qint64(st.epoch)},
                       {"step_in_epoch", qint64(st.stepInEpoch)},
                       {"planned_steps", qint64(st.plannedSteps)},
                       {"seconds", doubleToJson(st.seconds)},
                       {"best_val_loss", doubleToJson(st.bestValLoss)},
                       {"evals_without_improvement", qint64(st.evalsWithoutImprovement)},
                       {"pending_loss_sum", doubleToJson(st.pendingLossSum)},
                       {"pending_steps", qint64(st.pendingSteps)},
                       {"history", history}};
}

bool trainingStateFromJson(const QJsonObject& json, TrainingState& state, QString* error)
{
    TrainingState st = state;
    FieldReader r(json, QStringLiteral("training"));
    r.integer("step", st.step);
    r.integer("epoch", st.epoch);
    r.integer("step_in_epoch", st.stepInEpoch);
    r.integer("planned_steps", st.plannedSteps);
    r.number("seconds", st.seconds);
    r.number("best_val_loss", st.bestValLoss);
    r.integer("evals_without_improvement", st.evalsWithoutImprovement);
    // The losses since the last history point: without them a run resumed mid-epoch would
    // record a different epoch mean than one that never stopped.
    r.number("pending_loss_sum", st.pendingLossSum);
    r.integer("pending_steps", st.pendingSteps);
    if (!r.error().isEmpty()) return finish(r.error(), error);
    // The steps of the current epoch are among the steps done; a file that says otherwise would
    // start the run past the end of its data.
    if (st.stepInEpoch > st.step)
        return finish(QStringLiteral("training: \"step_in_epoch\" (%1) is more than \"step\" (%2)")
                          .arg(st.stepInEpoch)
                          .arg(st.step),
                      error);

    const QJsonValue h = json.value(QLatin1String("history"));
    if (!h.isUndefined()) {
        if (!h.isArray())
            return finish(QStringLiteral("training: \"history\" must be an array"), error);
        // Rows beyond the history's limit (a file written before the history was bounded)
        // merge as they are added, so memory stays bounded whatever the file holds.
        const QJsonArray rows = h.toArray();
        st.history.clear();
        for (qsizetype i = 0; i < rows.size(); ++i) {
            HistoryPoint p;
            if (!historyRowFromJson(rows.at(i), p))
                return finish(QStringLiteral("training: history row %1 is not [step, epoch, "
                                             "train_loss, val_loss, lr, metric] or a bucket "
                                             "[..., count, first_step, train_min, train_max, "
                                             "val_min, val_max]")
                                  .arg(i),
                              error);
            st.history.add(p);
        }
    }
    state = std::move(st);
    return true;
}

} // namespace il::io
