#!/usr/bin/env python3
"""Writes the speed table of docs/benchmarks.md from the rounds compare.sh recorded.

    packaging/bench/bench_tables.py [--check] [RESULTS [DOC]]

RESULTS: the folder of recorded rounds (default packaging/bench/results/speed, written by
`compare.sh --record`); DOC: the page (default docs/benchmarks.md). The table goes between the
page's two marker lines; nothing else on the page changes. Rounds of one machine, date, commit,
SIMD target and thread count share a row, their figures joined by " / " in the order they ran.
--check: change nothing, and exit 1 when the page's table is not the one the rounds give (the
test suite's testBenchmarkFigures), so a figure on the page is always a recorded one.
"""
import glob
import json
import os
import sys

BEGIN = ("<!-- speed table: written by packaging/bench/bench_tables.py from "
         "packaging/bench/results/speed; do not edit -->")
END = "<!-- end of the speed table -->"
WORKLOADS = [
    ("siren", "SIREN 2→256→256→256→1, 40,000 samples, full batch, Adam: ms per step"),
    ("tanh", "tanh MLP 135→216→216→216→108→54→54→27, batch 256, Adam: ms per epoch"),
    ("conv", "conv names stack, 20,000 rows, batch 256, Adam: ms per epoch"),
]
SIMD_NAMES = {"avx512": "AVX-512", "avx2": "AVX2", "sse4": "SSE4", "ssse3": "SSSE3"}


def load(folder):
    rounds = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            r = json.load(f)
        for key in ("date", "commit", "simd", "threads", "machine", "command", "ours", "torch"):
            if key not in r:
                sys.exit(f"{path}: no \"{key}\": not a round compare.sh --record wrote")
        rounds.append(r)
    return rounds


def table(rounds):
    groups = {}
    for r in rounds:
        key = (r["machine"], r["date"], r["commit"], r["simd"], r["threads"])
        groups.setdefault(key, []).append(r)
    lines = ["| workload | SIMD | threads | ours | PyTorch | ours / PyTorch (time) "
             "| machine, date, commit |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, label in WORKLOADS:
        for key in sorted(groups, key=lambda k: (k[1], k[0], k[4], k[3] != "avx512", k[3])):
            machine, date, commit, simd, threads = key
            ours, theirs, ratio = [], [], []
            for r in groups[key]:
                if name in r["ours"] and name in r["torch"]:
                    a, b = r["ours"][name]["ms"], r["torch"][name]["ms"]
                    ours.append(f"{a:.0f}")
                    theirs.append(f"{b:.0f}")
                    ratio.append(f"{a / b:.2f}")
            if not ours:
                continue
            lines.append(f"| {label} | {SIMD_NAMES.get(simd, simd)} | {threads} | "
                         f"{' / '.join(ours)} | {' / '.join(theirs)} | **{' / '.join(ratio)}** | "
                         f"{machine}, {date}, {commit} |")
            # The SIREN step's own matrix products on buffers of the same shapes: its floor.
            floors = [r["ours"]["siren_gemms"]["ms"] for r in groups[key]
                      if name == "siren" and "siren_gemms" in r["ours"] and "siren" in r["ours"]]
            steps = [r["ours"]["siren"]["ms"] for r in groups[key]
                     if name == "siren" and "siren_gemms" in r["ours"] and "siren" in r["ours"]]
            if floors:
                lines.append("| SIREN's matrix products alone (the floor): ms, and the step / "
                             "them | "
                             f"{SIMD_NAMES.get(simd, simd)} | {threads} | "
                             f"{' / '.join(f'{a:.0f}' for a in floors)} | | "
                             f"{' / '.join(f'{b / a:.2f}x' for a, b in zip(floors, steps))} | "
                             f"{machine}, {date}, {commit} |")
    commands = sorted({r["command"] for r in rounds})
    lines.append("")
    lines.append("Measured with " + ("; ".join(f"`{c}`" for c in commands) or "nothing yet") + ".")
    return "\n".join(lines)


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    folder = args[0] if args else os.path.join(here, "results", "speed")
    doc = args[1] if len(args) > 1 else os.path.join(root, "docs", "benchmarks.md")
    text = open(doc, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{doc}: no speed table markers ({BEGIN!r} ... {END!r})")
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    new = "\n" + table(load(folder)) + "\n"
    if old == new:
        return 0
    if check:
        print(f"{doc}: the speed table is not the one {folder} gives; run "
              "packaging/bench/bench_tables.py to write it", file=sys.stderr)
        return 1
    with open(doc, "w", encoding="utf-8") as f:
        f.write(head + BEGIN + new + END + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
