#!/usr/bin/env python3
"""ironlearn-bench's CUDA workloads in PyTorch eager mode, for packaging/bench/compare_cuda.sh.

    python3 torch_cuda_bench.py [--only sgemm,siren262k,siren4k] [--repeat N] [--read-every N]
                                [--json] [--device cuda|cpu]

Mirrors src/bench/Workloads.cpp (benchGemm, benchSirenBatch) on one GPU, in float32 with TF32
off (torch.backends.cuda.matmul.allow_tf32 = False, torch.backends.cudnn.allow_tf32 = False), as
our CUDA backend runs by default:

  sgemm      C = A B of n x n matrices, n = 256, 512, 1024, 2048, GFLOP/s of the median
  siren262k  the SIREN 2->256->256->256->1 (sine, w0 = 30) on 262,144 random coordinates, the
  siren4k    whole set every step (and on 4,096): MSE, torch.optim.Adam(lr=1e-4) as it comes
             (its default multi-tensor implementation), the same target formula

Timing, as ironlearn-bench does on a device: samples of --read-every steps (default 50); the
loss is summed on the device and read once per sample (.item()), as our trainer reads its loss
every readEvery steps; torch.cuda.synchronize() before every clock read; two warm-up samples;
the median ms per step over --repeat samples. Initialisation does not matter for speed (SIREN's
is used anyway). Prints the same lines (or, with --json, the same keys) as ironlearn-bench.
--device cpu runs the same code on the CPU: a check of this script on a machine without a GPU.
"""

import argparse
import json
import sys
import time

WORKLOADS = ("sgemm", "siren262k", "siren4k")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default=",".join(WORKLOADS),
                   help="comma-separated workloads: " + ", ".join(WORKLOADS))
    p.add_argument("--repeat", type=int, default=10, help="timed samples per workload")
    p.add_argument("--read-every", type=int, default=50,
                   help="siren*: steps per timed sample, one loss read per sample")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    a = p.parse_args()
    a.only = [w for w in a.only.split(",") if w]
    for w in a.only:
        if w not in WORKLOADS:
            p.error(f"--only: unknown workload '{w}' (expected {', '.join(WORKLOADS)})")
    if a.repeat < 1 or a.read_every < 1:
        p.error("--repeat and --read-every must be positive")
    return a


ARGS = parse_args()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_common import (SIREN_SPEC, bench_sgemm, print_sgemm, print_workload,  # noqa: E402
                          siren, siren_target, stats)

if ARGS.device == "cuda" and not torch.cuda.is_available():
    print("torch_cuda_bench: torch %s sees no CUDA device (built with CUDA %s)"
          % (torch.__version__, torch.version.cuda), file=sys.stderr)
    sys.exit(1)
DEVICE = torch.device(ARGS.device)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.manual_seed(1)


def sync():
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def bench_siren_batch(rows, repeat, read_every, warmup=2):
    x = torch.rand(rows, 2, device=DEVICE) * 2 - 1
    y = siren_target(x)
    model = siren(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_sum = torch.zeros((), device=DEVICE)

    samples, losses = [], []
    for sample in range(warmup + repeat):
        sync()
        t0 = time.perf_counter()
        for _ in range(read_every):
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            loss_sum += loss.detach()
        losses.append(loss_sum.item() / read_every)  # the one read-back of the sample
        loss_sum.zero_()
        sync()
        if sample >= warmup:
            samples.append((time.perf_counter() - t0) * 1e3 / read_every)
    return {"spec": SIREN_SPEC, "unit": "step", **stats(samples), "timing": "samples", "rows": rows,
            "batch_size": rows, "steps_per_epoch": 1,
            "parameters": sum(p.numel() for p in model.parameters()), "warmup": warmup,
            "read_every": read_every, "steps_per_sample": read_every,
            "first_loss": losses[0], "last_loss": losses[-1]}


def device_name():
    if DEVICE.type == "cuda":
        return torch.cuda.get_device_name(DEVICE)
    return "cpu"


def main():
    out = {"tool": "pytorch", "backend": DEVICE.type, "device": device_name(),
           "details": "torch %s, CUDA %s, f32, TF32 off" % (torch.__version__, torch.version.cuda),
           "threads": torch.get_num_threads(), "backend_threads": torch.get_num_threads(),
           "repeat": ARGS.repeat}
    if not ARGS.json:
        print(f"torch_cuda_bench: {out['backend']} backend, {out['device']}\n  {out['details']}",
              flush=True)
    if "sgemm" in ARGS.only:
        out["sgemm"] = bench_sgemm(ARGS.repeat, DEVICE, sync)
        if not ARGS.json:
            print_sgemm(out["sgemm"])
    for name, rows, label in (("siren262k", 262144, "siren 2-256x3-1, 262144 rows, full"),
                              ("siren4k", 4096, "siren 2-256x3-1, 4096 rows, full")):
        if name in ARGS.only:
            r = out[name] = bench_siren_batch(rows, ARGS.repeat, ARGS.read_every)
            if not ARGS.json:
                print_workload(label, r, timing=True)
    if ARGS.json:
        json.dump(out, sys.stdout)
        print()


if __name__ == "__main__":
    main()
