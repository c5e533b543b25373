// Fuzz target: a model file into both exports (exportOnnx, exportPyTorch), the path `ironlearn-cli
// export` and the studio's File > Export take. Crafted headers once crashed the ONNX export (an
// empty input_offset, "leakyrelu:abc") or made it write graphs that differed from predict.
//
// Input: as FuzzSafeTensors (a whole file, or a JSON header given its length and data). Besides
// "never crashes", it checks:
// - a refusal is one line; the model file is refused by both exports when openModel refuses it;
// - a failed export leaves nothing behind: no .onnx file, no export folder, no temporary file;
// - an ONNX graph that was written passes the ONNX checker with shape inference (where the
//   build has libonnx's checker), and its summary holds no terminal escape or other
//   unprintable character from the file;
// - a PyTorch export that succeeded lists files that exist.
#include "FuzzSupport.h"

#include "Backend.h"
#include "ModelExport.h"
#include "ModelFile.h"
#include "PrintableText.h"
#include "TaskType.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#ifdef IRONLEARN_FUZZ_ONNX_CHECKER
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#endif

#include <fstream>

using namespace il;
using namespace il::io;

namespace {

Backend& backend()
{
    static const std::unique_ptr<Backend> cpu = createCpuBackend(1);
    return *cpu;
}

bool printable(const QString& text)
{
    for (char32_t c : text.toUcs4())
        if (c != U'\n' && isUnprintable(c)) return false;
    return true;
}

#ifdef IRONLEARN_FUZZ_ONNX_CHECKER
// The checker's verdict on the file: "" when it passes.
std::string onnxCheck(const QString& path)
{
    onnx::ModelProto model;
    std::ifstream in(QFile::encodeName(path).constData(), std::ios::binary);
    if (!model.ParseFromIstream(&in)) return "not a ModelProto";
    try {
        onnx::checker::check_model(model);
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions{true, 1, true});
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}
#endif

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    setenv("OMP_NUM_THREADS", "1", 1); // one fuzz process per core
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QByteArray bytes = il::fuzz::fileOrHeader(data, size);

    QTemporaryDir dir;
    FUZZ_CHECK(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("fuzz.safetensors"));
    {
        QFile f(path);
        FUZZ_CHECK(f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size());
    }
    QString openError;
    const bool opens = openModel(path, backend(), &openError) != nullptr;

    const QString onnxPath = dir.filePath(QStringLiteral("fuzz.onnx"));
    QString summary;
    const IoResult onnx =
        exportOnnx(path, onnxPath, tasks::onnxGraphFor, tasks::savedTaskInCurrentForm, &summary);
    if (!onnx) {
        FUZZ_CHECK(!onnx.error.isEmpty() && !onnx.error.contains(u'\n'));
        FUZZ_CHECK(!QFile::exists(onnxPath));
    } else {
        FUZZ_CHECK(opens);
        FUZZ_CHECK(QFileInfo(onnxPath).size() > 0);
        FUZZ_CHECK(printable(summary));
#ifdef IRONLEARN_FUZZ_ONNX_CHECKER
        const std::string verdict = onnxCheck(onnxPath);
        if (!verdict.empty()) {
            std::fprintf(stderr, "ONNX checker: %s\n", verdict.c_str());
            FUZZ_CHECK(!"the written ONNX graph passes the ONNX checker");
        }
#endif
    }

    const QString folder = dir.filePath(QStringLiteral("fuzz-pytorch"));
    QStringList written;
    const IoResult pytorch = exportPyTorch(path, folder, tasks::pytorchKinds(), &written);
    if (!pytorch) {
        FUZZ_CHECK(!pytorch.error.isEmpty() && !pytorch.error.contains(u'\n'));
        FUZZ_CHECK(!QFileInfo::exists(folder)); // not even an empty folder
    } else {
        FUZZ_CHECK(opens);
        FUZZ_CHECK(!written.isEmpty());
        for (const QString& file : written)
            FUZZ_CHECK(QFileInfo(file).isFile() || QFileInfo(QDir(folder).filePath(file)).isFile());
    }
    // No temporary file of an atomic write left anywhere.
    const QStringList left = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    for (const QString& name : left)
        FUZZ_CHECK(!name.startsWith('.'));
    if (!opens) FUZZ_CHECK(!onnx.ok && !pytorch.ok);
    return 0;
}
