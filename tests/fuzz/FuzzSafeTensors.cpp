// Fuzz target: the safetensors parser and, on top of it, the model file checks (openModel:
// format, version, architecture, hyperparameters, training state, tensors against the
// architecture).
//
// Input: a whole file, or, when it starts with '{', just the JSON header: the length prefix
// and a data buffer as long as the header's largest offset are then added, so mutations of
// the header are not all refused for a wrong length. Besides "never crashes", it checks:
// - a refusal is one line naming the file;
// - an accepted file survives encode + decode unchanged (names, shapes, bits, metadata);
// - an accepted model reads back the same through readModelInfo, and predicts on a batch of
//   two rows (when its layers are narrow enough to do so quickly).
#include "FuzzSupport.h"

#include "ModelFile.h"
#include "SafeTensors.h"

#include "Backend.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace il;
using namespace il::io;

namespace {

bool sameFile(const SafeTensorsFile& a, const SafeTensorsFile& b)
{
    if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        const StoredTensor& x = a.tensors[i];
        const StoredTensor& y = b.tensors[i];
        if (x.name != y.name || x.shape != y.shape || x.data.size() != y.data.size() ||
            (!x.data.empty() && std::memcmp(x.data.data(), y.data.data(), x.data.size() * 4)))
            return false;
    }
    return true;
}

Backend& backend()
{
    static const std::unique_ptr<Backend> cpu = createCpuBackend(1);
    return *cpu;
}

// Two rows of zeros through the network (ids 0 for an embedding), if its widths are modest.
void predictTwoRows(Network& net)
{
    int64_t floats = net.inputWidth();
    for (const LayerSummary& s : net.summary())
        floats += s.outputWidth;
    if (2 * floats > (int64_t(1) << 22)) return;
    Backend& b = net.backend();
    Buffer in(&b, static_cast<size_t>(2 * net.inputWidth()));
    Buffer out(&b, static_cast<size_t>(2 * net.outputWidth()));
    b.fill(in.view(2, net.inputWidth()), 0.f);
    net.predict(in.view(2, net.inputWidth()), out.view(2, net.outputWidth()));
}

void checkModel(const QByteArray& bytes)
{
    static QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("fuzz.safetensors"));
    QFile f(path);
    FUZZ_CHECK(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    FUZZ_CHECK(f.write(bytes) == bytes.size());
    f.close();

    QString error;
    const std::unique_ptr<LoadedModel> model = openModel(path, backend(), &error);
    ModelInfo info;
    QString infoError;
    const bool infoOk = readModelInfo(path, info, &infoError);
    if (!model) {
        FUZZ_CHECK(il::fuzz::isOneLineNaming(error, path));
        FUZZ_CHECK(infoOk || il::fuzz::isOneLineNaming(infoError, path));
        return;
    }
    FUZZ_CHECK(infoOk && info.spec == model->info.spec);
    FUZZ_CHECK(info.inputWidth == model->network->inputWidth());
    FUZZ_CHECK(info.outputWidth == model->network->outputWidth());
    predictTwoRows(*model->network);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    setenv("OMP_NUM_THREADS", "1", 1); // one fuzz process per core
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QByteArray bytes = il::fuzz::fileOrHeader(data, size);

    const QString source = QStringLiteral("fuzz.safetensors");
    SafeTensorsFile file;
    const IoResult r = decodeSafeTensors(bytes, source, file);
    if (!r) {
        FUZZ_CHECK(il::fuzz::isOneLineNaming(r.error, source));
        return 0;
    }
    QByteArray encoded;
    FUZZ_CHECK(encodeSafeTensors(file, encoded).ok);
    SafeTensorsFile again;
    FUZZ_CHECK(decodeSafeTensors(encoded, source, again).ok);
    FUZZ_CHECK(sameFile(file, again));

    if (file.metadata.contains(QStringLiteral("format"))) checkModel(bytes);
    return 0;
}
