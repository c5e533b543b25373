#!/usr/bin/env bash
# Prints the directory of scikit-image's sample pictures, unpacked from Debian's python3-skimage
# into $TMPDIR (without installing it) the first time. Sourced or run by the image benchmarks.
#
#   dir="$(packaging/bench/skimage_data.sh)"
set -euo pipefail

dir="${TMPDIR:-/tmp}/ironlearn-skimage/usr/lib/python3/dist-packages/skimage/data"
if [[ ! -d "$dir" ]]; then
    work="${TMPDIR:-/tmp}/ironlearn-skimage"
    mkdir -p "$work"
    (cd "$work" && apt-get download python3-skimage >/dev/null && dpkg-deb -x python3-skimage_*.deb .)
fi
echo "$dir"
