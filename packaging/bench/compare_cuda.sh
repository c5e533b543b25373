#!/usr/bin/env bash
# Runs ironlearn-bench --backend cuda and the same workloads in PyTorch eager mode on the same
# GPU (torch_cuda_bench.py: f32, TF32 off, same SIREN, Adam, data and timing), and prints them
# side by side with the ratio of our time to PyTorch's.
#
#   packaging/bench/compare_cuda.sh [--repeat N] [--read-every N] [--only W,...] [--save DIR]
#                                   [--backend cpu] [BENCH]
#
# W: sgemm, siren262k, siren4k (default: all three). --save DIR keeps both sides' JSON there
# (ours.json, torch.json). BENCH: the ironlearn-bench executable
# (default build/release/src/bench/ironlearn-bench). PYTHON: the interpreter with a CUDA build of
# torch (default python3). --backend cpu runs both sides on the CPU instead: a check of this
# script on a machine without a GPU (the figures then mean little). Builds nothing. Exit status 1
# if either side failed (the other side's figures are still printed), 2 on a usage error.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bench="$root/build/release/src/bench/ironlearn-bench"
python="${PYTHON:-python3}"
repeat=10
read_every=50
only="sgemm,siren262k,siren4k"
backend=cuda
save=""

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --repeat) repeat="$2"; shift 2 ;;
        --read-every) read_every="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --backend) backend="$2"; shift 2 ;;
        --save) save="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "compare_cuda.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) bench="$1"; shift ;;
    esac
done
if [[ "$backend" != cuda && "$backend" != cpu ]]; then
    echo "compare_cuda.sh: --backend must be cuda or cpu" >&2
    exit 2
fi
if [[ ! -x "$bench" ]]; then
    echo "compare_cuda.sh: $bench is not an executable; build the ironlearn-bench target first" >&2
    exit 2
fi
if ! "$python" -c 'import torch' 2>/dev/null; then
    echo "compare_cuda.sh: $python cannot import torch (set PYTHON to one that can)" >&2
    exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0

echo "ironlearn-bench: $bench --backend $backend --repeat $repeat --read-every $read_every --only $only" >&2
if ! "$bench" --backend "$backend" --repeat "$repeat" --read-every "$read_every" --only "$only" \
        --json >"$tmp/ours.json" 2>"$tmp/ours.err"; then
    echo "compare_cuda.sh: ironlearn-bench failed:" >&2
    cat "$tmp/ours.err" >&2
    echo '{}' >"$tmp/ours.json"
    status=1
fi
echo "torch_cuda_bench.py: $python $here/torch_cuda_bench.py --device $backend" >&2
if ! "$python" "$here/torch_cuda_bench.py" --device "$backend" --repeat "$repeat" \
        --read-every "$read_every" --only "$only" --json >"$tmp/torch.json" 2>"$tmp/torch.err"; then
    echo "compare_cuda.sh: torch_cuda_bench.py failed:" >&2
    cat "$tmp/torch.err" >&2
    echo '{}' >"$tmp/torch.json"
    status=1
fi

if [[ -n "$save" ]]; then
    mkdir -p "$save" && cp "$tmp/ours.json" "$tmp/torch.json" "$save/"
fi

"$python" - "$tmp/ours.json" "$tmp/torch.json" <<'EOF'
import json, sys

ours, theirs = (json.load(open(p)) for p in sys.argv[1:3])
print(f"ours: {ours.get('device', 'n/a')} ({ours.get('details', 'failed')})")
print(f"PyTorch: {theirs.get('device', 'n/a')} ({theirs.get('details', 'failed')})")
print()

def num(v, fmt):
    return "n/a" if v is None else format(v, fmt)

def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}"

rows = [("workload", "ours", "PyTorch", "ours/PyTorch time")]
by_n = {g["n"]: g for g in theirs.get("sgemm", [])}
ns = [g["n"] for g in ours.get("sgemm", [])] or sorted(by_n)
for n in ns:
    a = next((g for g in ours.get("sgemm", []) if g["n"] == n), {})
    b = by_n.get(n, {})
    ga, gb = a.get("gflops"), b.get("gflops")
    rows.append((f"sgemm n={n} (GFLOP/s)", num(ga, ".1f"), num(gb, ".1f"), ratio(gb, ga)))
labels = {"siren262k": "siren step, 262,144 rows (ms)", "siren4k": "siren step, 4,096 rows (ms)"}
for key, label in labels.items():
    if key in ours or key in theirs:
        a, b = ours.get(key, {}).get("ms"), theirs.get(key, {}).get("ms")
        rows.append((label, num(a, ".3f"), num(b, ".3f"), ratio(a, b)))
widths = [max(len(r[i]) for r in rows) for i in range(4)]
for i, r in enumerate(rows):
    print("  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]))
    if i == 0:
        print("  ".join("-" * w for w in widths))

def loss(v):
    return "n/a" if v is None else f"{v:.4g}"
print("\nratio < 1: ours is faster. Median ms per step over samples of "
      f"{ours.get('siren262k', ours.get('siren4k', {})).get('steps_per_sample', 'n/a')} steps "
      "(one loss read each). Training losses (first -> last sample, a sanity check):")
for key in labels:
    a, b = ours.get(key), theirs.get(key)
    if a or b:
        a, b = a or {}, b or {}
        print(f"  {key}: ours {loss(a.get('first_loss'))} -> {loss(a.get('last_loss'))}, "
              f"PyTorch {loss(b.get('first_loss'))} -> {loss(b.get('last_loss'))}")
EOF
exit "$status"
