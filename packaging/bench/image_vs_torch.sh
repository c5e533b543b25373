#!/usr/bin/env bash
# Our image presets against PyTorch's SIREN and Fourier-feature MLP on the same pictures, the
# same time budget, the same threads, in one run, and one table of PSNR over time.
#
#   packaging/bench/image_vs_torch.sh [--seconds "5 10 20"] [--size 256] [--threads N]
#       [--protocols paper,ours] [--out-dir DIR] [--no-check] [IMAGES...]
#
# IMAGES: files, or names of scikit-image's sample pictures (default: camera (photo), bw_text
# (binary text), brick (texture); unpacked from Debian's python3-skimage into $TMPDIR as
# image_corpus.sh does). Per picture, one after the other so each gets the same machine:
# `ironlearn-cli race` with hashgrid, siren and fourier-relu, then torch_image.py on race's
# target.png (the picture exactly as trained) with SIREN and the FFN under each protocol
# (torch_image.py --help). Checkpoints: --seconds; the budget is the last of them.
# After the first picture's race, one of our SIREN models (1 s on its target.png) is measured by
# ironlearn-cli and by torch_image.py --check-model: PSNR within 0.01 dB and SSIM within 1e-4,
# or the script stops (--no-check skips it).
# DIR (default: a new directory in $TMPDIR) keeps each picture's race.json, psnr.csv,
# torch.json and PNGs, and psnr.png (plot_psnr.py) when matplotlib is there.
# CLI: IRONLEARN_CLI (default build/release/...); PyTorch: /usr/bin/python3 (Debian's).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="${IRONLEARN_CLI:-$root/build/release/src/cli/ironlearn-cli}"
py=/usr/bin/python3
seconds="5 10 20"
size=256
threads="$(nproc)"
protocols="paper,ours"
out=""
check=1
images=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --protocols) protocols="$2"; shift 2 ;;
        --out-dir) out="$2"; shift 2 ;;
        --no-check) check=0; shift ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "image_vs_torch.sh: unknown option $1" >&2; exit 2 ;;
        *) images+=("$1"); shift ;;
    esac
done
[[ -x "$cli" ]] || { echo "image_vs_torch.sh: $cli is not an executable" >&2; exit 2; }
"$py" -c 'import torch, PIL, numpy' 2>/dev/null ||
    { echo "image_vs_torch.sh: $py lacks torch, PIL or numpy (python3-torch, python3-pil)" >&2; exit 2; }
read -ra secs <<<"$seconds"
[[ ${#secs[@]} -gt 0 ]] || { echo "image_vs_torch.sh: --seconds is empty" >&2; exit 2; }
checkpoints="$(IFS=,; echo "${secs[*]}")"
budget="${secs[-1]}"
[[ ${#images[@]} -gt 0 ]] || images=(camera bw_text brick)

picture() { # a file as given, or a scikit-image sample by name (skimage_data.sh)
    if [[ -f "$1" ]]; then echo "$1"; return; fi
    ls "$("$here/skimage_data.sh")/$1".* 2>/dev/null | head -1 || true
}

[[ -n "$out" ]] || out="$(mktemp -d "${TMPDIR:-/tmp}/image_vs_torch.XXXXXX")"
mkdir -p "$out"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "ironlearn: $("$cli" devices | sed -n 2p | sed 's/^ *//; s/, [0-9]* threads\{0,1\} (/ (/')"
echo "pytorch:   $("$py" -c 'import torch; print(torch.__version__, "(" + torch.__config__.show().split("CPU capability usage: ")[1].split()[0] + ")")')"
echo "both on $threads threads"
echo "budget $budget s per method, checkpoints $checkpoints s, training size $size, results in $out"

names=()
for img in "${images[@]}"; do
    file="$(picture "$img")"
    [[ -n "$file" ]] || { echo "image_vs_torch.sh: no picture $img" >&2; exit 2; }
    name="$(basename "$file")"
    dir="$out/${name%.*}"
    mkdir -p "$dir"
    names+=("${name%.*}")
    echo "== $name" >&2
    "$cli" race "$file" --seconds "$budget" --checkpoints "$checkpoints" --image-size "$size" \
        --presets hashgrid,siren,fourier-relu --threads "$threads" --json "$dir/race.json" \
        --out-dir "$dir" --quiet >&2
    if [[ $check == 1 ]]; then # once: our metric and torch_image.py's on one of our models
        check=0
        "$cli" train "$dir/target.png" --preset siren --max-seconds 1 --threads "$threads" \
            --metrics-json "$dir/check.json" --out "$dir/check.safetensors" --quiet >/dev/null
        "$py" "$here/torch_image.py" "$dir/target.png" --threads "$threads" \
            --check-model "$dir/check.safetensors" >"$dir/check.txt"
        "$py" - "$dir/check.json" "$dir/check.txt" <<'PY'
import json, re, sys
m = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
psnr, ssim = (float(v) for v in re.search(r"PSNR (\S+) dB, SSIM (\S+)", text).groups())
print(f"metric check on one of our SIREN models: ironlearn-cli PSNR {m['psnr_db']:.4f} dB, "
      f"SSIM {m['ssim']:.4f}; torch_image.py PSNR {psnr:.4f} dB, SSIM {ssim:.4f}")
if abs(psnr - m["psnr_db"]) > 0.01 or abs(ssim - m["ssim"]) > 1e-4:
    sys.exit("image_vs_torch.sh: the two measures disagree")
PY
    fi
    "$py" "$here/torch_image.py" "$dir/target.png" --name "$name" --seconds "$budget" \
        --checkpoints "$checkpoints" --threads "$threads" --protocols "$protocols" \
        --json "$dir/torch.json" >&2
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo

"$py" - "$out" "${names[@]}" <<'PY'
import json, math, os, sys
out, names = sys.argv[1], sys.argv[2:]
def num(v):  # race writes an infinite PSNR as "Infinity"
    return math.inf if v == "Infinity" else v
rows, checkpoints = [], None
for name in names:
    for kind in ("race", "torch"):
        j = json.load(open(os.path.join(out, name, kind + ".json")))
        checkpoints = checkpoints or j["checkpoints"]
        for p in j["presets"]:
            method = ("ironlearn " if kind == "race" else "") + p["preset"]
            rows.append((j["image"], method, p["steps"], p["steps_per_second"],
                         [num(v) for v in p["psnr_db_at"]], num(p["ssim"])))
head = f"{'picture':14} {'method':22} {'steps':>7} {'steps/s':>8}"
head += "".join(f"{str(c) + ' s':>9}" for c in checkpoints) + f"{'SSIM':>8}"
print(head)
last = None
for image, method, steps, rate, psnr, ssim in rows:
    cells = "".join(f"{v:9.2f}" if v is not None else f"{'-':>9}" for v in psnr)
    s = f"{ssim:8.4f}" if ssim is not None else f"{'-':>8}"
    print(f"{image if image != last else '':14} {method:22} {steps:7d} {rate:8.1f}{cells}{s}")
    last = image
print("PSNR in dB at each time (the weights of the steps started before it); SSIM of the final "
      "weights. paper: the authors' full-batch settings; ours: the image task's defaults.")
PY

if "$py" -c 'import matplotlib' 2>/dev/null; then
    "$py" "$here/plot_psnr.py" --out "$out/psnr.png" "${names[@]/#/$out/}" && echo "plot: $out/psnr.png"
fi
