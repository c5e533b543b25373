"""Checks that the exported model.py renders big pictures in bounded memory (run by testCliExport).

    python3 render_memory_check.py CLI WORKDIR SAMPLES_DIR [SIZE]

Trains a small gray image model with the CLI (dense:4,tanh,dense on camera.png at 32x32),
exports it to PyTorch, and renders it with model.render(net, SIZE, SIZE) (default 8192) in a
fresh Python process under a comma-decimal locale (de_DE.UTF-8, when the machine has it). The
peak resident memory (getrusage's ru_maxrss) less the resident memory just before the render
must stay within the formula model.py states:
    4 * width * height * channels + model.render_working_set(net)
(the output, plus one strip of rows' working set). The old render, which ran the network on
every pixel at once, took 160 MB over its 16 MB output at 2048x2048 for this model and 2.5 GB
at 8192x8192. Also checks that the strips put together are the picture rendered in one piece
(at 300x200, where that is cheap). Prints one line per check; exits 1 on a failure.
"""
import os
import shutil
import subprocess
import sys

from cli_checks import fail, run_cli

CLI, WORK, SAMPLES = (os.path.abspath(a) for a in sys.argv[1:4])
SIZE = int(sys.argv[4]) if len(sys.argv) > 4 else 8192

CHILD = r"""
import os, resource, sys, time
import torch
import model

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

net = model.load("model.safetensors")
w, h = 300, 200
whole = net(model.image_coordinates(net, w, h)).detach()
whole = torch.nan_to_num(whole, nan=0.0).clamp(0.0, 1.0).reshape(h, w, -1)
strips = model.render(net, w, h)
print("strips", float((strips - whole).abs().max()))
size = int(sys.argv[1])
before = resident()
start = time.time()
picture = model.render(net, size, size)
seconds = time.time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print("render", size, picture.shape[2], before, peak, model.render_working_set(net), seconds)
"""


def cli(*args):
    return run_cli(CLI, WORK, *args)


def main():
    try:
        import torch  # noqa: F401 (installed?)
    except ImportError:
        print("SKIP: PyTorch is not installed for", sys.executable, "(Debian: python3-torch)")
        sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    model_file = os.path.join(WORK, "tiny-image.safetensors")
    cli("train", os.path.join(SAMPLES, "camera.png"), "--image-size", "32", "--layers",
        "dense:4,tanh,dense", "--steps", "20", "--quiet", "--threads", "1", "--out", model_file)
    out = os.path.join(WORK, "tiny-image-pytorch")
    shutil.rmtree(out, ignore_errors=True)
    cli("export", model_file, "--to", "pytorch", "--out", out)
    env = dict(os.environ, LC_ALL="de_DE.UTF-8")
    r = subprocess.run([sys.executable, "-c", CHILD, str(SIZE)], capture_output=True, text=True,
                       cwd=out, env=env)
    if r.returncode != 0:
        fail(f"model.render at {SIZE}x{SIZE}: {r.stderr.strip()[-2000:]}")
    lines = {line.split()[0]: line.split()[1:] for line in r.stdout.splitlines() if line.strip()}
    difference = float(lines["strips"][0])
    if difference > 1e-6:
        fail(f"the picture rendered in strips differs from the one in one piece by {difference}")
    print(f"ok render: the picture rendered in strips is the one rendered in one piece "
          f"(largest difference {difference:.1e})")
    size, channels, before, peak, working, seconds = lines["render"]
    size, channels, before, peak, working = int(size), int(channels), int(before), int(peak), \
        int(working)
    output = 4 * size * size * channels
    grew = peak - before
    mib = 1 << 20
    if grew > output + working:
        fail(f"model.render({size}, {size}): peak resident memory grew by {grew / mib:.1f} MiB, "
             f"more than the output ({output / mib:.1f} MiB) plus the working set "
             f"({working / mib:.1f} MiB)")
    print(f"ok render {size}x{size}: peak resident memory grew by {grew / mib:.1f} MiB, within "
          f"the output {output / mib:.1f} MiB + working set {working / mib:.1f} MiB "
          f"({float(seconds):.1f} s)")
    print("all render memory checks passed")


if __name__ == "__main__":
    main()
