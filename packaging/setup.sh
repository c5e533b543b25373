#!/usr/bin/env bash
# Installs what Iron Learn Studio needs to build and test on Debian 12, then configures and
# builds it. Safe to run again: installed packages are skipped (nothing is downloaded twice)
# and the build is incremental (build/release).
#
#   packaging/setup.sh            install + build
#   IRONLEARN_PRESET=asan packaging/setup.sh   the sanitizer build instead
#   IRONLEARN_PRESET=fuzz packaging/setup.sh   the fuzz targets (adds clang; packaging/fuzz/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

PRESET="${IRONLEARN_PRESET:-release}"
PACKAGES=(
  cmake ninja-build g++ pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev   # Qt 6: Core, Gui, Widgets, Test, Charts
  libqt6opengl6-dev                                # Qt6Charts' CMake package needs Qt6OpenGL
  libopenblas-openmp-dev                           # OpenBLAS with OpenMP threading (see README)
  libhwy-dev                                       # Google Highway: the CPU kernels' SIMD
  libonnx-dev libprotobuf-dev                      # the ONNX export (its protobuf classes)
  python3 python3-torch python3-pil python3-onnx   # the export's tests (testCliExport)
  locales                                          # de_DE.UTF-8: the suite under a comma locale
)
if [ "$PRESET" = fuzz ]; then
  # libFuzzer and the sanitizer runtimes come with clang-14's runtime package; clang's OpenMP
  # is libomp.
  PACKAGES+=(clang libclang-rt-14-dev libomp-14-dev)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

# A comma-decimal locale for the tests that read and write numbers under one (testLocaleNumbers,
# testCliLocale; packaging/test.sh runs the release suite with LC_ALL=de_DE.UTF-8).
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  echo "setup: generating the de_DE.UTF-8 locale"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO sed -i 's/^# *de_DE.UTF-8 UTF-8/de_DE.UTF-8 UTF-8/' /etc/locale.gen
  grep -q '^de_DE.UTF-8 UTF-8' /etc/locale.gen || echo 'de_DE.UTF-8 UTF-8' | $SUDO tee -a /etc/locale.gen >/dev/null
  $SUDO locale-gen >/dev/null
fi

# ONNX Runtime for testCliOnnx, which runs the ONNX exports with it: the npm package, pinned, in
# build/tools (outside the source tree, shared by every preset). --ignore-scripts: its postinstall
# only fetches optional CUDA libraries from a host CI cannot reach; the CPU runtime is in the
# package itself.
ORT_VERSION=1.31.1
ORT_DIR=build/tools
# Node.js and npm from Debian only where there is none: a machine may have them from elsewhere
# (NodeSource's nodejs conflicts with Debian's npm, and apt would refuse the whole install).
if ! command -v npm >/dev/null 2>&1; then
  echo "setup: installing nodejs npm"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm ||
    echo "setup: could not install nodejs npm: testCliOnnx will skip"
fi
if command -v npm >/dev/null 2>&1; then
  if [ "$(node -p "try { require('./$ORT_DIR/node_modules/onnxruntime-node/package.json').version } catch (e) { '' }" 2>/dev/null)" != "$ORT_VERSION" ]; then
    echo "setup: installing onnxruntime-node $ORT_VERSION into $ORT_DIR"
    mkdir -p "$ORT_DIR"
    npm install --prefix "$ORT_DIR" --ignore-scripts --no-audit --no-fund --no-save \
      "onnxruntime-node@$ORT_VERSION"
  fi
else
  echo "setup: no npm: testCliOnnx will skip (Debian: apt-get install nodejs npm)"
fi

if [ ! -f "build/$PRESET/build.ninja" ]; then
  cmake --preset "$PRESET"
fi
cmake --build --preset "$PRESET" -j "$(nproc)"
