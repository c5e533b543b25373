#!/usr/bin/python3
"""PSNR against seconds as a PNG: one panel per picture, one line per method.

    /usr/bin/python3 plot_psnr.py [--out psnr.png] INPUT...

INPUT: what `ironlearn-cli race` writes (--json FILE, or --out-dir's psnr.csv), what
torch_image.py --json writes, or a directory holding such files (searched one level down, as
image_vs_torch.sh leaves them). A psnr.csv is read only where no race JSON sits beside it; its
picture is named after its directory. Our presets are drawn solid, PyTorch's dashed.
Needs matplotlib (Debian python3-matplotlib)."""

import argparse
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(v):
    if v is None or v == "":
        return None
    v = float(v)  # race writes an infinite PSNR as "Infinity"
    return v if math.isfinite(v) else None


def from_json(path):
    """[(picture, method, seconds, psnr)] of a race or torch_image.py JSON; [] for other JSON."""
    with open(path) as f:
        j = json.load(f)
    if not isinstance(j, dict) or "presets" not in j or "checkpoints" not in j:
        return []
    series = []
    for p in j["presets"]:
        torch = p["preset"].startswith("torch-")
        method = p["preset"] if torch else "ironlearn " + p["preset"]
        series.append((j["image"], method, list(j["checkpoints"]),
                       [number(v) for v in p["psnr_db_at"]]))
    return series


def from_csv(path):
    """race's psnr.csv: seconds, then one PSNR column per preset."""
    picture = os.path.basename(os.path.dirname(os.path.abspath(path)))
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    seconds = [float(r[0]) for r in rows[1:]]
    return [(picture, "ironlearn " + name, seconds, [number(r[i + 1]) for r in rows[1:]])
            for i, name in enumerate(rows[0][1:])]


def collect(inputs):
    series = []
    for given in inputs:
        if os.path.isdir(given):
            dirs = [given] + sorted(os.path.join(given, d) for d in os.listdir(given)
                                    if os.path.isdir(os.path.join(given, d)))
            for d in dirs:
                found = []
                for name in sorted(os.listdir(d)):
                    if name.endswith(".json"):
                        found += from_json(os.path.join(d, name))
                has_race = any(not m.startswith("torch-") for _, m, _, _ in found)
                if not has_race and os.path.exists(os.path.join(d, "psnr.csv")):
                    found += from_csv(os.path.join(d, "psnr.csv"))
                series += found
        elif given.endswith(".csv"):
            series += from_csv(given)
        else:
            series += from_json(given)
    return series


# Colour by architecture (ours and PyTorch's alike), line style by who trained it.
FAMILIES = (("hashgrid", "tab:blue"), ("siren", "tab:orange"), ("fourier", "tab:green"),
            ("ffn", "tab:green"), ("classic", "tab:gray"))
STYLES = {"paper": ("--", "s"), "ours": (":", "^")}


def look(method, others):
    colour = next((c for key, c in FAMILIES if key in method), None)
    if colour is None:
        colour = plt.get_cmap("tab10")(4 + others.index(method) % 6)
    if not method.startswith("torch-"):
        return colour, "-", "o"
    return (colour, *STYLES.get(method.rsplit("-", 1)[1], ("-.", "d")))


def label(method):
    """ironlearn siren -> Iron Learn siren; torch-ffn-paper -> PyTorch FFN, paper protocol."""
    if method.startswith("ironlearn "):
        return "Iron Learn " + method[len("ironlearn "):]
    parts = method.split("-")
    if len(parts) == 3 and parts[0] == "torch":
        return f"PyTorch {parts[1].upper()}, {'our' if parts[2] == 'ours' else parts[2]} protocol"
    return method


def plot(series, out):
    pictures = list(dict.fromkeys(s[0] for s in series))
    methods = list(dict.fromkeys(s[1] for s in series))
    others = [m for m in methods if not any(key in m for key, _ in FAMILIES)]
    cols = min(3, len(pictures))
    rows = math.ceil(len(pictures) / cols)
    ncol = min(len(methods), {1: 2, 2: 3}.get(cols, 4))  # legend entries side by side
    legend_inches = 0.25 * math.ceil(len(methods) / ncol) + 0.15
    fig, axes = plt.subplots(rows, cols, squeeze=False, sharey=True,
                             figsize=(max(4.6 * cols, 7.0), 3.8 * rows + legend_inches))
    for ax, picture in zip(axes.flat, pictures):
        ticks = set()
        for picture_, method, seconds, psnr in series:
            pts = [(s, p) for s, p in zip(seconds, psnr) if p is not None]
            if picture_ != picture or not pts:
                continue
            colour, style, marker = look(method, others)
            ax.plot(*zip(*pts), color=colour, linestyle=style, marker=marker, markersize=4,
                    label=label(method))
            ticks.update(s for s, _ in pts)
        ax.set_title(picture)
        ax.set_xlabel("seconds of training")
        ax.set_xscale("log")
        ax.set_xticks(sorted(ticks), [f"{t:g}" for t in sorted(ticks)])
        ax.minorticks_off()
        ax.grid(True, alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("PSNR (dB)")
    for ax in list(axes.flat)[len(pictures):]:
        ax.axis("off")
    legend = {}
    for ax in list(axes.flat)[:len(pictures)]:
        for h, text in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(text, h)
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=ncol, frameon=False)
    fig.tight_layout(rect=(0, legend_inches / fig.get_size_inches()[1], 1, 1))
    fig.savefig(out, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", help="race/torch_image.py JSON, psnr.csv or directories")
    p.add_argument("--out", default="psnr.png", help="the PNG to write (default psnr.png)")
    a = p.parse_args()
    for given in a.inputs:
        if not os.path.exists(given):
            p.error(f"{given}: no such file or directory")
    series = collect(a.inputs)
    if not series:
        sys.exit("plot_psnr.py: no PSNR series found in " + ", ".join(a.inputs))
    plot(series, a.out)


if __name__ == "__main__":
    main()
