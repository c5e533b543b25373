#!/usr/bin/env bash
# Renders the icon's PNG sizes from the two SVGs (rsvg-convert, Debian's librsvg2-bin). The PNGs
# are committed, so building and packaging need no SVG renderer; run this after editing an SVG.
#   16-32 px: ironlearn-studio-small.svg (fewer, bolder parts)   48-512 px: ironlearn-studio.svg
set -euo pipefail
cd "$(dirname "$0")"
for size in 16 22 24 32 48 64 128 256 512; do
  src=ironlearn-studio.svg
  [ "$size" -le 32 ] && src=ironlearn-studio-small.svg
  rsvg-convert -w "$size" -h "$size" "$src" -o "ironlearn-studio-$size.png"
done
ls -l ./*.png
