#!/usr/bin/env bash
# The names benchmark: trains the default names model (preset, context 3, label
# smoothing 0.1, the task's schedule) on the bundled names-ssa2018.txt and prints its validation
# cross-entropy next to the counting n-gram's of the same context on the same split, the
# innovation rate (200 names at T = 1.0) and the training time, then ten generated names.
# Target: the network's validation cross-entropy is lower than the n-gram's.
#
#   packaging/bench/names_vs_ngram.sh [--context N] [--seed S] [CLI]
#
# CLI: the ironlearn-cli executable (default build/release/src/cli/ironlearn-cli). Builds nothing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="$root/build/release/src/cli/ironlearn-cli"
context=3
seed=1

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --context) context="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "names_vs_ngram.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) cli="$1"; shift ;;
    esac
done
if [[ ! -x "$cli" ]]; then
    echo "names_vs_ngram.sh: $cli is not an executable; build the ironlearn-cli target first" >&2
    exit 2
fi

# The cross-entropies do not depend on the load (same seed, same numbers); the time does.
load="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)"
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
    echo "names_vs_ngram.sh: warning: load average $load; other work on this machine slows training" >&2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cmd=("$cli" train :sample/names-ssa2018.txt --context "$context" --seed "$seed"
     --metrics-json "$tmp/m.json" --out "$tmp/names.safetensors" --quiet)
echo "${cmd[*]}" >&2
"${cmd[@]}" >"$tmp/out.txt"

# One key per line in the metrics file; read numbers without needing python or jq.
value() { sed -n "s/^ *\"$1\": *\([^,}]*\).*/\1/p" "$tmp/m.json" | head -n1 | tr -d '"'; }
net="$(value val_cross_entropy)"
ngram="$(value ngram_val_cross_entropy)"
k="$(value ngram_k)"
rate="$(value innovation_rate)"
secs="$(value seconds)"
steps="$(value steps)"
printf 'names-ssa2018.txt, context %s, default preset, seed %s (load %s)\n' "$context" "$seed" "$load"
printf '  network   validation cross-entropy %.4f nats/char (perplexity %.2f)\n' "$net" \
    "$(awk -v x="$net" 'BEGIN { print exp(x) }')"
printf '  %s-grams  validation cross-entropy %.4f nats/char (perplexity %.2f), add-k %s\n' \
    "$((context + 1))" "$ngram" "$(awk -v x="$ngram" 'BEGIN { print exp(x) }')" "$(printf %.3g "$k")"
printf '  innovation rate %.1f%% (200 names at T = 1.0); trained %s steps in %.1f s\n' \
    "$(awk -v x="$rate" 'BEGIN { print 100 * x }')" "$steps" "$secs"
"$cli" generate "$tmp/names.safetensors" --count 10 --seed "$seed" | sed 's/^/  /'
awk -v a="$net" -v b="$ngram" 'BEGIN { exit !(a < b) }' &&
    echo "target (network below the n-gram): reached" ||
    echo "target (network below the n-gram): not reached"
