#!/usr/bin/env bash
# What the studio's Network tab costs a run: steps per second of the same training with the
# Network tab on screen (a picture of every unit from the worker at most every 0.5 s) and with
# the Data tab there instead, per kind of data, alternating the two so machine noise hits both
# alike. The target: under 10% slower with the tab open.
#
#   packaging/bench/network_view_cost.sh [ROUNDS]     (default 3 rounds per kind)
#
# Kinds: spiral (the two-feature plane: unit maps and weights), four-features (another table: unit
# histograms), camera (a picture: hash-grid and hidden units over the picture), names (the
# embedding plot). The studio runs offscreen with its defaults, on all cores.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${IRONLEARN_BUILD:-$root/build/release}"
studio="$build/src/app/ironlearn-studio"
rounds="${1:-3}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; commit $(git -C "$root" rev-parse --short HEAD)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Another table (not two features): 20,000 rows of four features, a curved target with noise,
# made here (the bundled tables stop early within a second).
/usr/bin/python3 - "$tmp/four-features.csv" <<'PY'
import math, random, sys
random.seed(5)
with open(sys.argv[1], "w") as f:
    f.write("a,b,c,d,y\n")
    for _ in range(20000):
        a, b, c, d = (random.uniform(-2, 2) for _ in range(4))
        y = math.sin(3 * a) * b + c * c - d + random.gauss(0, 0.1)
        f.write(f"{a:.5f},{b:.5f},{c:.5f},{d:.5f},{y:.5f}\n")
PY
steps_per_second() { # FILE STEPS TAB
  QT_QPA_PLATFORM=offscreen "$studio" "$1" --train-steps "$2" --tab "$3" --quit 2>&1 |
    sed -n 's/.*(\([0-9.]*\) steps\/s).*/\1/p' | tail -1
}
results=()
for kind in ":sample/spiral.csv 12000" "$tmp/four-features.csv 2000" ":sample/camera.png 500" \
            ":sample/names-ssa2018.txt 4000"; do
  set -- $kind
  closed=() ; open=()
  for r in $(seq "$rounds"); do
    c=$(steps_per_second "$1" "$2" data)
    o=$(steps_per_second "$1" "$2" network)
    echo "$1 round $r: Data tab $c steps/s, Network tab $o steps/s"
    closed+=("$c"); open+=("$o")
  done
  results+=("$(basename "$1")|${closed[*]}|${open[*]}")
done
/usr/bin/python3 - "${results[@]}" <<'PY'
import statistics, sys
print("| data | steps/s, Data tab | steps/s, Network tab | Network / Data |")
print("|---|---|---|---|")
for entry in sys.argv[1:]:
    name, closed, opened = entry.split("|")
    c = statistics.median(float(v) for v in closed.split())
    o = statistics.median(float(v) for v in opened.split())
    print(f"| {name} | {c:.1f} | {o:.1f} | {o / c:.3f} |")
PY
