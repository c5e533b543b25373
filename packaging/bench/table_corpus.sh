#!/usr/bin/env bash
# The table corpus (table_corpus.py): our defaults against scikit-learn's linear
# models, MLPs and gradient boosting on 12 public tables from Debian's python3-sklearn and
# python3-statsmodels, four fixed splits each. Installs those two packages if they are missing.
# About 3 minutes on 2 cores (scikit-learn's figures are cached in results/table_corpus_sklearn.json).
# With --heldout: the held-out tables of docs/table-corpus.md instead, which also need
# python3-vega-datasets, python3-rdata and the data of the R packages r-cran-mass, r-cran-cardata,
# r-cran-aer and r-cran-mlbench
# (downloaded as Debian packages and unpacked into a cache folder, without installing R).
#
#   packaging/bench/table_corpus.sh [table_corpus.py options]   e.g. --markdown, --config NAME=ARGS
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

heldout=0
for arg in "$@"; do [[ "$arg" == --heldout ]] && heldout=1; done
SUDO=""
[[ "$(id -u)" -eq 0 ]] || SUDO="sudo"

packages=(python3-sklearn python3-statsmodels python3-pandas)
[[ $heldout -eq 1 ]] && packages+=(python3-vega-datasets python3-rdata)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
updated=0
if [[ ${#missing[@]} -gt 0 ]]; then
    $SUDO apt-get update -qq
    updated=1
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The R packages' data files only: installing them would bring all of R. Where R and the
# packages are installed, table_corpus.py reads them from /usr/lib/R instead.
if [[ $heldout -eq 1 ]]; then
    rlib="${XDG_CACHE_HOME:-$HOME/.cache}/ironlearn/table-corpus-r"
    # MASS and carData: lazy-load databases (Rdata.rdx); AER and mlbench (the fifth set): .rda files.
    for pkg in r-cran-mass:library/MASS r-cran-cardata:site-library/carData \
        r-cran-aer:site-library/AER r-cran-mlbench:site-library/mlbench; do
        deb="${pkg%%:*}" dir="${pkg#*:}"
        [[ -e "/usr/lib/R/$dir/data" || -e "$rlib/usr/lib/R/$dir/data" ]] && continue
        mkdir -p "$rlib/debs"
        if ! (cd "$rlib/debs" && apt-get download -q "$deb" 2>/dev/null); then
            [[ $updated -eq 1 ]] || $SUDO apt-get update -qq
            updated=1
            (cd "$rlib/debs" && apt-get download -q "$deb")
        fi
        dpkg-deb -x "$(ls -t "$rlib/debs/${deb}"_*.deb | head -1)" "$rlib"
    done
    export IRONLEARN_R_LIBRARY="$rlib/usr/lib/R/library:$rlib/usr/lib/R/site-library"
fi
# One thread for scikit-learn's BLAS: on 2 cores OpenMP threads fighting the CLI's slow it
# tenfold; the figures do not depend on it.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
exec /usr/bin/python3 "$here/table_corpus.py" --seeds 1,2,3,4 \
    --sklearn-cache "$here/results/table_corpus_sklearn.json" "$@"
