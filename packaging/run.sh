#!/usr/bin/env bash
# The run command: installs what is missing, builds, and runs the main job on a bundled
# sample. Iron Learn Studio's window arrives with the GUI (issue #4); until then, and on any
# machine without a display, the same job runs headless through ironlearn-cli: train a
# network on the iris table, evaluate it, describe the saved model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh
PRESET="${IRONLEARN_PRESET:-release}"
CLI="build/$PRESET/src/cli/ironlearn-cli"
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
