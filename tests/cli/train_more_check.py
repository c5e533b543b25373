"""Checks the exported train_more.py against the CLI (run by testCliExport).

    python3 train_more_check.py CLI WORKDIR SAMPLES_DIR

- schedule: a table model trained by the CLI to the end of its cosine (every row, full batch),
  continued 10 steps by train_more.py and by `train --resume --steps S+10`: the loss after is the
  same (1e-5 relative), the learning rate of the first new step is above 0;
- optimizers: the same for every optimizer of the program (IRONLEARN_OPTIMIZERS, which
  testCliExport sets from the registry), with weight decay, its state restored in torch.optim;
- pictures: the picture train_more.py trains toward is the CLI's own (race --out-dir writes the
  target.png it trains on): gray camera at 300 (Qt's bilinear drawing) and 100 (Qt's area
  smooth scale), colour astronaut at 300, horse (transparent, composited on white) at 246x300;
  every pixel equal. A small image model's starting loss is evaluate's on the same picture, to
  1e-6, printed with 9 significant digits;
- tables as the CLI reads them, under LC_ALL=de_DE.UTF-8: a semicolon table with decimal commas
  (the starting loss is evaluate's); a table with missing cells trained with --missing drop
  (the rows are dropped, as the CLI drops them: the loss is evaluate's); the same table under a
  missing: fail model (exit 1, one line naming the file, line and column, no traceback);
- --ddp: torchrun --standalone --nproc_per_node=2 --redirects 1 --tee 1 train_more.py --ddp
  against one process on the same model: every step's loss the same to 1e-5 relative, the saved
  weights the same to 1e-5, and the output folder holds exactly the one output file.
Prints one line per check; exits 1 on the first failure, 77 (skip) without PyTorch.
"""
import json
import os
import re
import shutil
import subprocess
import sys

from cli_checks import fail, run_cli

CLI, WORK, SAMPLES = (os.path.abspath(a) for a in sys.argv[1:4])
GERMAN = dict(os.environ, LC_ALL="de_DE.UTF-8")


def cli(*args):
    return run_cli(CLI, WORK, *args)


def export(name, data, *train_args):
    model_file = os.path.join(WORK, name + ".safetensors")
    cli("train", data, *train_args, "--quiet", "--threads", "1", "--out", model_file)
    out = os.path.join(WORK, name + "-pytorch")
    shutil.rmtree(out, ignore_errors=True)
    cli("export", model_file, "--to", "pytorch", "--out", out)
    return model_file, out


def evaluate(model_file, data):
    metrics = os.path.join(WORK, "metrics.json")
    cli("evaluate", model_file, data, "--metrics-json", metrics)
    with open(metrics) as f:
        return json.load(f)["val_loss"]


def train_more(out, data, *args, env=None, code=0):
    r = subprocess.run([sys.executable, os.path.join(out, "train_more.py"), data,
                        "--model", os.path.join(out, "model.safetensors")] + list(args),
                       capture_output=True, text=True, cwd=out, env=env)
    if r.returncode != code:
        fail(f"train_more.py {data} {' '.join(args)}: exit {r.returncode} (expected {code}): "
             f"{r.stderr.strip()[-2000:]}")
    return r


def losses(stdout):
    """The loss strings of the 'step N loss L' lines, in order (torchrun's prefix removed)."""
    return [m.group(1) for m in re.finditer(r"step \d+ loss (\S+)", stdout)]


def close(ours, theirs, what, rel):
    if abs(ours - theirs) > rel * abs(theirs):
        fail(f"{what}: {ours!r} against {theirs!r} (relative tolerance {rel})")
    return abs(ours - theirs) / abs(theirs)


def continue_as_resume(name, *train_args):
    """A table model trained by the CLI to the end of its cosine (every row, full batch) and
    continued 10 steps by train_more.py and by `train --resume --steps 40`: the same loss after,
    to 1e-5 relative. Returns (the loss after, the learning rate of the first new step)."""
    diabetes = os.path.join(SAMPLES, "diabetes.csv")
    model_file, out = export(name, diabetes, "--preset", "mlp", "--val-split", "0",
                             "--batch", "0", "--steps", "30", *train_args)
    resumed = os.path.join(WORK, name + "-resumed.safetensors")
    shutil.copy(model_file, resumed)
    cli("train", diabetes, "--resume", resumed, "--steps", "40", "--quiet", "--threads", "1",
        "--out", resumed)
    theirs = evaluate(resumed, diabetes)
    r = train_more(out, diabetes, "--steps", "10", "--out", os.path.join(out, "more.pt"))
    after = float(losses(r.stdout)[-1])
    first_lr = float(re.search(r"step 31 loss \S+ lr (\S+)", r.stdout).group(1))
    d = close(after, theirs, f"{name}: train_more.py 10 steps past a finished cosine, against "
              "train --resume --steps 40", 1e-5)
    return after, theirs, d, first_lr


def check_schedule():
    after, theirs, d, first_lr = continue_as_resume("finished")
    if not first_lr > 0:
        fail(f"train_more.py after a finished cosine: learning rate {first_lr} at step 31")
    print(f"ok schedule: 10 steps past a finished cosine (lr {first_lr:.3g} at step 31) end at "
          f"{after:.9g}, train --resume --steps 40 at {theirs:.9g} ({d:.1e})")


def check_optimizers():
    """Every optimizer of the program (IRONLEARN_OPTIMIZERS, from its registry: testCliExport
    sets it) continues in torch.optim with its state restored as the CLI continues, with weight
    decay on."""
    names = os.environ.get("IRONLEARN_OPTIMIZERS", "adam").split(",")
    for name in names:
        after, theirs, d, _ = continue_as_resume("optimizer-" + name, "--optimizer", name,
                                                 "--weight-decay", "0.01")
        print(f"ok optimizer {name}: train_more.py and train --resume end 10 steps later at "
              f"{after:.9g} and {theirs:.9g} ({d:.1e})")


def check_pictures():
    sys.path.insert(0, os.path.join(WORK, "finished-pytorch"))
    import numpy as np
    import train_more as exported
    from PIL import Image
    for name, size, channels in (("camera.png", 300, 1), ("camera.png", 100, 1),
                                 ("astronaut.png", 300, 3), ("horse.png", 300, 3)):
        directory = os.path.join(WORK, "race")
        shutil.rmtree(directory, ignore_errors=True)
        picture = os.path.join(SAMPLES, name)
        cli("race", picture, "--image-size", str(size), "--seconds", "0.05", "--presets",
            "classic", "--quiet", "--threads", "1", "--out-dir", directory)
        with Image.open(os.path.join(directory, "target.png")) as t:
            target = np.asarray(t.convert("L" if channels == 1 else "RGB"), dtype=np.int64)
        target = target.reshape(target.shape[0], target.shape[1], channels)
        h, w = target.shape[:2]
        ours = exported.training_pixels(picture, w, h, channels).astype(np.int64)
        worst = int(np.abs(ours - target).max())
        if worst != 0:
            fail(f"{name} at {w}x{h}: train_more.py's picture differs from the CLI's target.png "
                 f"by up to {worst}/255 in {int((ours != target).any(axis=2).sum())} pixels")
        print(f"ok picture {name} at {w}x{h}: every pixel the CLI's target")
    sys.path.pop(0)

    camera = os.path.join(SAMPLES, "camera.png")
    model_file, out = export("small-image", camera, "--image-size", "32", "--layers",
                             "dense:8,tanh,dense", "--steps", "20")
    theirs = evaluate(model_file, camera)
    r = train_more(out, camera, "--steps", "2", "--out", os.path.join(out, "more.pt"))
    printed = losses(r.stdout)[0]
    digits = len(printed.replace(".", "").lstrip("0").split("e")[0])
    if digits < 9:
        fail(f"train_more.py prints the image loss as {printed}: {digits} significant digits")
    d = close(float(printed), theirs, "train_more.py's starting image loss against evaluate's",
              1e-6)
    print(f"ok image: train_more.py starts at {printed} (evaluate: {theirs:.9g}, {d:.1e})")


def check_tables():
    semicolon = os.path.join(WORK, "semicolon.csv")
    with open(SAMPLES + "/iris.csv") as f:
        lines = f.read().splitlines()
    with open(semicolon, "w") as f:
        for line in lines:
            f.write(";".join(cell.replace(".", ",") for cell in line.split(",")) + "\n")
    model_file, out = export("semicolon", semicolon, "--epochs", "20")
    theirs = evaluate(model_file, semicolon)
    r = train_more(out, semicolon, "--steps", "2", "--out", os.path.join(out, "more.pt"),
                   env=GERMAN)
    d = close(float(losses(r.stdout)[0]), theirs, "semicolon table: starting loss", 1e-5)
    print(f"ok semicolon table with decimal commas (LC_ALL=de_DE.UTF-8): starts at "
          f"{losses(r.stdout)[0]}, evaluate {theirs:.9g} ({d:.1e})")

    holes = os.path.join(WORK, "holes.csv")
    with open(os.path.join(SAMPLES, "diabetes.csv")) as f:
        lines = f.read().splitlines()
    for i in (3, 10, 11, 40):
        cells = lines[i].split(",")
        cells[i % 3] = ["", "NA", "nan"][i % 3]
        lines[i] = ",".join(cells)
    with open(holes, "w") as f:
        f.write("\n".join(lines) + "\n")
    model_file, out = export("holes", holes, "--missing", "drop", "--val-split", "0",
                             "--epochs", "5")
    theirs = evaluate(model_file, holes)
    r = train_more(out, holes, "--steps", "2", "--out", os.path.join(out, "more.pt"), env=GERMAN)
    if "dropped 4 rows" not in r.stderr:
        fail(f"missing: drop: train_more.py said {r.stderr.strip()!r}")
    d = close(float(losses(r.stdout)[0]), theirs, "missing: drop: starting loss", 1e-5)
    print(f"ok missing: drop: 4 rows dropped, starts at {losses(r.stdout)[0]}, evaluate "
          f"{theirs:.9g} ({d:.1e})")

    model_file, out = export("no-holes", os.path.join(SAMPLES, "diabetes.csv"), "--epochs", "2")
    r = train_more(out, holes, "--steps", "2", "--out", os.path.join(out, "more.pt"), code=1)
    message = r.stderr.strip()
    if len(message.splitlines()) != 1 or "holes.csv:4: column 'age'" not in message or \
            "missing value" not in message or os.path.exists(os.path.join(out, "more.pt")):
        fail(f"missing: fail: exit 1 but {message!r}")
    print(f"ok missing: fail: exit 1, nothing written: {message}")


def check_ddp():
    diabetes = os.path.join(SAMPLES, "diabetes.csv")
    model_file, out = export("ddp", diabetes, "--preset", "mlp", "--epochs", "3")
    one_dir, two_dir = os.path.join(WORK, "ddp-one"), os.path.join(WORK, "ddp-two")
    for d in (one_dir, two_dir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    one = train_more(out, diabetes, "--steps", "6", "--out", os.path.join(one_dir, "more.pt"))
    torchrun = shutil.which("torchrun") or "/usr/bin/torchrun"
    r = subprocess.run([torchrun, "--standalone", "--nproc_per_node=2", "--redirects", "1",
                        "--tee", "1", os.path.join(out, "train_more.py"), diabetes, "--ddp",
                        "--model", os.path.join(out, "model.safetensors"), "--steps", "6",
                        "--out", os.path.join(two_dir, "more.pt")],
                       capture_output=True, text=True, cwd=out, timeout=300)
    if r.returncode != 0:
        fail(f"torchrun train_more.py --ddp: exit {r.returncode}: {(r.stdout + r.stderr)[-3000:]}")
    a, b = losses(one.stdout), losses(r.stdout)
    if len(a) != 8 or len(b) != len(a):
        fail(f"--ddp printed {len(b)} losses, one process {len(a)}: {r.stdout[-2000:]}")
    worst = max(close(float(y), float(x), f"--ddp step loss {i}", 1e-5)
                for i, (x, y) in enumerate(zip(a, b)))
    written = os.listdir(two_dir)
    if written != ["more.pt"]:
        fail(f"--ddp wrote {written} (expected only more.pt)")
    import torch
    left = torch.load(os.path.join(one_dir, "more.pt"))["model"]
    right = torch.load(os.path.join(two_dir, "more.pt"))["model"]
    weights = max(float((left[k] - right[k]).abs().max() / (left[k].abs().max() + 1e-12))
                  for k in left)
    if weights > 1e-5:
        fail(f"--ddp weights differ from one process's by {weights:.2e} relative")
    print(f"ok --ddp on 2 processes: {len(a)} losses as one process's (worst {worst:.1e}), "
          f"weights within {weights:.1e}, one file written")


def main():
    try:
        import torch  # noqa: F401 (installed?)
        import numpy  # noqa: F401
    except ImportError:
        print("SKIP: PyTorch/NumPy are not installed for", sys.executable,
              "(Debian: python3-torch)")
        sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    check_schedule()
    check_optimizers()
    check_pictures()
    check_tables()
    check_ddp()
    print("all train_more checks passed")


if __name__ == "__main__":
    main()
