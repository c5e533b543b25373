#!/usr/bin/python3
"""The table of an image corpus run (image_corpus.sh): PSNR (and SSIM where the race measured it)
per picture and preset at each checkpoint, from the race JSON files in one or more directories,
then each preset's median and minimum over the pictures. (plot_psnr.py draws the same files.)

    corpus_table.py DIR [DIR...] [--wide] [--markdown]
"""

import argparse
import json
import math
import pathlib
import statistics
import sys


def load(dirs):
    """{picture: {preset: entry}} with entry = {seconds_at, psnr_at, ssim_at, steps_per_second}."""
    table = {}
    for d in dirs:
        for f in sorted(pathlib.Path(d).glob("*.json")):
            try:
                race = json.loads(f.read_text())
            except (OSError, ValueError) as e:
                print(f"corpus_table.py: {f}: {e}", file=sys.stderr)
                continue
            if "presets" not in race or "checkpoints" not in race:
                continue  # not a race file
            for p in race["presets"]:
                table.setdefault(f.stem, {})[p["preset"]] = {
                    "checkpoints": race["checkpoints"],
                    "seconds_at": p.get("seconds_at", []),
                    "psnr_at": p.get("psnr_db_at", []),
                    "ssim_at": p.get("ssim_at", []),
                    "steps_per_second": p.get("steps_per_second", float("nan")),
                }
    return table


def num(v):
    return float("nan") if v is None else float(v)


def emit(head, rows, markdown, text_columns):
    """Prints a table as Markdown or aligned text (the first text_columns left-aligned)."""
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for r in [head] + rows:
        print("  ".join(str(x).ljust(w) if i < text_columns else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(r, widths))))


def print_table(table, markdown):
    checkpoints = sorted({c for pics in table.values() for e in pics.values()
                          for c in e["checkpoints"]})
    presets = list(dict.fromkeys(p for pics in table.values() for p in pics))
    head = ["picture", "preset"] + [f"{c:g} s" for c in checkpoints] + ["steps/s"]
    rows, per_preset = [], {p: {c: [] for c in checkpoints} for p in presets}
    for pic in sorted(table):
        for preset in presets:
            e = table[pic].get(preset)
            if not e:
                continue
            cells = []
            for c in checkpoints:
                if c not in e["checkpoints"]:
                    cells.append("")
                    continue
                i = e["checkpoints"].index(c)
                psnr = num(e["psnr_at"][i]) if i < len(e["psnr_at"]) else float("nan")
                ssim = num(e["ssim_at"][i]) if i < len(e["ssim_at"]) else float("nan")
                per_preset[preset][c].append(psnr)
                cells.append(f"{psnr:.1f}" + ("" if math.isnan(ssim) else f" / {ssim:.3f}"))
            rows.append([pic, preset] + cells + [f"{e['steps_per_second']:.0f}"])
    for preset in presets:
        for label, f in (("median", statistics.median), ("minimum", min)):
            cells = []
            for c in checkpoints:
                v = [x for x in per_preset[preset][c] if not math.isnan(x)]
                cells.append(f"{f(v):.1f}" if v else "")
            rows.append([label, preset] + cells + [""])
    emit(head, rows, markdown, text_columns=2)


def print_wide(table, markdown):
    """One row per picture, a PSNR column per (preset, checkpoint), then medians and minima."""
    presets = list(dict.fromkeys(p for pics in table.values() for p in pics))
    cols = [(p, c) for p in presets
            for c in sorted({c for pics in table.values() if p in pics
                             for c in pics[p]["checkpoints"]})]
    head = ["picture"] + [f"{p} {c:g} s" for p, c in cols]

    def psnr(pic, p, c):
        e = table[pic].get(p)
        if not e or c not in e["checkpoints"]:
            return float("nan")
        i = e["checkpoints"].index(c)
        return num(e["psnr_at"][i]) if i < len(e["psnr_at"]) else float("nan")

    rows = [[pic] + [f"{psnr(pic, p, c):.1f}" for p, c in cols] for pic in sorted(table)]
    for label, f in (("median", statistics.median), ("minimum", min)):
        cells = []
        for p, c in cols:
            v = [x for x in (psnr(pic, p, c) for pic in table) if not math.isnan(x)]
            cells.append(f"{f(v):.1f}" if v else "")
        rows.append([label] + cells)
    emit(head, rows, markdown, text_columns=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--wide", action="store_true",
                    help="one row per picture, a PSNR column per preset and checkpoint")
    a = ap.parse_args()
    table = load(a.dirs)
    if not table:
        sys.exit("corpus_table.py: no race JSON files in " + " ".join(a.dirs))
    (print_wide if a.wide else print_table)(table, a.markdown)


if __name__ == "__main__":
    main()
