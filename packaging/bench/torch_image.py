#!/usr/bin/python3
"""PyTorch's SIREN and Fourier-feature MLP fit a picture for a wall-clock budget, measured as
ironlearn-cli race measures its presets; for packaging/bench/image_vs_torch.sh.

    /usr/bin/python3 torch_image.py TARGET.png [--seconds 20] [--checkpoints 5,10,20]
        [--threads N] [--models siren,ffn] [--protocols paper,ours] [--seed 1] [--json FILE]
    /usr/bin/python3 torch_image.py TARGET.png --check-model MODEL.safetensors

TARGET.png is the picture at its training size, as `ironlearn-cli race IMAGE --out-dir DIR`
writes it (DIR/target.png): the same pixels, grey levels and coordinates as our presets train on
(image_metrics.py; PSNR and SSIM are computed as ImageQuality.cpp computes them).

Models (PyTorch eager, float32; the architectures of our `siren` and `fourier-relu` presets):
  siren  Sitzmann et al. 2020: 2 -> 256 -> 256 -> 256 -> C, sine with w0 = 30 after each hidden
         layer, their initialisation (torch_common.siren).
  ffn    Tancik et al. 2020: [sin(2 pi x B^T), cos(2 pi x B^T)], B 256 x 2 ~ N(0, 10^2) fixed,
         then three ReLU layers of 256 and a linear output; nn.Linear's default initialisation.
Protocols (Adam, betas 0.9 / 0.999, eps 1e-8, MSE):
  paper  what the authors use to fit an image: the whole picture every step, constant rate,
         1e-4 for SIREN (Sitzmann et al.), 1e-3 for the FFN (Tancik et al.).
  ours   the image task's defaults (ImageTask::applyDefaults), as race trains: batches of 4096
         pixels (the whole picture when smaller) over a fresh permutation each epoch, rate 2e-3
         on a cosine to 0 stretched over the budget (the total steps estimated from the steps
         per second so far, as Trainer::scheduleTotal does).
Our trainer's stall watch (which lowers the rate when the loss sits at the picture's variance)
has no PyTorch counterpart: the PyTorch runs train as their protocol says.

Measuring takes no training time: at the first step boundary at or past each checkpoint the
weights are copied (counted in the budget), and measured after the run. One line per (model,
protocol, checkpoint) on stdout; --json writes race's --json shape ("presets" named
torch-MODEL-PROTOCOL), with SSIM at each checkpoint too.

--check-model measures one of our own model files (preset siren or fourier-relu, trained on
TARGET.png) with this code, to compare with what ironlearn-cli reports for it.

Threads: as torch_bench.py, OPENBLAS_NUM_THREADS and OMP_NUM_THREADS are set to --threads
before torch is imported (Debian's torch runs its matrix products in the system OpenBLAS,
which ignores torch.set_num_threads).
"""

import argparse
import json
import math
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("target", help="the picture at its training size (race --out-dir's target.png)")
    p.add_argument("--seconds", type=float, default=20, help="training time per run (default 20)")
    p.add_argument("--checkpoints", default=None,
                   help="times in seconds, comma-separated (default 5,10,20 below the budget, "
                        "then the budget)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads for ATen and OpenBLAS (default: one per core)")
    p.add_argument("--models", default="siren,ffn", help="siren, ffn (default both)")
    p.add_argument("--protocols", default="paper,ours", help="paper, ours (default both)")
    p.add_argument("--steps", type=int, default=0,
                   help="also stop after this many steps; the cosine then spans them, as with "
                        "`ironlearn-cli train --steps N` (to compare per step, not per second)")
    p.add_argument("--seed", type=int, default=1, help="torch.manual_seed (default 1)")
    p.add_argument("--name", help="the picture's name in the output (default: TARGET's)")
    p.add_argument("--json", help="write the results as JSON to this file")
    p.add_argument("--check-model", metavar="MODEL",
                   help="measure this Iron Learn model file on TARGET instead of training")
    a = p.parse_args()
    if not os.path.isfile(a.target):
        p.error(f"{a.target}: no such file")
    a.models = [m for m in a.models.split(",") if m]
    a.protocols = [m for m in a.protocols.split(",") if m]
    for m in a.models:
        if m not in ("siren", "ffn"):
            p.error(f"--models: unknown model '{m}' (siren or ffn)")
    for m in a.protocols:
        if m not in ("paper", "ours"):
            p.error(f"--protocols: unknown protocol '{m}' (paper or ours)")
    if a.threads < 1 or a.seconds <= 0 or a.steps < 0:
        p.error("--threads and --seconds must be positive, --steps not negative")
    if a.checkpoints is None:
        a.checkpoints = [c for c in (5.0, 10.0, 20.0) if c < a.seconds * (1 - 1e-9)] + [a.seconds]
    else:
        a.checkpoints = [float(c) for c in a.checkpoints.split(",") if c.strip()]
        if any(c <= 0 or c > a.seconds * (1 + 1e-9) for c in a.checkpoints) or \
                a.checkpoints != sorted(set(a.checkpoints)):
            p.error("--checkpoints must increase and lie in (0, --seconds]")
    return a


ARGS = parse_args()
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)

import numpy as np  # noqa: E402  (after the thread variables, on purpose)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import image_metrics as im  # noqa: E402
from torch_common import siren  # noqa: E402

torch.set_num_threads(ARGS.threads)
torch.set_num_interop_threads(1)

FFN_SPEC = "fourier:256:10,dense:256,relu,dense:256,relu,dense:256,relu,dense:{c}"
SIREN_SPEC = "dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense:{c}"
PAPER_LR = {"siren": 1e-4, "ffn": 1e-3}
OURS_LR, OURS_BATCH = 2e-3, 4096


class FourierFeatures(nn.Module):
    """[sin(2 pi x B^T) | cos(2 pi x B^T)], B fixed (a buffer named as our file names it)."""

    def __init__(self, count, scale, inputs=2):
        super().__init__()
        self.register_buffer("projection", torch.randn(count, inputs) * scale)

    def forward(self, x):
        z = (2 * math.pi) * (x @ self.projection.t())
        return torch.cat([torch.sin(z), torch.cos(z)], dim=1)


class Net(nn.Module):
    """`self.layers`, so the state dict's names are those of our model files (layers.0.weight)."""

    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, x):
        return self.layers(x)


def build(model, channels):
    if model == "siren":
        return Net(siren("cpu", channels)), SIREN_SPEC.format(c=channels)
    layers = [FourierFeatures(256, 10.0)]
    width = 512
    for _ in range(3):
        layers += [nn.Linear(width, 256), nn.ReLU()]
        width = 256
    return Net(nn.Sequential(*layers, nn.Linear(width, channels))), FFN_SPEC.format(c=channels)


def predict(net, x, rows=16384):
    with torch.no_grad():
        return torch.cat([net(x[i:i + rows]) for i in range(0, x.shape[0], rows)]).numpy()


def measure(net, x, target):
    pred = im.clamped(predict(net, x)).reshape(target.shape)
    return im.psnr_db(pred, target), im.ssim_index(pred, target)


def schedule_total(step, elapsed, seconds):
    """Trainer::scheduleTotal for a time budget: the steps the budget will hold at this rate."""
    if step < 2 or elapsed <= 0:
        return max(step + 1, 1000)
    return max(step + 1, step + int(step / elapsed * (seconds - elapsed)))


def train(net, x, y, protocol, model, o):
    """Trains for o.seconds; returns (steps, seconds, copy seconds, stop reason, captures), a
    capture being (step, seconds, state dict) at the first step boundary past a checkpoint."""
    n = x.shape[0]
    ours = protocol == "ours"
    batch = min(n, OURS_BATCH) if ours else n
    lr = OURS_LR if ours else PAPER_LR[model]
    opt = torch.optim.Adam(net.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8)
    captures, copy_seconds, reason = [], 0.0, "time_budget"
    perm, pos, step, nxt = None, n, 0, 0
    t0 = time.perf_counter()
    elapsed = 0.0
    while True:
        if batch < n:
            if pos >= n:
                perm, pos = torch.randperm(n), 0
            idx = perm[pos:pos + batch]
            pos += batch
            xb, yb = x[idx], y[idx]
        else:
            xb, yb = x, y
        if ours:
            t = step / (o.steps or schedule_total(step, elapsed, o.seconds))
            for g in opt.param_groups:
                g["lr"] = lr * 0.5 * (1 + math.cos(math.pi * min(t, 1.0)))
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(net(xb), yb)
        loss.backward()
        opt.step()
        step += 1
        finite = math.isfinite(loss.item())
        elapsed = time.perf_counter() - t0
        if nxt < len(o.checkpoints) and elapsed >= o.checkpoints[nxt]:
            c0 = time.perf_counter()
            captures.append((step, elapsed,
                             {k: v.detach().clone() for k, v in net.state_dict().items()}))
            while nxt < len(o.checkpoints) and elapsed >= o.checkpoints[nxt]:
                nxt += 1
            copy_seconds += time.perf_counter() - c0
        if not finite:
            reason = "non_finite"
            break
        if elapsed >= o.seconds:
            break
        if step == o.steps:
            reason = "finished"
            break
    return step, elapsed, copy_seconds, reason, captures


def warm_up(x, channels):
    """A few steps of a throwaway SIREN, so that starting OpenBLAS's threads and the allocator's
    first pages are charged to no timed run. (Our race has no such step: its first preset pays
    its own start-up within its budget.)"""
    net, _ = build("siren", channels)
    opt = torch.optim.Adam(net.parameters())
    xb = x[:min(x.shape[0], OURS_BATCH)]
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        net(xb).square().mean().backward()
        opt.step()


def run(model, protocol, x, target, o):
    torch.manual_seed(o.seed)
    h, w, c = target.shape
    net, spec = build(model, c)
    y = torch.from_numpy(target.reshape(-1, c).copy())
    steps, seconds, copy_seconds, reason, captures = train(net, x, y, protocol, model, o)
    final = measure(net, x, target)
    e = {"preset": f"torch-{model}-{protocol}", "model": model, "protocol": protocol,
         "layers": spec, "parameters": sum(p.numel() for p in net.parameters()),
         "optimizer": "adam", "lr": OURS_LR if protocol == "ours" else PAPER_LR[model],
         "schedule": "cosine over the budget" if protocol == "ours" else "constant",
         "batch": min(h * w, OURS_BATCH) if protocol == "ours" else h * w,
         "steps": steps, "seconds": seconds, "steps_per_second": steps / seconds,
         "checkpoint_copy_seconds": copy_seconds, "stop_reason": reason,
         "psnr_db": final[0], "ssim": final[1],
         "psnr_db_at": [], "ssim_at": [], "steps_at": [], "seconds_at": []}
    for cp in o.checkpoints:
        got = next((cap for cap in captures if cap[1] >= cp), None)
        if got is not None:
            net.load_state_dict(got[2])
            psnr, ssim = measure(net, x, target)
            at = (psnr, ssim, got[0], got[1])
        elif reason in ("time_budget", "finished"):  # the run ended before: the final weights
            at = (final[0], final[1], steps, seconds)
        else:
            at = (None, None, None, None)
        for key, v in zip(("psnr_db_at", "ssim_at", "steps_at", "seconds_at"), at):
            e[key].append(v)
    return e


def fmt(v, spec, width):
    return format(v, spec).rjust(width) if v is not None else "-".rjust(width)


def print_entry(e, checkpoints):
    for cp, psnr, ssim, steps, sec in zip(checkpoints, e["psnr_db_at"], e["ssim_at"],
                                          e["steps_at"], e["seconds_at"]):
        rate = steps / sec if steps is not None and sec else None
        print(f"{e['preset']:20} {cp:7g} s  steps {fmt(steps, 'd', 7)}  "
              f"at {fmt(sec, '.2f', 7)} s  {fmt(rate, '.1f', 7)} steps/s  "
              f"PSNR {fmt(psnr, '.2f', 7)} dB  SSIM {fmt(ssim, '.4f', 6)}", flush=True)
    if e["stop_reason"] != "time_budget":
        print(f"{e['preset']:20} stopped: {e['stop_reason']} at step {e['steps']}", flush=True)


def cpu_capability():
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def check_model(path, x, target):
    """Our model file, measured here: loads its tensors into the same PyTorch modules."""
    tensors, meta = im.read_safetensors(path)
    spec = json.loads(meta["architecture"])["spec"]
    c = target.shape[2]
    model = {SIREN_SPEC.format(c=c): "siren", FFN_SPEC.format(c=c): "ffn"}.get(spec)
    if model is None:
        sys.exit(f"torch_image.py: {path}: layers {spec} are neither the siren nor the "
                 f"fourier-relu preset for {c} channel(s)")
    net, _ = build(model, c)
    state = {k: torch.from_numpy(v.copy()) for k, v in tensors.items() if k.startswith("layers.")}
    net.load_state_dict(state, strict=True)
    psnr, ssim = measure(net, x, target)
    print(f"{os.path.basename(path)}: PSNR {psnr:.6f} dB, SSIM {ssim:.6f} ({spec})")


def main(o):
    target = im.load_target(o.target)
    h, w, c = target.shape
    x = torch.from_numpy(im.coordinates(w, h))
    if o.check_model:
        check_model(o.check_model, x, target)
        return
    name = o.name or os.path.basename(o.target)
    device = (f"PyTorch {torch.__version__} ({cpu_capability()}), {o.threads} "
              f"thread{'s' if o.threads != 1 else ''}")
    print(f"# torch_image.py on {name} at {w}x{h} "
          f"({'gray' if c == 1 else 'RGB'}), {o.seconds:g} s per run, {device}", flush=True)
    warm_up(x, c)
    entries = []
    for model in o.models:
        for protocol in o.protocols:
            entries.append(run(model, protocol, x, target, o))
            print_entry(entries[-1], o.checkpoints)
    if o.json:
        out = {"image": name, "width": w, "height": h, "channels": c,
               "seconds": o.seconds, "seed": o.seed, "threads": o.threads, "device": device,
               "checkpoints": o.checkpoints, "presets": entries}
        with open(o.json, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main(ARGS)
