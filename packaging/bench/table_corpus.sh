#!/usr/bin/env bash
# The table corpus of issue #14 (table_corpus.py): our defaults against scikit-learn's linear
# models, MLPs and gradient boosting on 12 public tables from Debian's python3-sklearn and
# python3-statsmodels, four fixed splits each. Installs those two packages if they are missing.
# About 3 minutes on 2 cores (scikit-learn's figures are cached in results/table_corpus_sklearn.json).
#
#   packaging/bench/table_corpus.sh [table_corpus.py options]   e.g. --markdown, --config NAME=ARGS
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

missing=()
for p in python3-sklearn python3-statsmodels python3-pandas; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    SUDO=""
    [[ "$(id -u)" -eq 0 ]] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# One thread for scikit-learn's BLAS: on 2 cores OpenMP threads fighting the CLI's slow it
# tenfold; the figures do not depend on it.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
exec /usr/bin/python3 "$here/table_corpus.py" --seeds 1,2,3,4 \
    --sklearn-cache "$here/results/table_corpus_sklearn.json" "$@"
