#!/usr/bin/env bash
# Steps per second of the same training from the GUI (ironlearn-studio, offscreen) and from
# the CLI, alternating runs so machine noise hits both alike. The target: the GUI within 5% of
# the CLI.
#
#   packaging/bench/gui_vs_cli.sh [ROUNDS] [STEPS]     (defaults: 3 rounds of 200 steps)
#
# Both train the bundled camera image with the task's defaults, on all cores.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${IRONLEARN_BUILD:-$root/build/release}"
cli="$build/src/cli/ironlearn-cli"
studio="$build/src/app/ironlearn-studio"
rounds="${1:-3}"
steps="${2:-200}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
gui=() ; cmd=()
for r in $(seq "$rounds"); do
  g=$(QT_QPA_PLATFORM=offscreen "$studio" :sample/camera.png --train-steps "$steps" --quit 2>&1 |
      sed -n 's/.*(\([0-9.]*\) steps\/s).*/\1/p' | tail -1)
  c=$("$cli" train :sample/camera.png --steps "$steps" --quiet --out "$tmp/m.safetensors" |
      sed -n 's/.*(\([0-9.]*\) steps\/s).*/\1/p' | tail -1)
  echo "round $r: gui $g steps/s, cli $c steps/s"
  gui+=("$g"); cmd+=("$c")
done
/usr/bin/python3 - "${gui[*]}" "${cmd[*]}" <<'PY'
import statistics, sys
g = [float(v) for v in sys.argv[1].split()]
c = [float(v) for v in sys.argv[2].split()]
mg, mc = statistics.median(g), statistics.median(c)
print(f"median: gui {mg:.2f} steps/s, cli {mc:.2f} steps/s, gui/cli {mg / mc:.3f}")
PY
