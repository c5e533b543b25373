#!/usr/bin/env bash
# Prints the directory of scikit-image's sample pictures, unpacked from Debian's python3-skimage
# into $TMPDIR (without installing it) the first time. Sourced or run by the image benchmarks.
#
#   dir="$(packaging/bench/skimage_data.sh)"
#   packaging/bench/skimage_data.sh --pictures   # the corpus the image benchmarks use, by name
set -euo pipefail

if [[ "${1:-}" == "--pictures" ]]; then
    # Photos (gray and colour), text (binary and scanned), silhouettes, texture, synthetic.
    echo "camera astronaut coffee chelsea bw_text page text horse logo brick grass moon checker_bilevel"
    exit 0
fi

dir="${TMPDIR:-/tmp}/ironlearn-skimage/usr/lib/python3/dist-packages/skimage/data"
if [[ ! -d "$dir" ]]; then
    work="${TMPDIR:-/tmp}/ironlearn-skimage"
    mkdir -p "$work"
    (cd "$work" && apt-get download python3-skimage >/dev/null && dpkg-deb -x python3-skimage_*.deb .)
fi
echo "$dir"
