#!/usr/bin/python3
"""The ironlearn-bench workloads in PyTorch eager mode, for packaging/bench/compare.sh.

    /usr/bin/python3 torch_bench.py [--threads N] [--only sgemm,siren,tanh,conv] [--repeat N]
                                    [--json]

Mirrors src/bench/Workloads.cpp: same sizes, float32, same optimizer and learning rate, same
batch scheme (full batch for the SIREN; minibatches of 256 over a fresh randperm each epoch for
the tanh MLP and the convolution stack, no DataLoader), the loss read back every step
(loss.item(), as our trainer does with readEvery = 1), warm-up excluded, medians reported.

Threads: torch.set_num_threads(N) sets ATen's OpenMP pool only. Debian's torch runs its matrix
products in the system OpenBLAS (pthread flavour, via libblas.so.3), which ignores that call and
starts one thread per core. So OPENBLAS_NUM_THREADS and OMP_NUM_THREADS are set to N here,
before torch is imported; without that "--threads 1" would still run sgemm on every core.
Other variables (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE, ...) are left as the caller set them.
"""

import argparse
import json
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads for ATen and OpenBLAS (default: one per core)")
    p.add_argument("--only", default="sgemm,siren,tanh,conv",
                   help="comma-separated workloads: sgemm, siren, tanh, conv")
    p.add_argument("--repeat", type=int, default=10, help="timed samples per workload")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    a = p.parse_args()
    a.only = [w for w in a.only.split(",") if w]
    for w in a.only:
        if w not in ("sgemm", "siren", "tanh", "conv"):
            p.error(f"--only: unknown workload '{w}' (expected sgemm, siren, tanh or conv)")
    if a.threads < 1 or a.repeat < 1:
        p.error("--threads and --repeat must be positive")
    return a


ARGS = parse_args()
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)

import torch  # noqa: E402  (after the thread variables, on purpose)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_common import (SIREN_SPEC, bench_sgemm, print_sgemm, print_workload,  # noqa: E402
                          siren, siren_target, stats)

torch.set_num_threads(ARGS.threads)
torch.set_num_interop_threads(1)
torch.manual_seed(1)


def bench_siren(repeat, warmup=3):
    rows = 40000
    x = torch.rand(rows, 2) * 2 - 1
    y = siren_target(x)
    model = siren("cpu")
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)

    samples, losses = [], []
    for step in range(warmup + repeat):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step >= warmup:
            samples.append((time.perf_counter() - t0) * 1e3)
    return {"spec": SIREN_SPEC,
            "unit": "step", **stats(samples), "timing": "per-step", "rows": rows,
            "batch_size": rows, "steps_per_epoch": 1,
            "parameters": sum(p.numel() for p in model.parameters()), "warmup": warmup,
            "first_loss": losses[0], "last_loss": losses[-1]}


def epochs(model, opt, x, y, batch, repeat, warmup):
    """Times `repeat` epochs of minibatch training (cross-entropy) after `warmup`, the rows
    shuffled each epoch, the loss read back every step (loss.item(), as our trainer does)."""
    rows = x.shape[0]
    samples, losses = [], []
    steps_per_epoch = (rows + batch - 1) // batch
    for epoch in range(warmup + repeat):
        t0 = time.perf_counter()
        perm = torch.randperm(rows)
        total = 0.0
        for first in range(0, rows, batch):
            idx = perm[first:first + batch]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total / steps_per_epoch)
        if epoch >= warmup:
            samples.append((time.perf_counter() - t0) * 1e3)
    return {"unit": "epoch", **stats(samples), "timing": "per-epoch", "rows": rows,
            "batch_size": batch, "steps_per_epoch": steps_per_epoch,
            "parameters": sum(p.numel() for p in model.parameters()), "warmup": warmup,
            "first_loss": losses[0], "last_loss": losses[-1]}


def bench_tanh(repeat, warmup=1):
    rows, inputs, classes = 10000, 135, 27
    x = torch.randn(rows, inputs)
    y = torch.randint(0, classes, (rows,))
    widths = [inputs, 216, 216, 216, 108, 54, 54]
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(widths[-1], classes))
    for m in model:
        if isinstance(m, nn.Linear):  # as our engine: Glorot uniform, zero bias
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    spec = ("dense:216,tanh,dense:216,tanh,dense:216,tanh,dense:108,tanh,dense:54,tanh,"
            "dense:54,tanh,dense:27")
    return {"spec": spec, **epochs(model, opt, x, y, 256, repeat, warmup)}


class ConvNames(nn.Module):
    """ironlearn-bench's conv workload on 8 character ids:
    embedding:27:16,conv:64:3,tanh,conv:64:3,tanh,merge:4,dense:27 (nn.Conv1d with no padding;
    the four windows left, flattened, into the last dense)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(27, 16)
        self.conv1 = nn.Conv1d(16, 64, 3)
        self.conv2 = nn.Conv1d(64, 64, 3)
        self.out = nn.Linear(64 * 4, 27)
        for m in (self.conv1, self.conv2, self.out):  # as our engine: Glorot uniform, zero bias
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, ids):
        h = self.embed(ids).transpose(1, 2)  # (N, 16 channels, 8 positions)
        h = torch.tanh(self.conv2(torch.tanh(self.conv1(h))))
        return self.out(h.flatten(1))


def bench_conv(repeat, warmup=1):
    rows, context, vocab = 20000, 8, 27
    x = torch.randint(0, vocab, (rows, context))
    y = torch.randint(0, vocab, (rows,))
    model = ConvNames()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return {"spec": "embedding:27:16,conv:64:3,tanh,conv:64:3,tanh,merge:4,dense:27",
            **epochs(model, opt, x, y, 256, repeat, warmup)}


def main():
    out = {"tool": "pytorch", "backend": "cpu", "device": f"torch {torch.__version__}",
           "details": "BLAS " + ("MKL" if torch.backends.mkl.is_available() else
                                 "system libblas (OpenBLAS on Debian)"),
           "threads": ARGS.threads, "backend_threads": torch.get_num_threads(),
           "repeat": ARGS.repeat,
           "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                                  "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}}
    if not ARGS.json:
        print(f"torch_bench: {out['device']}, {out['details']}, {ARGS.threads} threads",
              flush=True)
    if "sgemm" in ARGS.only:
        out["sgemm"] = bench_sgemm(ARGS.repeat, "cpu")
        if not ARGS.json:
            print_sgemm(out["sgemm"])
    for name, fn, label in (("siren", bench_siren, "siren 2-256x3-1, 40000 rows, full"),
                            ("tanh", bench_tanh, "tanh mlp 135-...-27, 10000 rows/256"),
                            ("conv", bench_conv, "conv names 8x27-16-64-64-27, 20000/256")):
        if name in ARGS.only:
            r = out[name] = fn(ARGS.repeat)
            if not ARGS.json:
                print_workload(label, r)
    if ARGS.json:
        json.dump(out, sys.stdout)
        print()


if __name__ == "__main__":
    main()
