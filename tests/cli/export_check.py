"""Checks `ironlearn-cli export --to pytorch` against the CLI itself (run by testCliExport).

    python3 export_check.py CLI WORKDIR SAMPLES_DIR [EXAMPLES_JSON]

For one model of each kind (table regression, table classification with a text column, a
binary table with the wide stack's skip layer, a table with empty number cells filled with the
training mean and one whose columns with empty cells are left out (--missing ignore), image
SIREN, image Fourier features, image hash grid, names MLP, names wavenet with merges and
batchnorm, names with layernorm, GELU and dropout; and each layer type's registry example,
EXAMPLES_JSON: [{"name", "layers", "data": "names" | "image" | "table"}]) it trains a small model with the CLI, exports it, and compares the exported module's
outputs with the CLI's within 1e-5 relative:
  tables: every value `ironlearn-cli predict` prints (it prints 6-7 significant digits, so
          values under 1e-3 are compared to 1e-8 absolute);
  images: `evaluate` on an all-black picture at the training size: its val_loss is the mean
          square of the raw outputs, i.e. of every pixel the module renders;
  names:  `evaluate` on a few names: the mean cross-entropy of every next character.
Each model is also exported to ONNX: onnx.checker.check_model(full_check)
passes and a NumPy evaluation of the graph (onnx_numpy.py) matches the CLI the same way, the
preprocessing inside the graph (raw table columns, text columns as strings; for images the
clamped intensities against evaluate's mse; the hash grid's xor in arithmetic, opset 17).
Then train_more.py runs 10 steps on three table models (one filling missing numbers): its starting loss is the CLI's
evaluate loss on the same rows (the weights carried) and its loss after 10 steps is lower (the
optimizer state and schedule carried). Prints one line per check; exits 1 on the first failure.
"""
import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

from cli_checks import fail, run_cli

CLI, WORK, SAMPLES = sys.argv[1], sys.argv[2], sys.argv[3]
EXAMPLES = json.loads(sys.argv[4]) if len(sys.argv) > 4 else []
os.makedirs(WORK, exist_ok=True)


def cli(*args):
    return run_cli(CLI, WORK, *args)


def close(ours, theirs, what, rel=1e-5, floor=1e-3, absolute=1e-8, span=0.0):
    """span: the size of the float32 terms that made `ours` (a denormalised regression value
    target * scale + offset): a value that cancels to near 0 keeps their rounding, a few units
    in the last place of span (8 ulp: 1e-6 span) on top of the relative bound."""
    if abs(theirs) < floor:
        ok = abs(ours - theirs) <= max(absolute, rel * floor, 1e-6 * span)
    else:
        ok = abs(ours - theirs) <= max(rel * abs(theirs), 1e-6 * span)
    if not ok:
        fail(f"{what}: exported {ours!r}, ironlearn-cli {theirs!r}")
    return abs(ours - theirs) / max(abs(theirs), floor)


def export(name, train_args):
    model_file = os.path.join(WORK, name + ".safetensors")
    cli("train", *train_args, "--quiet", "--threads", "1", "--out", model_file)
    out = os.path.join(WORK, name + "-pytorch")
    shutil.rmtree(out, ignore_errors=True)
    cli("export", model_file, "--to", "pytorch", "--out", out)
    for f in ("model.py", "model.safetensors", "train_more.py"):
        if not os.path.isfile(os.path.join(out, f)):
            fail(f"{name}: export wrote no {f}")
    return model_file, out


def onnx_available():
    try:
        import onnx  # noqa
        import numpy  # noqa
        return True
    except ImportError:
        return False


def export_onnx(name, model_file):
    """The ONNX export of model_file, checked by the ONNX checker; None without python3-onnx."""
    if not onnx_available():
        return None
    import onnx
    path = os.path.join(WORK, name + ".onnx")
    cli("export", model_file, "--to", "onnx", "--out", path)
    graph = onnx.load(path)
    onnx.checker.check_model(graph, full_check=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import onnx_numpy
    return graph, onnx_numpy


def import_model(directory):
    sys.path.insert(0, directory)
    sys.modules.pop("model", None)
    import model  # noqa: the exported module
    sys.path.pop(0)
    return model


def black_png(path, width, height):
    raw = b"".join(b"\x00" + b"\x00" * width for _ in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" +
                chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def check_table(name, data, extra=()):
    import torch  # noqa
    model_file, out = export(name, [data] + list(extra))
    model = import_model(out)
    net = model.load(os.path.join(out, "model.safetensors"))
    with open(data, newline="") as f:
        rows = list(csv.DictReader(f))
    ours = model.predict_rows(net, rows)
    theirs = list(csv.DictReader(cli("predict", model_file, data).splitlines()))
    worst = 0.0
    for i, (a, b) in enumerate(zip(ours, theirs)):
        for key, value in a.items():
            column = key if key.startswith("p_") else "predicted_" + key
            if isinstance(value, str):
                if value != b[column]:
                    fail(f"{name} row {i + 1}: class {value!r}, ironlearn-cli {b[column]!r}")
            else:
                worst = max(worst, close(value, float(b[column]), f"{name} row {i + 1} {column}"))
    if len(ours) != len(theirs):
        fail(f"{name}: {len(ours)} predictions, ironlearn-cli {len(theirs)}")
    print(f"ok {name}: {len(ours)} rows x {len(ours[0])} values match predict "
          f"(worst relative difference {worst:.2e})")
    exported = export_onnx(name, model_file)
    if exported:
        import numpy as np
        graph, evaluator = exported
        task = net.task_info
        names = {i.name for i in graph.graph.input}
        feeds, numeric = {}, []
        for column, categories in zip(task["features"], task["feature_categories"]):
            if categories:
                key = column if column in names else None
                if key is None:
                    fail(f"{name}: the ONNX graph has no input for the text column {column!r}")
                feeds[key] = np.array([[r[column].strip()] for r in rows], dtype=object)
            else:
                # A missing cell is NaN (a model with missing_fill fills it in the graph).
                numeric.append([float(r[column]) if r[column].strip() else float("nan")
                                for r in rows])
        if numeric:
            feeds["numbers"] = np.array(numeric, dtype=np.float32).T.copy()
        result = evaluator.run(graph, feeds)
        worst = 0.0
        for i, b in enumerate(theirs):
            if task["kind"] == "regression":
                for j, t in enumerate(task["targets"]):
                    span = abs(task["target_offset"][j]) + 4 * abs(task["target_scale"][j])
                    worst = max(worst, close(float(result["predictions"][i][j]),
                                             float(b["predicted_" + t]), f"{name} ONNX row {i + 1}",
                                             span=span))
            else:
                classes = task["classes"]
                if classes[int(result["class_index"][i])] != b["predicted_" + task["target"]]:
                    fail(f"{name} ONNX row {i + 1}: another class")
                for j, c in enumerate(classes):
                    worst = max(worst, close(float(result["probabilities"][i][j]),
                                             float(b["p_" + c]), f"{name} ONNX row {i + 1} p_{c}"))
        print(f"ok {name} ONNX: checker passes; {len(theirs)} rows match predict "
              f"(worst relative difference {worst:.2e})")
    return model_file, out


def check_image(name, extra):
    import torch
    model_file, out = export(name, [os.path.join(SAMPLES, "camera.png"), "--image-size", "32",
                                    "--steps", "40"] + list(extra))
    model = import_model(out)
    net = model.load(os.path.join(out, "model.safetensors"))
    w, h = net.task_info["width"], net.task_info["height"]
    black = os.path.join(WORK, f"black-{w}x{h}.png")
    black_png(black, w, h)
    metrics = os.path.join(WORK, name + ".json")
    cli("evaluate", model_file, black, "--metrics-json", metrics)
    theirs = json.load(open(metrics))["val_loss"]
    picture = model.render(net, clamp=False).to(torch.float64)
    ours = float((picture ** 2).mean())
    d = close(ours, theirs, f"{name}: mean square of the rendered picture")
    print(f"ok {name}: {w}x{h} picture, mean square {ours:.8f} vs {theirs:.8f} ({d:.1e})")
    exported = export_onnx(name, model_file)
    if exported:
        graph, evaluator = exported
        coordinates = model.image_coordinates(net, w, h).numpy()
        result = evaluator.run(graph, {"coordinates": coordinates})["intensities"]
        clamped = json.load(open(metrics))["mse"]
        ours = float((result.astype("float64") ** 2).mean())
        d = close(ours, clamped, f"{name} ONNX: mean square of the intensities")
        print(f"ok {name} ONNX: checker passes; mean square {ours:.8f} vs evaluate's mse "
              f"{clamped:.8f} ({d:.1e})")


NAMES = ["emma", "olivia", "zzyzx", "noah", "li"]


def names_loss(model, net):
    import torch
    total, count = 0.0, 0
    vocabulary = net.task_info["vocabulary"]
    for n in NAMES:
        for t in range(len(n) + 1):
            p = model.next_char_probabilities(net, [n[:t]])[0].to(torch.float64)
            target = vocabulary.index(n[t]) if t < len(n) else 0
            total -= float(torch.log(p[target]))
            count += 1
    return total / count


def check_names(name, extra):
    model_file, out = export(name, [os.path.join(SAMPLES, "names-ssa2018.txt"), "--steps", "60"]
                             + list(extra))
    model = import_model(out)
    net = model.load(os.path.join(out, "model.safetensors"))
    names = os.path.join(WORK, "few-names.txt")
    with open(names, "w") as f:
        f.write("\n".join(NAMES) + "\n")
    metrics = os.path.join(WORK, name + ".json")
    cli("evaluate", model_file, names, "--metrics-json", metrics)
    theirs = json.load(open(metrics))["val_cross_entropy"]
    ours = names_loss(model, net)
    d = close(ours, theirs, f"{name}: cross-entropy")
    generated = model.generate(net, 3, seed=1)
    print(f"ok {name}: cross-entropy {ours:.8f} vs {theirs:.8f} ({d:.1e}); generated {generated}")
    exported = export_onnx(name, model_file)
    if exported:
        import numpy as np
        graph, evaluator = exported
        vocabulary = net.task_info["vocabulary"]
        contexts, targets = [], []
        for n in NAMES:
            for t in range(len(n) + 1):
                contexts.append(n[:t])
                targets.append(vocabulary.index(n[t]) if t < len(n) else 0)
        ids = model.encode_contexts(net, contexts).numpy().astype(np.int64)
        p = evaluator.run(graph, {"context": ids})["probabilities"].astype(np.float64)
        ours = float(-np.log(p[np.arange(len(targets)), targets]).mean())
        d = close(ours, theirs, f"{name} ONNX: cross-entropy")
        print(f"ok {name} ONNX: checker passes; cross-entropy {ours:.8f} vs {theirs:.8f} ({d:.1e})")
    return model_file, out


def check_train_more(name, out, data, evaluate_loss):
    r = subprocess.run([sys.executable, os.path.join(out, "train_more.py"), data, "--steps", "10",
                        "--model", os.path.join(out, "model.safetensors"),
                        "--out", os.path.join(out, "more.pt")],
                       capture_output=True, text=True, cwd=out)
    if r.returncode != 0:
        fail(f"{name}: train_more.py: {r.stderr.strip()[-2000:]}")
    lines = [line for line in r.stdout.splitlines() if line.startswith("step ")]
    before = float(lines[0].split()[3])
    after = float(lines[-1].split()[3])
    close(before, evaluate_loss, f"{name}: train_more.py's starting loss against evaluate's",
          rel=1e-4)
    if not after < before:
        fail(f"{name}: train_more.py: loss {before} before 10 steps, {after} after")
    print(f"ok {name}: train_more.py starts at {before:.6f} (evaluate: {evaluate_loss:.6f}) "
          f"and reaches {after:.6f} after 10 steps ({lines[1].split()[1]}..{lines[-2].split()[1]})")


def main():
    try:
        import torch  # noqa
    except ImportError:
        print("SKIP: PyTorch is not installed for", sys.executable, "(Debian: python3-torch)")
        sys.exit(77)
    categorical = os.path.join(WORK, "colours.csv")
    with open(categorical, "w") as f:
        f.write("size,colour,price\n")
        for i in range(60):
            f.write(f"{1 + (i * 7) % 10},{['red', 'green', 'Blue'][i % 3]},"
                    f"{['cheap', 'dear'][(i * 7 % 10 + i % 3) % 2]}\n")
    reg_file, reg_out = check_table("regression", os.path.join(SAMPLES, "diabetes.csv"),
                                    ["--preset", "mlp"])
    model_file, out = check_table("classification", os.path.join(SAMPLES, "iris.csv"))
    check_table("binary-text-column", categorical, ["--epochs", "50"])
    # Empty number cells: filled with the training mean (model.py and the ONNX graph fill them
    # as predict does, and train_more.py trains on them filled), or their columns left out.
    gaps = os.path.join(WORK, "gaps.csv")
    with open(gaps, "w") as f:
        f.write("size,weight,age,colour,price\n")
        for i in range(60):
            weight = "" if i % 5 == 1 else str(40 + (i * 13) % 30)
            age = "" if i % 7 == 1 else str(0.5 * (i % 9))
            f.write(f"{1 + (i * 7) % 10},{weight},{age},{['red', 'green', 'Blue'][i % 3]},"
                    f"{10.25 + i % 4 + (i * 7) % 10}\n")
    fill_file, fill_out = check_table("mean-fill", gaps, ["--missing", "mean", "--epochs", "20"])
    check_table("ignore", gaps, ["--missing", "ignore", "--epochs", "20"])
    check_image("siren", ["--preset", "siren"])
    check_image("fourier", ["--preset", "fourier-relu"])
    check_image("hashgrid", ["--preset", "hashgrid"])
    check_names("names", [])
    check_names("names-wavenet", ["--preset", "wavenet", "--context", "8"])
    check_names("names-layernorm", ["--layers", "embedding:12,layernorm,dense:64,gelu,dropout:0.2,dense"])
    # Each layer type's registry example (LayerType::example): a new type runs here with no
    # change to this script.
    for example in EXAMPLES:
        name, layers = "example-" + example["name"], ["--layers", example["layers"]]
        if example["data"] == "names":
            check_names(name, layers + ["--context", "4"])
        elif example["data"] == "image":
            check_image(name, layers)
        else:
            check_table(name, os.path.join(SAMPLES, "diabetes.csv"), layers + ["--epochs", "2"])
    # Every activation the exported model.py knows, which the export wrote from the program's
    # layer registry: each one's PyTorch form against predict, with its default argument.
    activations = list(import_model(reg_out).ACTIVATIONS)
    for kind in ("relu", "tanh", "sigmoid", "leakyrelu", "sine", "gelu"):
        if kind not in activations:
            fail(f"model.py's ACTIVATIONS has no {kind}: the export did not fill the table")
    for kind in activations:  # one each: in a deep chain the later layers hide an error
        check_table("activation-" + kind, os.path.join(SAMPLES, "diabetes.csv"),
                    ["--layers", f"dense:16,{kind},dense", "--epochs", "2"])

    iris = os.path.join(SAMPLES, "iris.csv")
    metrics = os.path.join(WORK, "iris-all.json")
    cli("evaluate", model_file, iris, "--metrics-json", metrics)
    check_train_more("classification", out, iris, json.load(open(metrics))["val_loss"])
    diabetes = os.path.join(SAMPLES, "diabetes.csv")
    cli("evaluate", reg_file, diabetes, "--metrics-json", metrics)
    check_train_more("regression", reg_out, diabetes, json.load(open(metrics))["val_loss"])
    cli("evaluate", fill_file, gaps, "--metrics-json", metrics)
    check_train_more("mean-fill", fill_out, gaps, json.load(open(metrics))["val_loss"])
    if not onnx_available():
        print("note: no ONNX checks: python3-onnx (and NumPy) are not installed for", sys.executable)
    print("all export checks passed")


if __name__ == "__main__":
    main()
