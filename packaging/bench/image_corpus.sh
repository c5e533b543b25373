#!/usr/bin/env bash
# Trains every image preset on every image of a corpus under the same time budgets and prints
# PSNR / SSIM per (image, preset, budget): the table the image task's defaults are chosen from.
#
#   packaging/bench/image_corpus.sh [--budgets "5 10 20 60"] [--size 256] [--presets "..."] [DIR]
#
# DIR: the images (default: scikit-image's sample data, unpacked from Debian's python3-skimage
# into $TMPDIR without installing it). Each (image, preset, budget) is its own run of
# `ironlearn-cli train IMAGE --image-size SIZE --preset P --max-seconds B`, presets interleaved
# per image so each gets the same machine. CLI: IRONLEARN_CLI (default build/release/...).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="${IRONLEARN_CLI:-$root/build/release/src/cli/ironlearn-cli}"
budgets="5 10 20"
size=256
presets="hashgrid siren fourier-relu classic"
dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --budgets) budgets="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --presets) presets="$2"; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "image_corpus.sh: unknown option $1" >&2; exit 2 ;;
        *) dir="$1"; shift ;;
    esac
done
[[ -x "$cli" ]] || { echo "image_corpus.sh: $cli is not an executable" >&2; exit 2; }

if [[ -z "$dir" ]]; then
    dir="${TMPDIR:-/tmp}/ironlearn-skimage/usr/lib/python3/dist-packages/skimage/data"
    if [[ ! -d "$dir" ]]; then
        work="${TMPDIR:-/tmp}/ironlearn-skimage"
        mkdir -p "$work"
        (cd "$work" && apt-get download python3-skimage >/dev/null && dpkg-deb -x python3-skimage_*.deb .)
    fi
    # Photos (gray and colour), text (binary and scanned), silhouettes, texture, synthetic.
    images="camera astronaut coffee chelsea bw_text page text horse logo brick grass moon checker_bilevel"
else
    images="$(cd "$dir" && ls *.png *.jpg 2>/dev/null | sed 's/\.[^.]*$//')"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf "%-16s %-13s" image preset
for b in $budgets; do printf " %14s" "${b}s PSNR/SSIM"; done
echo
for img in $images; do
    file="$(ls "$dir/$img".* | head -1)"
    for p in $presets; do
        printf "%-16s %-13s" "$img" "$p"
        for b in $budgets; do
            "$cli" train "$file" --image-size "$size" --preset "$p" --max-seconds "$b" \
                --metrics-json "$tmp/m.json" --out "$tmp/m.safetensors" >/dev/null 2>&1 || true
            python3 - "$tmp/m.json" <<'PY'
import json, sys
try:
    m = json.load(open(sys.argv[1]))
    print(f" {m['psnr_db']:7.2f} / {m['ssim']:.3f}", end="")
except Exception:
    print(f" {'failed':>14}", end="")
PY
            rm -f "$tmp/m.json"
        done
        echo
    done
done
