#!/usr/bin/env bash
# How fast a large CSV table loads and how much memory it takes: writes a numeric table
# (default 1,000,000 rows x 20 columns, about 163 MiB), then reads it with the streaming reader
# and prepares it for training, printing the time and peak resident memory of each stage.
#
#   packaging/bench/csv_load.sh [--rows N] [--cols C] [--keep] [BUILD_DIR]
#
# BUILD_DIR: a build with ironlearn-csv-load (IRONLEARN_BENCH=ON; default build/release).
# Builds nothing. The table goes to a temporary directory, removed afterwards unless --keep.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build/release"
rows=1000000
cols=20
keep=0

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rows) rows="$2"; shift 2 ;;
        --cols) cols="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "csv_load.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) build="$1"; shift ;;
    esac
done

tool="$build/src/bench/ironlearn-csv-load"
if [[ ! -x "$tool" ]]; then
    echo "csv_load.sh: $tool is not an executable; build the ironlearn-csv-load target first" >&2
    exit 2
fi
dir="$(mktemp -d)"
[[ $keep == 1 ]] || trap 'rm -rf "$dir"' EXIT
"$tool" --generate "$dir/table.csv" --rows "$rows" --cols "$cols"
# Twice: the first run also pays for reading the file from disk.
"$tool" "$dir/table.csv" >/dev/null
"$tool" "$dir/table.csv"
[[ $keep == 1 ]] && echo "kept $dir/table.csv"
exit 0
