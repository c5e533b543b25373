#!/usr/bin/env bash
# Sweeps the hash grid's table learning rate (--grid-lr) against the MLP's (--lr) on several
# kinds of picture at a fixed number of steps (deterministic: the machine's load does not
# change the figures) and prints PSNR per picture with the median, the worst and the mean (the
# geometric mean of the MSEs, in dB) over the pictures: the table the defaults are chosen from.
# A picture fit to float precision (checker_bilevel: 10x10 pixels, 150-190 dB) moves the mean
# more than the others together; the median and the worst picture do not care.
#
#   packaging/bench/hashgrid_lr_sweep.sh [--steps 1500] [--size 256] [--grid-lrs "..."]
#                                        [--lrs "..."] [--images "..."] [DIR]
#
# DIR: the pictures (default: scikit-image's sample data, skimage_data.sh). Each cell is one run
# of `ironlearn-cli train IMAGE --image-size SIZE --steps N --grid-lr G --lr L` with the default
# preset (hashgrid). CLI: IRONLEARN_CLI (default build/release/...).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="${IRONLEARN_CLI:-$root/build/release/src/cli/ironlearn-cli}"
steps=1500
size=256
grid_lrs="2e-3 5e-3 1e-2 2e-2"
lrs="1e-3 2e-3 5e-3"
# Photos, text (binary and scanned), a silhouette, textures, a synthetic checker.
images="camera coffee bw_text page horse brick grass checker_bilevel"
dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --steps) steps="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --grid-lrs) grid_lrs="$2"; shift 2 ;;
        --lrs) lrs="$2"; shift 2 ;;
        --images) images="$2"; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "hashgrid_lr_sweep.sh: unknown option $1" >&2; exit 2 ;;
        *) dir="$1"; shift ;;
    esac
done
[[ -x "$cli" ]] || { echo "hashgrid_lr_sweep.sh: $cli is not an executable" >&2; exit 2; }
[[ -n "$dir" ]] || dir="$("$here/skimage_data.sh")"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
results="$tmp/results.tsv"
for img in $images; do
    file="$(ls "$dir/$img".* | head -1)"
    for g in $grid_lrs; do
        for l in $lrs; do
            psnr=failed
            if "$cli" train "$file" --image-size "$size" --steps "$steps" --grid-lr "$g" \
                --lr "$l" --metrics-json "$tmp/m.json" --out "$tmp/m.safetensors" \
                >/dev/null 2>&1; then
                psnr="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["psnr_db"])' \
                    "$tmp/m.json")"
            fi
            printf "%s\t%s\t%s\t%s\n" "$img" "$g" "$l" "$psnr" | tee -a "$results" >&2
        done
    done
done

python3 - "$results" "$steps" "$size" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
images = list(dict.fromkeys(r[0] for r in rows))
combos = list(dict.fromkeys((r[1], r[2]) for r in rows))
psnr = {(r[0], r[1], r[2]): (float(r[3]) if r[3] != "failed" else float("nan")) for r in rows}
print(f"PSNR (dB) after {sys.argv[2]} steps at {sys.argv[3]} px, default preset (hashgrid)")
print("| grid lr | MLP lr | " + " | ".join(images) + " | median | worst | mean |")
print("|---|---|" + "---|" * (len(images) + 3))
for g, l in combos:
    v = [psnr[(i, g, l)] for i in images]
    print(f"| {g} | {l} | " + " | ".join(f"{x:.1f}" for x in v) +
          f" | {statistics.median(v):.1f} | {min(v):.1f} | {statistics.fmean(v):.1f} |")
PY
