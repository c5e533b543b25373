#!/usr/bin/env bash
# Class weighting on imbalanced public tables: ironlearn-cli's defaults with and
# without --class-weight balanced, trained on a fixed 80% of each table and evaluated on the
# other 20%, next to scikit-learn's logistic regression and gradient boosting (with and without
# class_weight="balanced") on the same split. Balanced accuracy is the mean recall of the
# classes (evaluate --metrics-json's balanced_accuracy).
#
#   packaging/bench/class_weight.sh [--seeds "1 2 3"] [CLI]
#
# The tables come from Debian's python3-statsmodels (apt-get install python3-statsmodels
# python3-sklearn): Fair (1978) affairs, 6366 rows, "affair" = more than 3 affairs a year
# (7.1%); RAND Health Insurance Experiment, 20190 rows, "many_visits" = more than 8 outpatient
# visits a year (7.1%). CLI: the ironlearn-cli executable (default build/release/src/cli/
# ironlearn-cli). Builds nothing. PYTHON: the interpreter with statsmodels and sklearn (default
# /usr/bin/python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="$root/build/release/src/cli/ironlearn-cli"
python="${PYTHON:-/usr/bin/python3}"
seeds="1 2 3"

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seeds) seeds="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "class_weight.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) cli="$1"; shift ;;
    esac
done
if [[ ! -x "$cli" ]]; then
    echo "class_weight.sh: $cli is not an executable; build the ironlearn-cli target first" >&2
    exit 2
fi
if ! "$python" -c 'import statsmodels, sklearn' 2>/dev/null; then
    echo "class_weight.sh: $python cannot import statsmodels and sklearn" \
        "(apt-get install python3-statsmodels python3-sklearn, or set PYTHON)" >&2
    exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The tables and their split: a fixed permutation (numpy seed 14), 80% train, 20% test.
"$python" - "$tmp" <<'EOF'
import sys
import numpy as np
import statsmodels.api as sm

out = sys.argv[1]
fair = sm.datasets.fair.load_pandas().data
fair["affair"] = (fair.affairs > 3).astype(int)
fair = fair.drop(columns="affairs")
rand = sm.datasets.randhie.load_pandas().data
rand["many_visits"] = (rand.mdvis > 8).astype(int)
rand = rand.drop(columns="mdvis")
for name, d in [("fair", fair), ("randhie", rand)]:
    idx = np.random.default_rng(14).permutation(len(d))
    n = int(len(d) * 0.8)
    d.iloc[idx[:n]].to_csv(f"{out}/{name}-train.csv", index=False)
    d.iloc[idx[n:]].to_csv(f"{out}/{name}-test.csv", index=False)
EOF

balanced_accuracy() { # evaluate's balanced_accuracy: the mean recall of the classes
    "$python" -c 'import json, sys
print("%.4f" % json.load(open(sys.argv[1]))["balanced_accuracy"])' "$1"
}

printf '%-8s %-8s %-38s %s\n' table seed model "test balanced accuracy"
for table in fair:affair randhie:many_visits; do
    name="${table%%:*}" target="${table##*:}"
    for seed in $seeds; do
        for weight in none balanced; do
            model="$tmp/$name-$weight-$seed.safetensors"
            echo "+ ironlearn-cli train $name-train.csv --target $target --seed $seed" \
                "--class-weight $weight" >&2
            "$cli" train "$tmp/$name-train.csv" --target "$target" --seed "$seed" \
                --class-weight "$weight" --out "$model" --quiet >/dev/null
            "$cli" evaluate "$model" "$tmp/$name-test.csv" --metrics-json "$tmp/m.json" >/dev/null
            printf '%-8s %-8s %-38s %s\n' "$name" "$seed" "ironlearn --class-weight $weight" \
                "$(balanced_accuracy "$tmp/m.json")"
        done
    done
    "$python" - "$tmp/$name-train.csv" "$tmp/$name-test.csv" "$target" "$name" <<'EOF'
import sys
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.preprocessing import StandardScaler

train, test, target, name = sys.argv[1:5]
tr, te = pd.read_csv(train), pd.read_csv(test)
scaler = StandardScaler().fit(tr.drop(columns=target).values)
x, y = scaler.transform(tr.drop(columns=target).values), tr[target].values
xt, yt = scaler.transform(te.drop(columns=target).values), te[target].values
for weight in [None, "balanced"]:
    for label, model in [("sklearn LogisticRegression", LogisticRegression(class_weight=weight, max_iter=1000)),
                         ("sklearn HistGradientBoosting", HistGradientBoostingClassifier(class_weight=weight, random_state=0))]:
        model.fit(x, y)
        print("%-8s %-8s %-38s %.4f" % (name, "-", f"{label} {weight or 'none'}",
                                         balanced_accuracy_score(yt, model.predict(xt))))
# The ceiling of a linear model: the best threshold on its test probabilities, chosen on the
# test rows themselves (an oracle no model trained on the training rows can beat reliably).
p = LogisticRegression(max_iter=1000).fit(x, y).predict_proba(xt)[:, 1]
best = max(balanced_accuracy_score(yt, p > t) for t in np.linspace(0.005, 0.5, 400))
print("%-8s %-8s %-38s %.4f" % (name, "-", "logistic, best threshold (oracle)", best))
EOF
done
