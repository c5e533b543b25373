#!/usr/bin/env bash
# What a learner sees in the first seconds: starts the studio on the camera sample at 1024x700
# with a fresh settings folder (the defaults), presses Start (F5) as a user would, and saves a
# picture of the screen 5, 10 and 30 s later. Look at them: is the reconstruction recognisable?
#
#   xvfb-run -a -s "-screen 0 1024x700x24" packaging/bench/studio_first_run.sh [OUTDIR]
#
# Needs xdotool and imagemagick (import), and a built studio (IRONLEARN_STUDIO).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
app="${IRONLEARN_STUDIO:-$root/build/release/src/app/ironlearn-studio}"
out="${1:-out/first-run}"
mkdir -p "$out"
XDG_CONFIG_HOME="$(mktemp -d)" "$app" :sample/camera.png --size 1024x700 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 5 # the window, the picture and the first preview
window="$(xdotool search --sync --name "Iron Learn Studio" | head -1)"
xdotool windowfocus --sync "$window" 2>/dev/null || true
xdotool key --clearmodifiers F5
start=$(date +%s.%N)
for t in 5 10 30; do
    while (($(echo "$(date +%s.%N) - $start < $t" | bc))); do sleep 0.2; done
    import -window root "$out/first-run-${t}s.png"
    echo "$out/first-run-${t}s.png"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
