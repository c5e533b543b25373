#!/usr/bin/env bash
# Installs the Debian packages in DIR into an empty root with dpkg --root (as root; otherwise
# their files are unpacked with dpkg-deb -x) and runs the installed programs from there, with
# the system's libraries and nothing from the build tree:
#   ironlearn-cli --version, samples (read from ROOT/usr/share/ironlearn/samples),
#   train :sample/xor.csv, info and export (PyTorch, ONNX) on the saved model, devices (the CUDA module found in
#   ROOT/usr/lib/<multiarch>/ironlearn, and the reason it cannot be used here when there is no
#   GPU), the man pages, the file type of a saved model, and ironlearn-studio --screenshot
#   under Xvfb. Every check prints what it saw; the first that fails stops the test (exit 1).
#
#   packaging/deb_install_test.sh build/packages      (packaging/deb.sh runs it)
set -euo pipefail
DIR="$(cd "${1:?usage: deb_install_test.sh DIR-WITH-DEBS}" && pwd)"
WORK="$(mktemp -d /tmp/ironlearn-deb-test.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/root"
mkdir -p "$ROOT"

fail() { echo "deb_install_test: FAILED: $*" >&2; exit 1; }
check() { echo "deb_install_test: ok: $*"; }

if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates" "$ROOT/var/log"
  touch "$ROOT/var/lib/dpkg/status"
  # The root is empty: the dependencies are the host's (deb.sh has apt resolve them there).
  dpkg --root="$ROOT" --force-depends --force-script-chrootless -i "$DIR"/*.deb \
    > "$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log"; fail "dpkg --root -i"; }
  dpkg --root="$ROOT" -l 'ironlearn-*' | grep '^ii' || fail "packages not installed"
  check "dpkg installed $(dpkg --root="$ROOT" -l 'ironlearn-*' | grep -c '^ii') packages into $ROOT"
else
  for d in "$DIR"/*.deb; do dpkg-deb -x "$d" "$ROOT"; done
  check "not root: unpacked the packages into $ROOT with dpkg-deb -x"
fi

BIN="$ROOT/usr/bin"
# Nothing of the build's: no run path, and every library comes from the system.
for exe in "$BIN/ironlearn-cli" "$BIN/ironlearn-studio" "$BIN/ironlearn-bench" \
           "$ROOT"/usr/lib/*/ironlearn/libironlearn-cuda.so; do
  [ -f "$exe" ] || fail "$exe is not installed"
  if readelf -d "$exe" | grep -Eq 'RPATH|RUNPATH'; then fail "$exe has a run path"; fi
done
for exe in "$BIN/ironlearn-cli" "$BIN/ironlearn-studio" "$BIN/ironlearn-bench"; do
  if ldd "$exe" | grep -q 'not found'; then ldd "$exe"; fail "$exe: a library is missing"; fi
done
check "binaries have no run path; every library they need is on the system"

# Run from a directory of its own, with nothing pointing at a build or source tree.
cd "$WORK"
unset IRONLEARN_SAMPLES_DIR IRONLEARN_CUDA_MODULE IRONLEARN_DISABLE_CUDA LD_LIBRARY_PATH
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config"
mkdir -p "$HOME"

version="$("$BIN/ironlearn-cli" --version)"
[[ "$version" == "ironlearn-cli "* ]] || fail "ironlearn-cli --version printed '$version'"
check "ironlearn-cli --version: $version"

"$BIN/ironlearn-cli" samples > samples.txt 2> samples.err
grep -qx ':sample/xor.csv' samples.txt || fail "samples does not list xor.csv"
grep -q "Samples in $ROOT/usr/share/ironlearn/samples" samples.err ||
  { cat samples.err; fail "samples are not read from the installed directory"; }
check "samples: $(wc -l < samples.txt) files, read from $ROOT/usr/share/ironlearn/samples"

"$BIN/ironlearn-cli" train :sample/xor.csv --out xor.safetensors > train.txt 2>&1 ||
  { cat train.txt; fail "train :sample/xor.csv"; }
[ -s xor.safetensors ] || fail "train wrote no model"
tail -n 3 train.txt
"$BIN/ironlearn-cli" info xor.safetensors > info.txt || fail "info on the saved model"
check "train :sample/xor.csv saved a model ($(stat -c %s xor.safetensors) bytes); info reads it"

"$BIN/ironlearn-cli" export xor.safetensors --to pytorch --out xor-pytorch > export.txt 2>&1 &&
  "$BIN/ironlearn-cli" export xor.safetensors --to onnx --out xor.onnx >> export.txt 2>&1 ||
  { cat export.txt; fail "export"; }
[ -s xor-pytorch/model.py ] && [ -s xor.onnx ] || fail "export wrote nothing"
check "export: xor-pytorch/ (model.py, train_more.py, model.safetensors) and xor.onnx"

"$BIN/ironlearn-cli" devices --verbose > devices.txt 2>&1 || { cat devices.txt; fail "devices"; }
cat devices.txt
module="$(echo "$ROOT"/usr/lib/*/ironlearn/libironlearn-cuda.so)"
grep -q "$module (found)" devices.txt || fail "the CUDA module is not found at $module"
if grep -q '^cuda  available' devices.txt; then
  check "devices: CUDA is available"
else
  reason="$(grep '^cuda  unavailable' devices.txt | sed 's/^cuda  unavailable *//')"
  [ -n "$reason" ] || fail "devices gives no reason why CUDA is unavailable"
  check "devices: the installed CUDA module is found; CUDA unavailable here: $reason"
fi

for page in ironlearn-cli ironlearn-studio ironlearn-bench; do
  [ -s "$ROOT/usr/share/man/man1/$page.1.gz" ] || fail "no man page for $page"
  man -l "$ROOT/usr/share/man/man1/$page.1.gz" > "man-$page.txt" 2> "man-$page.err" ||
    { cat "man-$page.err"; fail "man $page"; }
  if grep -q 'warning' "man-$page.err"; then cat "man-$page.err"; fail "man $page warns"; fi
done
grep -q 'EXIT STATUS' man-ironlearn-cli.txt && grep -q '^   train' man-ironlearn-cli.txt ||
  fail "ironlearn-cli's man page lacks its commands or exit status"
check "man pages render: ironlearn-cli ($(wc -l < man-ironlearn-cli.txt) lines), ironlearn-studio, ironlearn-bench"

# The file manager's view: the installed MIME package tells our models from other safetensors.
if command -v gio > /dev/null && command -v update-mime-database > /dev/null; then
  update-mime-database "$ROOT/usr/share/mime" > /dev/null 2>&1
  type="$(XDG_DATA_DIRS="$ROOT/usr/share" XDG_DATA_HOME="$WORK/none" \
          gio info -a standard::content-type xor.safetensors | sed -n 's/.*content-type: //p')"
  [ "$type" = application/x-ironlearn-model ] || fail "a saved model is '$type'"
  grep -q 'application/x-ironlearn-model' \
    "$ROOT/usr/share/applications/io.github.ironlearn.studio.desktop" ||
    fail "the menu entry does not open models"
  check "a saved model is $type, which the studio's menu entry opens"
fi

# The studio, from the installed path, on a real X server.
if command -v xvfb-run > /dev/null; then
  unset QT_QPA_PLATFORM
  timeout 120 xvfb-run -a -s "-screen 0 1280x800x24" "$BIN/ironlearn-studio" \
    :sample/xor.csv --train-steps 200 --size 1280x800 --screenshot "$WORK/studio.png" --quit \
    > studio.txt 2>&1 || { cat studio.txt; fail "ironlearn-studio --screenshot"; }
  [ -s "$WORK/studio.png" ] || fail "the studio wrote no screenshot"
  size="$(file -b "$WORK/studio.png")"
  [[ "$size" == *"1280 x 800"* ]] || fail "screenshot is $size"
  [ -n "${IRONLEARN_DEB_SCREENSHOT:-}" ] && cp "$WORK/studio.png" "$IRONLEARN_DEB_SCREENSHOT"
  check "ironlearn-studio trained xor.csv under Xvfb and saved a screenshot ($size)"
  # As a file manager starts it on a saved model (a path, or a URL from some file managers).
  timeout 120 xvfb-run -a -s "-screen 0 1280x800x24" "$BIN/ironlearn-studio" \
    "file://$WORK/xor.safetensors" --train-steps 10 --screenshot "$WORK/model.png" --quit \
    > studio-model.txt 2>&1 || { cat studio-model.txt; fail "ironlearn-studio file://...safetensors"; }
  [ -s "$WORK/model.png" ] || fail "the studio did not open the saved model"
  check "ironlearn-studio opened the saved model from a file:// URL and trained it further"
else
  fail "xvfb-run is missing (packaging/deb.sh installs it)"
fi
echo "deb_install_test: all checks passed"
