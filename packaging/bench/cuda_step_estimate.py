#!/usr/bin/env python3
"""Launches and bytes moved by one SIREN training step on the CUDA backend (the bench's
siren4k / siren262k workload: dense:256, sine:30 three times, dense:1; f32, Adam), per kernel,
as the backend ran it before the fused epilogues and as it runs it now (the bias in the GEMM's epilogue and
its gradient in the weight GEMM's, cuBLASLt BIAS and BGRADB; the gradient norms of all tensors
in two launches). An estimate from the shapes, not a measurement: every tensor is counted once
per read or write (no cache reuse); GEMM bytes are their operands and result. The float4
element-wise kernels move the same bytes in a quarter of the memory instructions, which this
does not count. With IRONLEARN_CUDA_EPILOGUE=0 (or where cuBLASLt has no algorithm) the dense
layers run as before; the norms stay at two launches.

    python3 packaging/bench/cuda_step_estimate.py [--rows N ...] [--per-kernel]
"""
import argparse

LAYERS = [(2, 256, True), (256, 256, True), (256, 256, True), (256, 1, False)]
F32 = 4


def step(n, planned):
    ops = []  # (kernel, launches, bytes)
    for i, (fi, fo, act) in enumerate(LAYERS):
        if planned:
            ops.append((f"L{i + 1} gemm + bias epilogue", 1, (n * fi + fi * fo + n * fo) * F32))
        else:
            ops.append((f"L{i + 1} broadcastRows (bias)", 1, n * fo * F32))
            ops.append((f"L{i + 1} gemm, beta = 1", 1, (n * fi + fi * fo + 2 * n * fo) * F32))
        if act:
            ops.append((f"L{i + 1} sine", 1, 2 * n * fo * F32))
    ops.append(("loss (mse) + finish", 2, 3 * n * F32))
    for i, (fi, fo, act) in reversed(list(enumerate(LAYERS))):
        if act:
            ops.append((f"L{i + 1} sine backward", 1, 3 * n * fo * F32))
        if planned:
            ops.append((f"L{i + 1} dW gemm + BGRADB", 1, (n * fi + n * fo + fi * fo) * F32))
        else:
            ops.append((f"L{i + 1} dW gemm", 1, (n * fi + n * fo + fi * fo) * F32))
            ops.append((f"L{i + 1} db gemv (sumRows)", 1, (n * fo + fo) * F32))
        if i > 0:
            ops.append((f"L{i + 1} dX gemm", 1, (n * fo + fi * fo + n * fi) * F32))
    params = sum(fi * fo + fo for fi, fo, _ in LAYERS)
    # Before: one sumSquares per tensor, one block (one launch) up to 2048 floats, else a second
    # launch adds the block partials. Now: sumSquaresEach, two launches for all.
    sizes = [s for fi, fo, _ in LAYERS for s in (fi * fo, fo)]
    ops.append(("gradient norms", 2 if planned else sum(1 if s <= 2048 else 2 for s in sizes),
                params * F32))
    ops.append(("guard", 1, 64))
    ops.append(("adam", 1, 7 * params * F32))
    return ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="*", default=[4096, 262144])
    ap.add_argument("--per-kernel", action="store_true")
    args = ap.parse_args()
    for n in args.rows:
        for planned in (False, True):
            ops = step(n, planned)
            launches = sum(o[1] for o in ops)
            total = sum(o[2] for o in ops)
            other = sum(o[2] for o in ops if "gemm" not in o[0])
            print(f"rows {n:7d}  {'now       ' if planned else 'before #18'}  {launches:3d} launches  "
                  f"{total / 1e6:9.1f} MB  (outside GEMMs {other / 1e6:8.1f} MB)")
            if args.per_kernel:
                for name, k, b in ops:
                    print(f"    {name:28s} {k:3d}  {b / 1e6:9.2f} MB")


if __name__ == "__main__":
    main()
