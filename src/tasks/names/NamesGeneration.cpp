// NamesSchema, context windows, generation and the next-character probabilities.
#include "NamesTask.h"

#include "Counting.h"
#include "Errors.h"
#include "NamesFile.h"
#include "PrintableText.h"
#include "Random.h"

#include <QJsonArray>

#include <algorithm>
#include <numeric>

namespace il::tasks {

namespace {

bool fits(const Network& net, const NamesSchema& s, QString* error)
{
    if (net.inputWidth() == s.context && net.outputWidth() == s.vocabSize()) return true;
    if (error)
        *error = QString("the network (%1, %2) does not fit the names "
                         "vocabulary (context %3, %4 symbols)")
                     .arg(countOf(net.inputWidth(), "input"), countOf(net.outputWidth(), "output"))
                     .arg(s.context)
                     .arg(s.vocabSize());
    return false;
}

} // namespace

int NamesSchema::idOf(char32_t c) const
{
    const auto it = std::lower_bound(alphabet.begin(), alphabet.end(), c);
    return it != alphabet.end() && *it == c ? static_cast<int>(it - alphabet.begin()) + 1 : -1;
}

QString NamesSchema::symbol(int id) const
{
    if (id <= 0 || id > static_cast<int>(alphabet.size())) return boundarySymbol;
    const char32_t c = alphabet[static_cast<size_t>(id - 1)];
    return io::fromCodePoints(std::u32string_view(&c, 1));
}

QStringList NamesSchema::vocabulary() const
{
    QStringList v;
    for (int id = 0; id < vocabSize(); ++id)
        v << symbol(id);
    return v;
}

bool NamesSchema::encode(const QString& text, std::vector<int32_t>& ids, QString* error) const
{
    ids.clear();
    const QList<uint> cps = (keepCase ? text : text.toLower()).toUcs4();
    for (uint c : cps) {
        const int id = idOf(c);
        if (id < 0) {
            if (error) *error = io::describeCodePoint(c) + " is not in the model's vocabulary";
            return false;
        }
        ids.push_back(id);
    }
    return true;
}

QJsonObject NamesSchema::toJson() const
{
    QJsonObject o;
    o["task"] = "names";
    o["context"] = context;
    o["case"] = keepCase ? "keep" : "lower";
    // Entry 0 is the boundary token (start padding and end of a name); the others are single
    // code points in id order.
    o["vocabulary"] = QJsonArray::fromStringList(vocabulary());
    o["val_split"] = valSplit;
    o["test_split"] = testSplit;
    o["split_seed"] = QString::number(splitSeed);
    o["ngram_k"] = ngramK;
    o["longest_name"] = longestName;
    // One string, one name per line: about two bytes of overhead per name in the model file.
    o["training_names"] = trainingNames.join('\n');
    return o;
}

bool NamesSchema::fromJson(const QJsonObject& o, NamesSchema& s, QString* error)
{
    auto fail = [error](const QString& what) {
        if (error) *error = "the model's names settings: " + what;
        return false;
    };
    if (o["task"].toString() != "names")
        return fail("this model was not trained on names (task " +
                    io::quoted(o["task"].toString(), 40) + ")");
    s = NamesSchema();
    s.context = o["context"].toInt(0);
    if (s.context < 1 || s.context > kMaxNamesContext)
        return fail(QString("context must be 1 to %1").arg(kMaxNamesContext));
    s.keepCase = o["case"].toString() == "keep";
    const QJsonArray vocab = o["vocabulary"].toArray();
    if (vocab.size() < 2) return fail("the vocabulary needs the boundary and a character");
    if (vocab.size() > kMaxAlphabet + 1)
        return fail(
            QString("the vocabulary has %1 entries; at most %2 (Limits in docs/model-file.md)")
                .arg(vocab.size())
                .arg(kMaxAlphabet + 1));
    s.boundarySymbol = vocab[0].toString();
    // How the boundary is shown: one symbol, or "<end>" when every candidate is in the data.
    const QList<uint> boundary = s.boundarySymbol.toUcs4();
    if (boundary.isEmpty() || boundary.size() > 8 ||
        !std::all_of(boundary.begin(), boundary.end(), io::isNameCharacter))
        return fail("the boundary symbol (vocabulary entry 0) must be 1 to 8 printable "
                    "characters");
    for (qsizetype i = 1; i < vocab.size(); ++i) {
        const QList<uint> cp = vocab[i].toString().toUcs4();
        if (cp.size() != 1) return fail(QString("vocabulary entry %1 is not one character").arg(i));
        // Refused rather than shown escaped: the names a model draws are its vocabulary's
        // characters, printed one per line and saved as they are, and a names file this build
        // reads never holds a control character or a bidirectional override (io::parseNames).
        if (!io::isNameCharacter(cp[0]))
            return fail(QString("vocabulary entry %1 is %2, a control or bidirectional "
                                "character; no name holds one")
                            .arg(i)
                            .arg(io::describeCodePoint(cp[0])));
        s.alphabet.push_back(cp[0]);
    }
    if (!std::is_sorted(s.alphabet.begin(), s.alphabet.end()) ||
        std::adjacent_find(s.alphabet.begin(), s.alphabet.end()) != s.alphabet.end())
        return fail("the vocabulary is not sorted or repeats a character");
    s.valSplit = o["val_split"].toDouble(0);
    if (!kSplitRange.contains(s.valSplit))
        return fail(QString("val_split %1 must be %2")
                        .arg(s.valSplit)
                        .arg(QString::fromStdString(kSplitRange.describe())));
    s.testSplit = o["test_split"].toDouble(0);
    if (!kSplitRange.contains(s.testSplit) || s.valSplit + s.testSplit >= 1)
        return fail(QString("test_split %1 must be %2, and with val_split under 1")
                        .arg(s.testSplit)
                        .arg(QString::fromStdString(kSplitRange.describe())));
    s.splitSeed = o["split_seed"].toString("1").toULongLong();
    s.ngramK = o["ngram_k"].toDouble(1);
    s.longestName = o["longest_name"].toInt(0);
    const QString names = o["training_names"].toString();
    if (!names.isEmpty()) s.trainingNames = names.split('\n');
    s.trainingSet = QSet<QString>(s.trainingNames.begin(), s.trainingNames.end());
    return true;
}

void appendNameWindows(const std::vector<int32_t>& ids, int context, std::vector<float>& x,
                       std::vector<float>& y)
{
    // Window t holds the `context` symbols before position t of the boundary-padded name.
    const auto len = static_cast<int64_t>(ids.size());
    for (int64_t t = 0; t <= len; ++t) {
        for (int64_t c = t - context; c < t; ++c)
            x.push_back(c < 0 ? 0.f : static_cast<float>(ids[static_cast<size_t>(c)]));
        y.push_back(t < len ? static_cast<float>(ids[static_cast<size_t>(t)]) : 0.f);
    }
}

namespace {

// What a draw needs: the model's shape and the sampling settings, clamped.
struct DrawSettings {
    int context = 0;   // n: symbols the model sees
    int64_t vocab = 0; // v: symbols it can draw, the boundary (0) included
    float temperature = 1;
    size_t maxLength = 0;
    int topK = 0;
    uint64_t seed = 0;
    std::vector<int32_t> prefix; // ids every name starts with
};

// The device memory and host staging of one group of names drawn together.
struct GroupBuffers {
    GroupBuffers(Backend& b, int64_t group, int n, int64_t v)
        : x(&b, static_cast<size_t>(group * n)), logits(&b, static_cast<size_t>(group * v)),
          probs(&b, static_cast<size_t>(group * v)), numbers(&b, static_cast<size_t>(group)),
          drawn(&b, static_cast<size_t>(group)), hostX(static_cast<size_t>(group * n)),
          hostU(static_cast<size_t>(group)), hostIds(static_cast<size_t>(group))
    {
    }
    Buffer x, logits, probs, numbers, drawn;
    std::vector<float> hostX, hostU, hostIds;
};

// Draws the next symbol of every active name into buf.hostIds (in the order of active).
void drawNext(Network& net, const DrawSettings& ds, GroupBuffers& buf,
              const std::vector<int32_t>& window, std::vector<Rng>& rng,
              const std::vector<int64_t>& active, bool firstSymbol)
{
    Backend& b = net.backend();
    const int n = ds.context;
    const int64_t v = ds.vocab;
    const auto rows = static_cast<int64_t>(active.size());
    for (int64_t a = 0; a < rows; ++a)
        for (int c = 0; c < n; ++c)
            buf.hostX[static_cast<size_t>(a * n + c)] =
                static_cast<float>(window[static_cast<size_t>(active[a] * n + c)]);
    // Each name draws from its own stream, so a name does not depend on the others.
    for (int64_t a = 0; a < rows; ++a)
        buf.hostU[static_cast<size_t>(a)] =
            static_cast<float>(rng[static_cast<size_t>(active[static_cast<size_t>(a)])].uniform());
    b.upload(buf.x.view(rows, n), buf.hostX.data());
    b.upload(buf.numbers.view(rows, 1), buf.hostU.data());
    net.predict(buf.x.view(rows, n), buf.logits.view(rows, v));
    b.softmaxRows(buf.logits.view(rows, v), ds.temperature, buf.probs.view(rows, v));
    // The first symbol may not be the boundary (an empty name).
    b.sampleRows(buf.probs.view(rows, v), buf.numbers.view(rows, 1), ds.topK, firstSymbol ? 1 : 0,
                 buf.drawn.view(rows, 1));
    b.download(buf.hostIds.data(), buf.drawn.view(rows, 1));
}

// Names first .. first + m - 1 of res.names, drawn together until each has ended.
void generateGroup(Network& net, const NamesSchema& schema, const DrawSettings& ds,
                   GroupBuffers& buf, int64_t first, int64_t m, GenerationResult& res)
{
    const int n = ds.context;
    // The window after the prefix: its last n symbols, boundary-padded.
    std::vector<int32_t> start(static_cast<size_t>(n), 0);
    std::u32string prefixText;
    for (int32_t id : ds.prefix) {
        std::copy(start.begin() + 1, start.end(), start.begin());
        start.back() = id;
        prefixText.push_back(schema.alphabet[static_cast<size_t>(id - 1)]);
    }
    std::vector<int32_t> window(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
        std::copy(start.begin(), start.end(), window.begin() + i * n);
    std::vector<std::u32string> text(static_cast<size_t>(m), prefixText);
    std::vector<Rng> rng;
    for (int64_t i = 0; i < m; ++i)
        rng.push_back(Rng::derive(ds.seed, "generate", static_cast<uint64_t>(first + i)));
    std::vector<int64_t> active(static_cast<size_t>(m)), still;
    std::iota(active.begin(), active.end(), 0);
    for (int step = 0; !active.empty(); ++step) {
        drawNext(net, ds, buf, window, rng, active, step == 0 && ds.prefix.empty());
        still.clear();
        for (size_t a = 0; a < active.size(); ++a) {
            const int64_t i = active[a];
            const int id = static_cast<int>(buf.hostIds[a]);
            if (id == 0) continue; // the model ended the name
            auto& t = text[static_cast<size_t>(i)];
            t.push_back(schema.alphabet[static_cast<size_t>(id - 1)]);
            if (t.size() >= ds.maxLength) {
                res.names[static_cast<size_t>(first + i)].truncated = true;
                continue;
            }
            int32_t* w = window.data() + i * n;
            std::copy(w + 1, w + n, w);
            w[n - 1] = id;
            still.push_back(i);
        }
        active.swap(still);
    }
    for (int64_t i = 0; i < m; ++i) {
        GeneratedName& g = res.names[static_cast<size_t>(first + i)];
        const auto& t = text[static_cast<size_t>(i)];
        g.text = io::fromCodePoints(t);
        g.heldOut = schema.heldOutSet.contains(g.text);
        g.isNew = !g.heldOut && !schema.trainingSet.contains(g.text);
        res.newCount += g.isNew ? 1 : 0;
    }
}

// Mean ln p (T = 1) of the symbols drawn after the prefix, over every name: the windows of each
// name, less the prefix's own, scored by the network.
double drawnLogLikelihood(Network& net, const NamesSchema& schema,
                          const std::vector<int32_t>& prefix,
                          const std::vector<GeneratedName>& names)
{
    std::vector<float> x, y, nameX, nameY;
    std::vector<int32_t> ids;
    const size_t skip = prefix.size(), n = static_cast<size_t>(schema.context);
    for (const GeneratedName& g : names) {
        if (!schema.encode(g.text, ids, nullptr)) continue; // drawn from the vocabulary: never
        nameX.clear();
        nameY.clear();
        appendNameWindows(ids, schema.context, nameX, nameY);
        if (g.truncated) { // cut, not ended: its end was never drawn
            nameX.resize(nameX.size() - n);
            nameY.pop_back();
        }
        x.insert(x.end(), nameX.begin() + static_cast<std::ptrdiff_t>(skip * n), nameX.end());
        y.insert(y.end(), nameY.begin() + static_cast<std::ptrdiff_t>(skip), nameY.end());
    }
    return -namesCrossEntropy(net, x, y, static_cast<int64_t>(y.size()));
}

} // namespace

GenerationResult generateNames(Network& net, const NamesSchema& schema, const GenerationOptions& o)
{
    GenerationResult res;
    if (!fits(net, schema, &res.error)) return res;
    DrawSettings ds;
    ds.context = schema.context;
    ds.vocab = schema.vocabSize();
    const auto count = static_cast<int64_t>(std::max(0, o.count));
    ds.temperature = static_cast<float>(std::clamp(o.temperature, 0.1, 3.0));
    ds.maxLength = static_cast<size_t>(std::clamp(o.maxLength, 1, io::kMaxNameLength));
    ds.topK = o.topK > 0 && o.topK < ds.vocab ? o.topK : 0;
    ds.seed = o.seed;
    if (!o.prefix.isEmpty()) {
        QString why;
        if (!schema.encode(o.prefix, ds.prefix, &why)) {
            res.error = "the prefix \"" + o.prefix + "\": " + why;
            return res;
        }
        if (ds.prefix.size() >= ds.maxLength) {
            res.error = QString("the prefix \"%1\" is %2 characters; names are cut at %3, so "
                                "there is nothing left to draw")
                            .arg(o.prefix)
                            .arg(ds.prefix.size())
                            .arg(ds.maxLength);
            return res;
        }
    }
    if (count == 0) return res;

    // Names go through in groups, so memory stays bounded for any count.
    const int64_t group = std::min<int64_t>(count, 4096);
    GroupBuffers buf(net.backend(), group, ds.context, ds.vocab);
    res.names.resize(static_cast<size_t>(count));
    try {
        for (int64_t first = 0; first < count; first += group)
            generateGroup(net, schema, ds, buf, first, std::min(group, count - first), res);
        res.meanLogLikelihood = drawnLogLikelihood(net, schema, ds.prefix, res.names);
    } catch (const EngineError& e) {
        res = GenerationResult();
        res.error = QString("generation failed: ") + e.what();
    }
    return res;
}

std::vector<float> nextCharProbabilities(Network& net, const NamesSchema& schema,
                                         const QString& prefix, double temperature, QString* error)
{
    std::vector<int32_t> ids;
    if (!fits(net, schema, error) || !schema.encode(prefix, ids, error)) return {};
    const int n = schema.context;
    const int64_t v = schema.vocabSize();
    std::vector<float> x(static_cast<size_t>(n), 0.f), y;
    const auto len = static_cast<int64_t>(ids.size());
    for (int c = 0; c < n; ++c) { // the last n symbols of the boundary-padded prefix
        const int64_t pos = len - n + c;
        if (pos >= 0) x[static_cast<size_t>(c)] = static_cast<float>(ids[static_cast<size_t>(pos)]);
    }
    try {
        Backend& b = net.backend();
        Buffer in(&b, static_cast<size_t>(n)), logits(&b, static_cast<size_t>(v)),
            probs(&b, static_cast<size_t>(v));
        b.upload(in.view(1, n), x.data());
        net.predict(in.view(1, n), logits.view(1, v));
        b.softmaxRows(logits.view(1, v), static_cast<float>(std::clamp(temperature, 0.1, 3.0)),
                      probs.view(1, v));
        y.resize(static_cast<size_t>(v));
        b.download(y.data(), probs.view(1, v));
    } catch (const EngineError& e) {
        if (error) *error = QString("prediction failed: ") + e.what();
        return {};
    }
    return y;
}

double namesCrossEntropy(Network& net, const std::vector<float>& x, const std::vector<float>& y,
                         int64_t rows)
{
    if (rows <= 0) return NAN;
    Backend& b = net.backend();
    const int64_t n = net.inputWidth(), v = net.outputWidth();
    const int64_t chunk = std::min<int64_t>(rows, 8192); // bounded memory for any file
    Buffer in(&b, static_cast<size_t>(chunk * n)), out(&b, static_cast<size_t>(chunk * v));
    std::vector<float> logits(static_cast<size_t>(chunk * v));
    double sum = 0;
    for (int64_t r = 0; r < rows; r += chunk) {
        const int64_t m = std::min(chunk, rows - r);
        b.upload(in.view(m, n), x.data() + r * n);
        net.predict(in.view(m, n), out.view(m, v));
        b.download(logits.data(), out.view(m, v));
        for (int64_t i = 0; i < m; ++i) { // -log softmax, in double: log-sum-exp minus z[y]
            const float* z = logits.data() + i * v;
            const float mx = *std::max_element(z, z + v);
            double s = 0;
            for (int64_t j = 0; j < v; ++j)
                s += std::exp(static_cast<double>(z[j] - mx));
            const auto target = static_cast<int64_t>(y[static_cast<size_t>(r + i)]);
            sum += std::log(s) + mx - z[target];
        }
    }
    return sum / static_cast<double>(rows);
}

std::vector<SweepPoint> temperatureSweep(Network& net, const NamesSchema& schema,
                                         GenerationOptions options,
                                         const std::vector<double>& temperatures, QString* error)
{
    std::vector<SweepPoint> out;
    for (double t : temperatures) {
        options.temperature = t;
        const GenerationResult r = generateNames(net, schema, options);
        if (!r.error.isEmpty()) {
            if (error) *error = r.error;
            break;
        }
        out.push_back({t, r.innovationRate(), r.newCount, r.meanLogLikelihood});
    }
    return out;
}

} // namespace il::tasks
