#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs the whole test suite (CTest).
#   packaging/test.sh              all tests
#   packaging/test.sh -R Gradient  a subset (arguments go to ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh
PRESET="${IRONLEARN_PRESET:-release}"
ctest --preset "$PRESET" -j "$(nproc)" "$@"
