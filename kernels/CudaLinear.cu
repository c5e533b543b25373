// The dense layer's products with the bias folded in (Backend::linearForward/linearBackward),
// through cuBLASLt epilogues: forward writes y = x w^T + bias in one pass (EPILOGUE_BIAS) instead
// of a broadcast of the bias into y followed by a beta = 1 GEMM that reads y again; backward
// writes dw and, from the same read of dy, the bias gradient (EPILOGUE_BGRADB) instead of a
// separate gemv over dy. Where cuBLASLt offers no algorithm for a case, refuses every one it
// offered, where m or n is 1 (forLt), or with IRONLEARN_CUDA_EPILOGUE=0, the ops fall back to
// the separate passes of Backend's definition.
//
// Layouts. cuBLAS is column-major, so a row-major r x c matrix is its c x r transpose there:
//   forward   y^T (out x n) = op_T(w^T: in x out) * x^T (in x n), bias of length out = rows of D
//   backward  dw^T (in x out) = x^T (in x n) * op_T(dy^T: out x n), bias gradient of length
//             out = columns of D, reduced over k = n: BGRADB
#include "CudaCommon.cuh"

#include <cstdio>
#include <cstring>
#include <tuple>

namespace il::cuda {

namespace {

// The largest power of two, at most 256 bytes, that p is aligned to: cuBLASLt picks kernels for
// the alignment it is told (default 256), and a kernel chosen for more would fault.
uint32_t alignmentOf(const void* p)
{
    const auto a = reinterpret_cast<uintptr_t>(p);
    uint32_t r = 256;
    while (r > 4 && a % r != 0)
        r >>= 1;
    return r;
}

} // namespace

void CudaBackend::destroyLtPlans() noexcept
{
    for (auto& [key, plan] : m_ltPlans) {
        if (plan.op) cublasLtMatmulDescDestroy(plan.op);
        if (plan.a) cublasLtMatrixLayoutDestroy(plan.a);
        if (plan.b) cublasLtMatrixLayoutDestroy(plan.b);
        if (plan.d) cublasLtMatrixLayoutDestroy(plan.d);
    }
    m_ltPlans.clear();
}

// D (m x n, column-major, leading dimension ldd) = op(A) op(B) with the epilogue, which reads
// (BIAS) or writes (BGRADB) `bias`. False when cuBLASLt has no algorithm for it: nothing ran.
// Long: the plan cache, its one-time heuristic query and the run falling back through the
// candidates share the key and the plan.
bool CudaBackend::ltMatmul(bool transA, bool transB, int m, int n, int k, const float* A, int lda,
                           const float* B, int ldb, float* D, int ldd, cublasLtEpilogue_t epilogue,
                           float* bias)
{
    if (!m_lt) return false;
    const LtKey key{m,
                    n,
                    k,
                    lda,
                    ldb,
                    ldd,
                    int(transA) * 2 + int(transB),
                    int(epilogue),
                    alignmentOf(A),
                    alignmentOf(B),
                    alignmentOf(D),
                    alignmentOf(bias)};
    auto it = m_ltPlans.find(key);
    if (it == m_ltPlans.end()) {
        // First use of this shape and alignment: ask cuBLASLt's heuristic once, keep the answer.
        LtPlan plan;
        const cublasComputeType_t compute =
            m_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        const cublasOperation_t ta = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
        const cublasOperation_t tb = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
        cublasLtMatmulPreference_t pref = nullptr;
        bool ok =
            cublasLtMatmulDescCreate(&plan.op, compute, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof(epilogue)) == CUBLAS_STATUS_SUCCESS &&
            // The heuristic reads the bias pointer's alignment from here.
            cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                           sizeof(bias)) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&plan.a, CUDA_R_32F, transA ? k : m, transA ? m : k, lda) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&plan.b, CUDA_R_32F, transB ? n : k, transB ? k : n, ldb) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&plan.d, CUDA_R_32F, m, n, ldd) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS;
        if (ok) {
            const uint64_t workspace = kBlasWorkspaceBytes;
            const uint32_t alignA = key.alignA, alignB = key.alignB, alignD = key.alignD;
            ok = cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                     sizeof(workspace)) == CUBLAS_STATUS_SUCCESS &&
                 cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA, sizeof(alignA)) ==
                     CUBLAS_STATUS_SUCCESS &&
                 cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB, sizeof(alignB)) ==
                     CUBLAS_STATUS_SUCCESS &&
                 cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignD, sizeof(alignD)) ==
                     CUBLAS_STATUS_SUCCESS &&
                 cublasLtMatmulPreferenceSetAttribute(
                     pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignD, sizeof(alignD)) ==
                     CUBLAS_STATUS_SUCCESS;
        }
        if (ok) {
            // Several candidates, best first: one the heuristic offers may still be refused
            // when it runs (NOT_SUPPORTED), and the next one is then tried.
            cublasLtMatmulHeuristicResult_t results[kLtAlgorithms] = {};
            int found = 0;
            ok = cublasLtMatmulAlgoGetHeuristic(m_lt, plan.op, plan.a, plan.b, plan.d, plan.d, pref,
                                                kLtAlgorithms, results,
                                                &found) == CUBLAS_STATUS_SUCCESS;
            for (int i = 0; ok && i < std::min(found, kLtAlgorithms); ++i)
                if (results[i].state == CUBLAS_STATUS_SUCCESS &&
                    results[i].workspaceSize <= kBlasWorkspaceBytes)
                    plan.algos[plan.count++] = results[i].algo;
            ok = ok && plan.count > 0;
        }
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        plan.usable = ok;
        it = m_ltPlans.emplace(key, plan).first;
        ++m_ltPlansMade;
        if (!ok) ++m_ltPlansUnusable;
        if (m_reportEpilogues) {
            std::fprintf(stderr, "cuBLASLt %s %d x %d x %d, alignments %u/%u/%u/%u: ",
                         epilogue == CUBLASLT_EPILOGUE_BIAS ? "BIAS" : "BGRADB", m, n, k,
                         key.alignA, key.alignB, key.alignD, key.alignBias);
            if (ok)
                std::fprintf(stderr, "epilogue, %d algorithm(s)\n", plan.count);
            else
                std::fprintf(stderr, "no algorithm, separate bias passes\n");
        }
    }
    LtPlan& plan = it->second;
    const char* what = epilogue == CUBLASLT_EPILOGUE_BIAS ? "BIAS" : "BGRADB";
    std::string refused; // the run-time refusals, for IRONLEARN_CUDA_EPILOGUE=require
    while (plan.usable) {
        checkBlas(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                 sizeof(bias)),
                  "cublasLtMatmulDescSetAttribute");
        const float one = 1.f, zero = 0.f;
        const cublasStatus_t status =
            cublasLtMatmul(m_lt, plan.op, &one, A, plan.a, B, plan.b, &zero, D, plan.d, D, plan.d,
                           &plan.algos[plan.next], m_blasWorkspace, kBlasWorkspaceBytes, m_stream);
        if (status == CUBLAS_STATUS_SUCCESS) return true;
        // Refused before anything ran: try the next candidate; when none is left, the plan is
        // unusable and the separate passes run from now on. Any other error is one.
        if (status != CUBLAS_STATUS_NOT_SUPPORTED && status != CUBLAS_STATUS_ARCH_MISMATCH)
            throwBlas(status,
                      epilogue == CUBLASLT_EPILOGUE_BIAS ? "linearForward" : "linearBackward");
        cudaGetLastError();
        refused = cublasGetStatusName(status);
        if (++plan.next >= plan.count) {
            plan.usable = false;
            ++m_ltPlansUnusable;
        }
        if (m_reportEpilogues)
            std::fprintf(stderr, "cuBLASLt %s %d x %d x %d: algorithm %d of %d refused (%s)%s\n",
                         what, m, n, k, plan.next, plan.count, refused.c_str(),
                         plan.usable ? ", trying the next"
                                     : "; no algorithm, separate bias passes");
    }
    if (m_requireEpilogues)
        throw BackendError(
            "cuBLASLt has no algorithm for the " + std::string(what) + " epilogue of a " +
            std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k) +
            " product with these alignments" +
            (refused.empty() ? std::string() : " (every candidate was refused: " + refused + ")") +
            " (IRONLEARN_CUDA_EPILOGUE=require)");
    return false;
}

namespace {

// Whether the product D (m x n) = op(A) op(B) over k goes to cuBLASLt: its dimensions fit
// cuBLAS's ints, and neither m nor n is 1. A matrix-vector product (one output, one row, one
// input) is memory-bound, so an epilogue saves little there, and cuBLASLt's heuristic commonly
// has no epilogue algorithm for it (PyTorch avoids cuBLASLt there too): plain cuBLAS and the
// bias pass run it.
bool forLt(int64_t m, int64_t n, int64_t k)
{
    constexpr int64_t intMax = 0x7fffffff;
    return m > 1 && n > 1 && k > 0 && m <= intMax && n <= intMax && k <= intMax;
}

} // namespace

void CudaBackend::linearForwardImpl(ConstTensor x, ConstTensor w, ConstTensor bias, Tensor y)
{
    const int64_t n = x.rows(), in = x.cols(), out = w.rows();
    if (n == 0 || out == 0) return;
    if (forLt(out, n, in)) {
        bind();
        if (ltMatmul(true, false, static_cast<int>(out), static_cast<int>(n), static_cast<int>(in),
                     w.data, static_cast<int>(in), x.data, static_cast<int>(in), y.data,
                     static_cast<int>(out), CUBLASLT_EPILOGUE_BIAS, const_cast<float*>(bias.data)))
            return;
    }
    Backend::linearForwardImpl(x, w, bias, y); // broadcast, then a beta = 1 GEMM
}

void CudaBackend::linearBackwardImpl(ConstTensor x, ConstTensor dy, Tensor dw, Tensor dbias)
{
    const int64_t n = x.rows(), in = x.cols(), out = dw.rows();
    if (out == 0) return;
    if (forLt(in, out, n)) {
        bind();
        if (ltMatmul(false, true, static_cast<int>(in), static_cast<int>(out), static_cast<int>(n),
                     x.data, static_cast<int>(in), dy.data, static_cast<int>(out), dw.data,
                     static_cast<int>(in), CUBLASLT_EPILOGUE_BGRADB, dbias.data))
            return;
    }
    Backend::linearBackwardImpl(x, dy, dw, dbias); // a GEMM, then a gemv over dy
}

} // namespace il::cuda
