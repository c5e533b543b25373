#!/usr/bin/env bash
# Runs ironlearn-bench and the same workloads in PyTorch (torch_bench.py) on this machine, with
# the same thread count and the same environment, and prints them side by side.
# IRONLEARN_SIMD (sse4, avx2, avx512) forces our kernels' SIMD target; the header line names it.
#
#   packaging/bench/compare.sh [--threads N] [--repeat N] [--only sgemm,siren,tanh,conv]
#                              [--record DIR] [BENCH]
#
# --record DIR: also writes the round to DIR as JSON (both programs' figures, the machine, date,
# commit and this command), which bench_tables.py turns into docs/benchmarks.md's speed table.
# BENCH: the ironlearn-bench executable (default build/release/src/bench/ironlearn-bench).
# Builds nothing. OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE and friends are passed through exactly as
# set (or unset) by the caller. PYTHON: the interpreter that has torch (default /usr/bin/python3,
# Debian's python3-torch).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bench="$root/build/release/src/bench/ironlearn-bench"
python="${PYTHON:-/usr/bin/python3}"
threads="$(nproc)"
repeat=10
only="sgemm,siren,tanh,conv"
record=""
command="packaging/bench/compare.sh $*"

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --threads) threads="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --record) record="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "compare.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) bench="$1"; shift ;;
    esac
done

if [[ ! -x "$bench" ]]; then
    echo "compare.sh: $bench is not an executable; build the ironlearn-bench target first" >&2
    exit 2
fi
if ! "$python" -c 'import torch' 2>/dev/null; then
    echo "compare.sh: $python cannot import torch (apt-get install python3-torch, or set PYTHON)" >&2
    exit 2
fi

# Timings with OpenMP threads on every core fall apart when anything else runs (a build, a test
# suite): warn, so nobody files a regression measured on a busy machine.
load="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)"
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
    echo "compare.sh: warning: load average $load; other work on this machine skews the figures" >&2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "ironlearn-bench: $bench --threads $threads --repeat $repeat --only $only" >&2
"$bench" --threads "$threads" --repeat "$repeat" --only "$only" --json >"$tmp/ours.json"
echo "torch_bench.py:  $python $here/torch_bench.py --threads $threads --repeat $repeat" >&2
"$python" "$here/torch_bench.py" --threads "$threads" --repeat "$repeat" --only "$only" --json \
    >"$tmp/torch.json"

if [[ -n "$record" ]]; then
    mkdir -p "$record"
    commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if [[ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
        commit="$commit+changes"
    fi
    "$python" - "$tmp/ours.json" "$tmp/torch.json" "$record" "$commit" \
        "${IRONLEARN_SIMD:-best}" "$command" <<'EOF'
import datetime, json, os, sys

ours, theirs = (json.load(open(p)) for p in sys.argv[1:3])
folder, commit, simd, command = sys.argv[3:7]
now = datetime.datetime.now(datetime.timezone.utc)
record = {"date": now.strftime("%Y-%m-%d"), "commit": commit, "simd": ours.get("simd", simd),
          "threads": ours["threads"], "machine": ours.get("device", ""),
          "command": (f"IRONLEARN_SIMD={simd} " if simd != "best" else "") + command,
          "ours": ours, "torch": theirs}
name = f"{now.strftime('%Y%m%dT%H%M%S')}-{simd}-t{ours['threads']}.json"
with open(os.path.join(folder, name), "w") as f:
    json.dump(record, f, indent=1, sort_keys=True)
    f.write("\n")
print(f"compare.sh: recorded {os.path.join(folder, name)}", file=sys.stderr)
EOF
fi

"$python" - "$tmp/ours.json" "$tmp/torch.json" <<'EOF'
import json, sys

ours, theirs = (json.load(open(p)) for p in sys.argv[1:3])
env = ours.get("env", {})
print(f"threads {ours['threads']} (ours: {ours['device']}; PyTorch: {theirs['device']})")
print(f"ours: {ours.get('details', '')}")
print("OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s OMP_NUM_THREADS=%s" % tuple(
    env.get(k) or "unset" for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")))
print()
rows = [("workload", "ours", "PyTorch", "ours/PyTorch time")]
for a, b in zip(ours.get("sgemm", []), theirs.get("sgemm", [])):
    rows.append((f"sgemm n={a['n']} (GFLOP/s)", f"{a['gflops']:.1f}", f"{b['gflops']:.1f}",
                 f"{b['gflops'] / a['gflops']:.2f}"))
labels = {"siren": "siren step, 40k rows (ms)", "tanh": "tanh mlp epoch, bs 256 (ms)",
          "conv": "conv names epoch, bs 256 (ms)"}
for key, label in labels.items():
    if key in ours and key in theirs:
        a, b = ours[key], theirs[key]
        rows.append((label, f"{a['ms']:.2f}", f"{b['ms']:.2f}", f"{a['ms'] / b['ms']:.2f}"))
if "siren_gemms" in ours and "siren" in theirs:
    floor = ours["siren_gemms"]["ms"]
    rows.append(("  siren GEMMs alone (floor, ms)", f"{floor:.2f}", "",
                 f"step {ours['siren']['ms'] / floor:.2f}x"))
widths = [max(len(r[i]) for r in rows) for i in range(4)]
for i, r in enumerate(rows):
    print("  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]))
    if i == 0:
        print("  ".join("-" * w for w in widths))
def loss(v):
    return "n/a" if v is None else f"{v:.4g}"
print("\nratio < 1: ours is faster. Training losses (first -> last, a sanity check):")
for key in labels:
    if key in ours and key in theirs:
        a, b = ours[key], theirs[key]
        print(f"  {key}: ours {loss(a['first_loss'])} -> {loss(a['last_loss'])}, "
              f"PyTorch {loss(b['first_loss'])} -> {loss(b['last_loss'])}")
EOF
