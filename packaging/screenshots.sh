#!/usr/bin/env bash
# Screenshots of Iron Learn Studio on each kind of bundled sample: starts the app under a
# virtual X server (Xvfb) at 1280x800, trains briefly, saves a picture of the window, quits.
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

# shot NAME ARGS...: one screenshot, the app's settings kept apart from the user's.
shot() {
  local name="$1"
  shift
  XDG_CONFIG_HOME="$(mktemp -d)" xvfb-run -a -s "-screen 0 1280x800x24" \
    "$APP" "$@" --size 1280x800 --screenshot "$OUT/$name.png" --quit
  echo "  $OUT/$name.png"
}

echo "screenshots: writing to $OUT"
shot table-iris :sample/iris.csv --train-steps 400
shot table-iris-model :sample/iris.csv --train-steps 400 --tab model
shot table-diabetes :sample/diabetes.csv --train-steps 600 --tab training
shot image-camera :sample/camera.png --train-steps 150
shot image-astronaut :sample/astronaut.png --train-steps 100 --tab model
shot names :sample/names-ssa2018.txt --train-steps 2000
shot names-dark :sample/names-ssa2018.txt --train-steps 1000 --palette dark
