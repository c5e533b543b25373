#!/usr/bin/python3
"""A non-Latin names benchmark: 1,000 Ukrainian given names (Cyrillic), taken from the
Ukrainian spelling dictionary Debian ships (hunspell-uk, from LibreOffice's dictionaries; the
uk_UA word list is GPL-2+ / LGPL-2.1+ / MPL-1.1, by Andriy Rysin and others). The list is made at
run time from the package (apt-get download, nothing installed) and is not bundled.

Names are the dictionary's words that it marks as given names: male ones carry the flag `$`
(their vocative forms, e.g. Андрій/1:$), female ones `%` with `;` (e.g. Олена/%h;). Capitalised,
one word, no hyphen; lowercased as the names task does; 1,000 of the 1,537 drawn with a fixed
seed.

For each seed, ironlearn-cli trains its names defaults (`train LIST --seed S`: preset, context,
10% validation names) and reports the validation cross-entropy next to the counting n-gram of
the same context on the same split, and the innovation rate at T = 1 of the kept (best
validation) weights.

    names_uk.py [--cli PATH] [--seeds 1,2,3] [--keep DIR] [--args "EXTRA TRAIN ARGS"]
"""

import argparse
import json
import os
import pathlib
import random
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def extract_names(dic_path):
    male, female = [], []
    with open(dic_path, encoding="utf-8") as f:
        next(f)  # the word count
        for line in f:
            line = line.strip()
            if "/" not in line:
                continue
            word, flags = line.split("/", 1)
            if not word or not word[0].isupper() or any(c.isupper() for c in word[1:]):
                continue
            if "-" in word or not all(c.isalpha() or c == "'" for c in word):
                continue
            if not ("\u0400" <= word[0] <= "\u04ff"):
                continue  # Cyrillic only
            if "$" in flags:
                male.append(word)
            elif "%" in flags and ";" in flags:
                female.append(word)
    names = sorted(set(w.lower() for w in male + female))
    return names, len(male), len(female)


def make_list(workdir):
    subprocess.run(["apt-get", "download", "hunspell-uk"], cwd=workdir, check=True,
                   capture_output=True)
    deb = next(pathlib.Path(workdir).glob("hunspell-uk_*.deb"))
    subprocess.run(["dpkg", "-x", str(deb), str(workdir / "pkg")], check=True)
    names, males, females = extract_names(workdir / "pkg/usr/share/hunspell/uk_UA.dic")
    chosen = sorted(random.Random(2026).sample(names, 1000))
    out = workdir / "uk-names.txt"
    out.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return out, deb.name, len(names), males, females


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=str(ROOT / "build/release/src/cli/ironlearn-cli"))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--keep", default="")
    ap.add_argument("--args", default="", help="extra train arguments")
    a = ap.parse_args()
    if not os.access(a.cli, os.X_OK):
        sys.exit(f"names_uk.py: {a.cli} is not an executable; build ironlearn-cli first")
    workdir = pathlib.Path(a.keep or tempfile.mkdtemp(prefix="names-uk-"))
    workdir.mkdir(parents=True, exist_ok=True)
    names, deb, total, males, females = make_list(workdir)
    print(f"# {deb}: {total} given names ({males} male, {females} female forms); 1,000 drawn "
          f"(seed 2026) into {names}")
    print("seed  val CE   n-gram val CE  network - n-gram  innovation (T = 1)  stop")
    for seed in [int(s) for s in a.seeds.split(",") if s]:
        model = workdir / f"uk-{seed}.safetensors"
        metrics = workdir / f"uk-{seed}.json"
        cmd = [a.cli, "train", str(names), "--seed", str(seed), "--out", str(model),
               "--metrics-json", str(metrics), "--quiet"] + shlex.split(a.args)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: {r.stderr.strip()}")
        m = json.loads(metrics.read_text())
        net, ngram = m["val_cross_entropy"], m["ngram_val_cross_entropy"]
        print(f"{seed:<5} {net:.4f}   {ngram:.4f}         {net - ngram:+.4f}           "
              f"{100 * m['innovation_rate']:.1f}%               {m['stop_reason']}")


if __name__ == "__main__":
    main()
