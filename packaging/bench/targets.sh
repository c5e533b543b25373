#!/usr/bin/env bash
# Runs ironlearn-bench once per SIMD target this CPU has (IRONLEARN_SIMD=sse4, avx2, avx512),
# in alternating rounds, and prints each workload's median per target and its ratio to the
# widest target. The kernels give the same bits on every target, so the losses must agree too.
#
#   packaging/bench/targets.sh [--rounds N] [--repeat N] [--only siren,tanh,conv,siren4k] [BENCH]
#
# BENCH: the ironlearn-bench executable (default build/release/src/bench/ironlearn-bench).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bench="$root/build/release/src/bench/ironlearn-bench"
rounds=2
repeat=6
only="siren,tanh,conv,siren4k"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "targets.sh: unknown option $1" >&2; exit 2 ;;
        *) bench="$1"; shift ;;
    esac
done
[[ -x "$bench" ]] || { echo "targets.sh: $bench is not an executable" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
targets="$("$bench" --only sgemm --repeat 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["simd_available"].replace(",", ""))')"
echo "targets: $targets; $rounds rounds of --repeat $repeat --only $only" >&2
for r in $(seq "$rounds"); do
    for t in $targets; do
        IRONLEARN_SIMD="$t" "$bench" --repeat "$repeat" --only "$only" --json >"$tmp/$t.$r.json"
    done
done

python3 - "$tmp" $targets <<'PY'
import glob, json, os, statistics, sys
tmp, targets = sys.argv[1], sys.argv[2:]
runs = {t: [json.load(open(p)) for p in sorted(glob.glob(os.path.join(tmp, t + ".*.json")))]
        for t in targets}
first = runs[targets[0]][0]
print(f"{first['device']}: {first['details']}")
keys = [k for k in ("siren", "tanh", "conv", "siren4k", "siren262k") if k in first]
print("workload".ljust(22) + "".join(t.rjust(12) for t in targets) + "   ratios to " + targets[0])
for k in keys:
    med = {t: statistics.median(r[k]["ms"] for r in runs[t]) for t in targets}
    unit = first[k]["unit"]
    print(f"{k} (ms/{unit})".ljust(22) + "".join(f"{med[t]:12.2f}" for t in targets) + "   " +
          " / ".join(f"{med[t] / med[targets[0]]:.2f}" for t in targets))
    losses = {f"{r[k]['last_loss']:.9g}" for t in targets for r in runs[t]}
    print(" " * 22 + ("same last loss on every target" if len(losses) == 1
                      else "LAST LOSSES DIFFER: " + ", ".join(sorted(losses))))
if "siren_gemms" in first:
    print("siren GEMMs alone".ljust(22) + "".join(
        f"{statistics.median(r['siren_gemms']['ms'] for r in runs[t]):12.2f}" for t in targets))
    print("siren step / GEMMs".ljust(22) + "".join(
        f"{statistics.median(r['siren']['ms'] / r['siren_gemms']['ms'] for r in runs[t]):12.2f}"
        for t in targets))
PY
