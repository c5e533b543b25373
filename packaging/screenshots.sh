#!/usr/bin/env bash
# Screenshots of Iron Learn Studio on each kind of bundled sample: starts the app under a
# virtual X server (Xvfb) at 1280x800, trains briefly, saves a picture of the window, quits.
# The compare-* pictures are of the run comparison (Runs > Compare), not the window: --runs
# trains a new model for each settings entry and compares the last two.
#
#   packaging/screenshots.sh [OUTDIR]        default: out/screenshots
#   IRONLEARN_STUDIO=path/to/ironlearn-studio packaging/screenshots.sh
#
# Needs xvfb and xauth (installed here if missing, as setup.sh does) and a built studio.
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET="${IRONLEARN_PRESET:-release}"
APP="${IRONLEARN_STUDIO:-build/$PRESET/src/app/ironlearn-studio}"
OUT="${1:-out/screenshots}"

missing=()
for p in xvfb xauth; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "screenshots: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ -x "$APP" ] || bash packaging/setup.sh
mkdir -p "$OUT"

# shot NAME ARGS...: one screenshot, the app's settings kept apart from the user's. SIZE (WxH,
# default 1280x800) and SCALE (QT_SCALE_FACTOR, default 1) may be set for one call.
shot() {
  local name="$1" size="${SIZE:-1280x800}" scale="${SCALE:-1}"
  shift
  local w="${size%x*}" h="${size#*x}"
  XDG_CONFIG_HOME="$(mktemp -d)" QT_SCALE_FACTOR="$scale" \
    xvfb-run -a -s "-screen 0 $((w * scale + 64))x$((h * scale + 64))x24" \
    "$APP" "$@" --size "$size" --screenshot "$OUT/$name.png" --quit
  echo "  $OUT/$name.png"
}

# --runs entries: settings as model files write them, each over the sample's own.
RATES='[{"schedule":{"lr_max":0.01}},{"schedule":{"lr_max":0.03}}]'
SEEDS='[{"seed":1},{"seed":2}]'

echo "screenshots: writing to $OUT"
shot welcome # no file on a first start (a fresh XDG_CONFIG_HOME): the welcome page
shot table-iris :sample/iris.csv --train-steps 400
shot table-iris-model :sample/iris.csv --train-steps 400 --tab model
shot table-iris-runs :sample/iris.csv --train-steps 400 --tab runs
shot table-diabetes :sample/diabetes.csv --train-steps 600 --tab training
# The decision boundary (the table output's second tab) on the spiral: a line fails (about 50%),
# the default (wide) bends round both arms (97-100%). The linear run ends early (early stopping).
shot table-spiral-linear :sample/spiral.csv --preset linear --train-steps 3000
shot table-spiral-wide :sample/spiral.csv --train-steps 3000
shot table-iris-boundary :sample/iris.csv --train-steps 400 --tab boundary
# The Network tab: the spiral mid-training, a SIREN's sine units, the names embeddings.
shot studio-network-spiral :sample/spiral.csv --train-steps 30 --tab network
shot studio-network-siren :sample/camera.png --preset siren --train-steps 300 --tab network
shot studio-network-names :sample/names-ssa2018.txt --train-steps 4000 --tab network
shot image-camera :sample/camera.png --train-steps 150
shot image-astronaut :sample/astronaut.png --train-steps 100 --tab model
shot names :sample/names-ssa2018.txt --train-steps 2000
shot names-dark :sample/names-ssa2018.txt --train-steps 1000 --palette dark
shot compare-iris :sample/iris.csv --train-steps 300 --runs "$RATES"

# The smallest supported window (1024x700), every setup tab of every kind of data, and the same
# at twice the pixel density (QT_SCALE_FACTOR=2: 2048x1400 pictures of the same layout).
for scale in 1 2; do
  SIZE=1024x700 SCALE=$scale shot "small-x$scale-welcome"
  SIZE=1024x700 SCALE=$scale shot "small-x$scale-compare-iris" :sample/iris.csv --train-steps 200 --runs "$RATES"
  SIZE=1024x700 SCALE=$scale shot "small-x$scale-compare-camera" :sample/camera.png --train-steps 60 --runs "$SEEDS"
  for tab in $(QT_QPA_PLATFORM=offscreen "$APP" --list-tabs); do
    SIZE=1024x700 SCALE=$scale shot "small-x$scale-iris-$tab" :sample/iris.csv --train-steps 200 --tab $tab
    SIZE=1024x700 SCALE=$scale shot "small-x$scale-diabetes-$tab" :sample/diabetes.csv --train-steps 200 --tab $tab
    SIZE=1024x700 SCALE=$scale shot "small-x$scale-spiral-$tab" :sample/spiral.csv --train-steps 200 --tab $tab
    SIZE=1024x700 SCALE=$scale shot "small-x$scale-camera-$tab" :sample/camera.png --train-steps 60 --tab $tab
    SIZE=1024x700 SCALE=$scale shot "small-x$scale-names-$tab" :sample/names-ssa2018.txt --train-steps 300 --tab $tab
  done
done
