#!/usr/bin/env bash
# The studio's training size for pictures, checked on a corpus: what a first run shows after a few
# seconds when the picture is trained at 256 px (the studio's default) or at 512 px (the CLI's).
#
#   packaging/bench/image_size_corpus.sh [--budgets 10,30] [--sizes 256,512] [--out DIR] [IMAGEDIR]
#
# For every picture (default: the 13 scikit-image pictures image_corpus.sh uses) and budget B,
# `ironlearn-cli train PICTURE --image-size S --max-seconds B` once per size, the sizes one right
# after the other so both see the same machine load. A run stopped by the clock is mid-schedule,
# like the studio's first seconds. Every model is measured against the original box-averaged
# (area) to 512 px on its longest side, rendered at that size; and at 256 px, about what the
# studio's image view shows at 1024x700, on its own output there (the 256-trained model's render
# at 256, the 512-trained model's render box-averaged). Prints a row per picture and the mean.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="${IRONLEARN_CLI:-$root/build/release/src/cli/ironlearn-cli}"
budgets="10,30"
sizes="256,512"
out=""
dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --budgets) budgets="$2"; shift 2 ;;
        --sizes) sizes="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "image_size_corpus.sh: unknown option $1" >&2; exit 2 ;;
        *) dir="$1"; shift ;;
    esac
done
[[ -x "$cli" ]] || { echo "image_size_corpus.sh: $cli is not an executable" >&2; exit 2; }
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
for img in $images; do
    file="$(ls "$dir/$img".* | head -1)"
    # 512 and 256 px on the longest side, the picture's aspect kept.
    size_at() {
        /usr/bin/python3 -c 'import sys; from PIL import Image
w, h = Image.open(sys.argv[1]).size; k = int(sys.argv[2]) / max(w, h)
print(f"{max(64, round(w * k))}x{max(64, round(h * k))}")' "$file" "$1"
    }
    render="$(size_at 512)"
    small="$(size_at 256)"
    for b in ${budgets//,/ }; do
        for s in ${sizes//,/ }; do
            m="$out/$img-$s-$b"
            if "$cli" train "$file" --image-size "$s" --max-seconds "$b" --out "$m.safetensors" \
                   >"$m.log" 2>&1 &&
               "$cli" render "$m.safetensors" --size "$render" --out "$m.png" >/dev/null 2>&1 &&
               "$cli" render "$m.safetensors" --size "$small" --out "$m-small.png" >/dev/null 2>&1; then
                steps="$(grep '^step ' "$m.log" | tail -1 | cut -d' ' -f2)"
                echo "$img $b $s ${steps:-?} $m.png $m-small.png $file"
            else
                echo "image_size_corpus.sh: $img at $s px for $b s failed (see $m.log)" >&2
            fi
        done
    done
done >"$out/runs.txt"
echo "# load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
/usr/bin/python3 - "$out/runs.txt" <<'EOF'
import sys
from collections import defaultdict

import numpy as np
from PIL import Image


def picture(path):
    image = Image.open(path)
    image.load()
    return image.convert("L" if image.mode in ("L", "I;16", "I", "1") else "RGB")


def psnr(a, b):
    mse = float(np.mean((a - b) ** 2))
    return 99.0 if mse == 0 else 10 * np.log10(1 / mse)


def measured(render, small, original, size):
    """PSNR at 512 px, and at 256 px of the model's own output there: the 256-trained model's
    render at 256, the 512-trained model's render box-averaged to 256 (what a view showing it at
    256 px shows). The original is box-averaged (area) to each size."""
    big = picture(render)
    lo = picture(small)
    ref = picture(original).convert(big.mode)  # a colour file of gray pixels trains gray
    own = lo if size <= 256 else big.resize(lo.size, Image.BOX)
    pairs = [(big, ref.resize(big.size, Image.BOX)), (own, ref.resize(lo.size, Image.BOX))]
    return [psnr(np.asarray(a, dtype=np.float32) / 255, np.asarray(r, dtype=np.float32) / 255)
            for a, r in pairs]


rows = defaultdict(dict)
for line in open(sys.argv[1]):
    img, budget, size, steps, render, small, original = line.split()
    p512, p256 = measured(render, small, original, int(size))
    rows[(img, int(budget))][int(size)] = (p512, p256, steps)

sizes = sorted({s for v in rows.values() for s in v})
head = " ".join(f"{f'{s}px: @512 / @256 dB (steps)':>28}" for s in sizes)
print(f"{'picture':16} {'budget':>6}  {head}")
means = defaultdict(list)
for (img, budget), v in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    cells = []
    for s in sizes:
        if s in v:
            p512, p256, steps = v[s]
            means[(budget, s)].append((p512, p256))
            cells.append(f"{p512:9.2f} / {p256:6.2f} ({steps:>5})")
        else:
            cells.append(f"{'failed':>28}")
    print(f"{img:16} {budget:>5}s  " + " ".join(f"{c:>28}" for c in cells))
# Means with each PSNR capped at 60 dB (a smooth picture can come out exact at 256 px: 99 dB
# would outweigh the rest), and medians.
for name, reduce in (("mean (<=60 dB)", lambda v: np.minimum(v, 60).mean()), ("median", np.median)):
    for budget in sorted({b for b, _ in means}):
        cells = []
        for s in sizes:
            m = np.array(means[(budget, s)])
            cells.append(f"{reduce(m[:, 0]):9.2f} / {reduce(m[:, 1]):6.2f} (n={len(m):2})")
        print(f"{name:16} {budget:>5}s  " + " ".join(f"{c:>28}" for c in cells))
EOF
