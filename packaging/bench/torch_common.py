"""What torch_bench.py (CPU) and torch_cuda_bench.py (GPU) share: the statistics, the SIREN of
src/bench/Workloads.cpp, the sgemm timing and the lines printed in ironlearn-bench's format.

Import it after torch's thread variables are set (torch_bench.py sets them first)."""

import math
import statistics
import time

import torch
import torch.nn as nn

SIREN_SPEC = "dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense:1"


def stats(samples):
    return {"ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples),
            "samples": len(samples)}


class Sine(nn.Module):
    def __init__(self, w0):
        super().__init__()
        self.w0 = w0

    def forward(self, x):
        return torch.sin(self.w0 * x)


def siren(device, outputs=1):
    """2->256->256->256->outputs with sine (w0 = 30) and SIREN's initialisation."""
    layers, width = [], 2
    for i in range(3):
        lin = nn.Linear(width, 256)
        bound = 1.0 / width if i == 0 else math.sqrt(6.0 / width) / 30.0
        nn.init.uniform_(lin.weight, -bound, bound)
        layers += [lin, Sine(30.0)]
        width = 256
    last = nn.Linear(width, outputs)
    bound = math.sqrt(6.0 / width) / 30.0
    nn.init.uniform_(last.weight, -bound, bound)
    return nn.Sequential(*layers, last).to(device)


def siren_target(x):
    u, v = x[:, 0:1], x[:, 1:2]
    return torch.sin(3 * u) * torch.cos(2 * v) + 0.5 * torch.exp(-(u * u + v * v))


def bench_sgemm(repeat, device, sync=lambda: None):
    """GFLOP/s of C = A B for n = 256 ... 2048, samples of at least ~20 ms."""
    results = []
    for n in (256, 512, 1024, 2048):
        a = torch.rand(n, n, device=device) * 2 - 1
        b = torch.rand(n, n, device=device) * 2 - 1
        c = torch.empty(n, n, device=device)
        torch.mm(a, b, out=c)
        sync()
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        sync()
        once = max((time.perf_counter() - t0) * 1e3, 1e-3)
        inner = max(1, math.ceil(20.0 / once))
        samples = []
        for _ in range(repeat):
            sync()
            t0 = time.perf_counter()
            for _ in range(inner):
                torch.mm(a, b, out=c)
            sync()
            samples.append((time.perf_counter() - t0) * 1e3 / inner)
        s = stats(samples)
        results.append({"n": n, "gflops": 2.0 * n ** 3 / (s["ms"] * 1e-3) / 1e9, **s,
                        "inner": inner})
    return results


def print_sgemm(results):
    for g in results:
        print(f"{'sgemm n=' + str(g['n']):34} {g['gflops']:9.1f} GFLOP/s  "
              f"({g['ms']:.3f} ms median, min {g['min_ms']:.3f})", flush=True)


def print_workload(label, r, timing=False):
    how = f", {r['timing']}" if timing else ""
    print(f"{label:34} {r['ms']:9.2f} ms/{r['unit']}  (min {r['min_ms']:.2f}, "
          f"max {r['max_ms']:.2f}, {r['samples']} samples{how}; loss "
          f"{r['first_loss']:.4g} -> {r['last_loss']:.4g})", flush=True)
