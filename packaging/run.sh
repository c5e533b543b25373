#!/usr/bin/env bash
# The run command: installs what is missing, builds, and runs the main job on a bundled
# sample. With a display ($DISPLAY or $WAYLAND_DISPLAY) that is Iron Learn Studio's window on
# the bundled camera image (press Start and watch it sharpen); on a machine without one the
# job runs headless through ironlearn-cli: train a network on the iris table, evaluate it,
# describe the saved model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh
PRESET="${IRONLEARN_PRESET:-release}"
CLI="build/$PRESET/src/cli/ironlearn-cli"
STUDIO="build/$PRESET/src/app/ironlearn-studio"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$STUDIO" ]; then
  echo
  echo "== Opening Iron Learn Studio on the bundled camera image (press Start) =="
  exec "$STUDIO" :sample/camera.png
fi
OUT="${IRONLEARN_OUT:-out}"
mkdir -p "$OUT"

echo
echo "== Training on the bundled iris sample (headless, ironlearn-cli) =="
"$CLI" train :sample/iris.csv --out "$OUT/iris.safetensors" --metrics-json "$OUT/iris-metrics.json"
echo
echo "== The saved model =="
"$CLI" info "$OUT/iris.safetensors"
echo
echo "== Evaluating it on the whole table =="
"$CLI" evaluate "$OUT/iris.safetensors" resources/samples/iris.csv
echo
echo "Outputs written to $(cd "$OUT" && pwd):"
echo "  iris.safetensors     the model (safetensors: readable by numpy / PyTorch)"
echo "  iris-metrics.json    final metrics"
