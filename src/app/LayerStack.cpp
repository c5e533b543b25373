#include "LayerStack.h"

namespace il::app {

namespace {

QString number(double v)
{
    return QString::number(v, 'g', 6);
}

} // namespace

QString LayerRow::spec() const
{
    if (type == "dense") {
        QString s = size > 0 ? "dense:" + QString::number(size) : QString("dense");
        if (!init.isEmpty()) s += (size > 0 ? ":" : "::") + init;
        return s;
    }
    if (type == "sine") return "sine:" + number(param);
    if (type == "leakyrelu") return "leakyrelu:" + number(param);
    if (type == "fourier") return QString("fourier:%1:%2").arg(size).arg(number(param));
    if (type == "embedding")
        return vocab > 0 ? QString("embedding:%1:%2").arg(vocab).arg(size)
                         : QString("embedding:%1").arg(size);
    return type;
}

LayerRow LayerRow::defaults(const QString& type)
{
    LayerRow r;
    r.type = type;
    if (type == "dense") r.size = 32;
    if (type == "sine") r.param = 30;
    if (type == "leakyrelu") r.param = 0.01;
    if (type == "fourier") {
        r.size = 256;
        r.param = 10;
    }
    if (type == "embedding") r.size = 10;
    return r;
}

QStringList layerTypes()
{
    return {"dense", "relu", "tanh", "sigmoid", "leakyrelu", "sine", "fourier", "embedding"};
}

bool parseLayerRows(const QString& spec, LayerRows& rows, QString* error)
{
    LayerRows out;
    QString compact = spec;
    compact.remove(QChar(' ')).remove(QChar('\t')).remove(QChar('\n')).remove(QChar('\r'));
    const QStringList items = compact.split(',');
    auto fail = [&](int i, const QString& why) {
        if (error) *error = QString("layer %1 \"%2\": %3").arg(i + 1).arg(items[i], why);
        return false;
    };
    for (int i = 0; i < items.size(); ++i) {
        const QStringList parts = items[i].split(':');
        QString kind = parts[0].toLower();
        if (kind == "linear") kind = "dense";
        if (kind == "sin" || kind == "siren") kind = "sine";
        if (kind == "leaky") kind = "leakyrelu";
        if (kind == "embed") kind = "embedding";
        if (!layerTypes().contains(kind)) return fail(i, "unknown layer type");
        LayerRow r = LayerRow::defaults(kind);
        bool ok = true;
        auto intArg = [&](int k) {
            const qlonglong v = parts[k].toLongLong(&ok);
            if (!ok || v <= 0) ok = false;
            return static_cast<int64_t>(v);
        };
        auto realArg = [&](int k) { return parts[k].toDouble(&ok); };
        const int args = static_cast<int>(parts.size()) - 1;
        if (kind == "dense") {
            r.size = 0;
            if (args >= 1 && !parts[1].isEmpty() && parts[1].toLower() != "out") r.size = intArg(1);
            if (ok && args >= 2) {
                r.init = parts[2].toLower();
                if (r.init == "glorot") r.init = "xavier";
                if (r.init == "kaiming") r.init = "he";
                ok = QStringList{"xavier", "he", "siren"}.contains(r.init);
            }
            ok = ok && args <= 2;
        } else if (kind == "sine" || kind == "leakyrelu") {
            if (args == 1) r.param = realArg(1);
            ok = ok && args <= 1;
        } else if (kind == "fourier") {
            if (args >= 1) r.size = intArg(1);
            if (ok && args >= 2) r.param = realArg(2);
            ok = ok && args <= 2;
        } else if (kind == "embedding") {
            if (args == 2) {
                r.vocab = intArg(1);
                if (ok) r.size = intArg(2);
            } else if (args == 1) {
                r.size = intArg(1);
            }
            ok = ok && args >= 1 && args <= 2;
        } else {
            ok = args == 0;
        }
        if (!ok) return fail(i, "the numbers after the type are not right for " + kind);
        out.push_back(r);
    }
    rows = std::move(out);
    return true;
}

QString formatLayerRows(const LayerRows& rows)
{
    QStringList items;
    const int output = outputLayerIndex(rows);
    for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
        LayerRow r = rows[static_cast<size_t>(i)];
        if (i == output) r.size = 0;
        items << r.spec();
    }
    return items.join(',');
}

int outputLayerIndex(const LayerRows& rows)
{
    for (int i = static_cast<int>(rows.size()) - 1; i >= 0; --i)
        if (rows[static_cast<size_t>(i)].type == "dense") return i;
    return -1;
}

void normaliseLayerRows(LayerRows& rows)
{
    const int output = outputLayerIndex(rows);
    for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
        LayerRow& r = rows[static_cast<size_t>(i)];
        if (r.type != "dense") continue;
        if (i == output)
            r.size = 0;
        else if (r.size <= 0)
            r.size = 32;
    }
}

} // namespace il::app
