#!/usr/bin/env bash
# Trains image presets on every picture of a corpus under the same time budget and writes what
# they reached at each checkpoint: the table the image task's defaults are chosen from.
#
#   packaging/bench/image_corpus.sh [--seconds 20] [--checkpoints 5,10,20] [--size 256]
#                                   [--presets a,b] [--out DIR] [--plot PNG] [--separate] [IMAGEDIR]
#
# IMAGEDIR: the pictures (default: 13 of scikit-image's sample pictures, unpacked from Debian's
# python3-skimage into $TMPDIR without installing it). Each picture is one
# `ironlearn-cli race PICTURE --seconds S --checkpoints C`: the presets one after the other, the
# same budget on the same threads; weights copied at each checkpoint and measured after the
# run. A checkpoint before the end is taken mid-schedule (the cosine rate is still high), so it
# is a lower bound of what a run of that length reaches. DIR/PICTURE.json per picture, then the
# table (corpus_table.py DIR); --plot PNG draws PSNR against seconds (plot_psnr.py DIR).
#
# --separate: instead, one `train --max-seconds B` per checkpoint B, the way a user runs it
# (slower: every budget is its own run). CLI: IRONLEARN_CLI (default build/release/...).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="${IRONLEARN_CLI:-$root/build/release/src/cli/ironlearn-cli}"
seconds=20
checkpoints=""
size=256
presets="hashgrid,siren,fourier-relu,classic"
out=""
plot=""
separate=0
dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --checkpoints) checkpoints="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --presets) presets="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --plot) plot="$2"; shift 2 ;;
        --separate) separate=1; shift ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "image_corpus.sh: unknown option $1" >&2; exit 2 ;;
        *) dir="$1"; shift ;;
    esac
done
[[ -x "$cli" ]] || { echo "image_corpus.sh: $cli is not an executable" >&2; exit 2; }
[[ -n "$checkpoints" ]] || checkpoints="$(for c in 5 10 20 60; do
    (( c < ${seconds%.*} )) && printf "%s," "$c"; done)$seconds"
py=/usr/bin/python3 # Debian's, with the packages the table and plot use

if [[ -z "$dir" ]]; then
    dir="$("$here/skimage_data.sh")"
    images="$("$here/skimage_data.sh" --pictures)"
else
    images="$(cd "$dir" && shopt -s nullglob && for f in *.png *.jpg *.jpeg; do echo "${f%.*}"; done)"
fi
if [[ -z "$out" ]]; then
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores," \
     "load $(cut -d' ' -f1-3 /proc/loadavg) at start; $(date -u +%FT%TZ)"
"$cli" devices 2>/dev/null | sed -n '2p' | sed 's/^ */# /' || true

if (( separate )); then
    printf "%-16s %-13s" image preset
    for b in ${checkpoints//,/ }; do printf " %14s" "${b}s PSNR/SSIM"; done
    echo
    for img in $images; do
        file="$(ls "$dir/$img".* | head -1)"
        for p in ${presets//,/ }; do
            printf "%-16s %-13s" "$img" "$p"
            for b in ${checkpoints//,/ }; do
                "$cli" train "$file" --image-size "$size" --preset "$p" --max-seconds "$b" \
                    --metrics-json "$out/m.json" --out "$out/m.safetensors" >/dev/null 2>&1 || true
                "$py" -c 'import json, sys; m = json.load(open(sys.argv[1]))
print(" %7.2f / %.3f" % (m["psnr_db"], m["ssim"]), end="")' "$out/m.json" 2>/dev/null ||
                    printf " %14s" failed
                rm -f "$out/m.json"
            done
            echo
        done
    done
    exit 0
fi

for img in $images; do
    file="$(ls "$dir/$img".* | head -1)"
    echo "# $img" >&2
    "$cli" race "$file" --image-size "$size" --seconds "$seconds" --checkpoints "$checkpoints" \
        --presets "$presets" --json "$out/$img.json" --quiet >/dev/null ||
        echo "image_corpus.sh: the race on $img failed" >&2
done
"$py" "$here/corpus_table.py" "$out"
[[ -z "$plot" ]] || "$py" "$here/plot_psnr.py" --out "$plot" "$out"
