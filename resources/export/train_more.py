"""Continue training an exported Iron Learn Studio model in PyTorch, where it stopped.

    python3 train_more.py DATA [--steps N] [--model model.safetensors] [--out more.pt]
    torchrun --standalone --nproc_per_node=2 --redirects 1 --tee 1 train_more.py DATA --ddp

DATA is the file the model was trained on (a CSV table, a picture, a list of names), read as
ironlearn-cli reads it: a table's delimiter (comma, semicolon or tab) and decimal commas (in
semicolon tables), its missing cells as the model's `missing` setting says (fail, drop the row,
or fill a missing number with the training mean the model keeps); a picture composited on white
and resized to the training size with Qt's smooth scaling, the same pixels as the CLI trains on.
The loss, the optimizer with its saved state (Adam's moments and step count...), the batch size,
the gradient clipping and the learning-rate schedule are the model file's, so the first step here
is the step after the studio's last. Every row of DATA is
trained on (the studio held some out for validation; split them off first if you need them).

The schedule: the file's run ended at step S; --steps N trains steps S+1..S+N and plans the
schedule over S+N steps in total, as `ironlearn-cli train DATA --resume MODEL --steps S+N` does.
A cosine that had reached lr_min at S picks up at its value for step S of S+N and comes down to
lr_min again at S+N (it never trains at a learning rate of 0 for ever); warm-up and step decay
count from the file's first step.

Prints the loss on all rows before the first step and after the last, and each step's batch
loss, with 9 significant digits; saves the weights, the optimizer state and the step count with
torch.save, atomically (a temporary file beside --out, renamed over it).

--ddp: data parallel training with torch.distributed (gloo, on the CPU), started by torchrun.
Every process draws the same batches; each takes its contiguous share of every batch and the
gradients are averaged so that each step is the one-process step (the loss of every step equals
the one-process loss to float rounding), for models without dropout and batchnorm (dropout draws
other masks; batchnorm normalises each process's share by its own statistics). Only rank 0
prints and writes --out. Debian 12's torchrun (PyTorch 1.13, Python 3.11) fails at start unless
given `--redirects 1 --tee 1` (its output then starts with [default0]:).
"""
import argparse
import csv
import io
import math
import os
import re
import sys

import torch

import model


class DataError(Exception):
    """A problem with DATA or the model that the user can fix; printed in one line."""


# ---- tables, read as ironlearn-cli reads them (src/io/CsvTable.cpp) -----------------------------

_MISSING = {"", "na", "n/a", "nan", "null"}
# A number as the CLI's tables spell one: sign, digits with a point, exponent; inf and nan.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)",
                     re.IGNORECASE)


def _delimiter(text):
    """The CLI's choice: of tab, semicolon and comma (counted outside quotes on the first 20
    lines that are not blank), the one found the same number of times on every line, then the
    most frequent on the first line; ties go to tab, then semicolon. Comma when none is found."""
    candidates = "\t;,"
    counts, current, quoted, has_text = [], [0, 0, 0], False, False
    for c in text:
        if len(counts) >= 20:
            break
        if c == '"':
            quoted = not quoted
        if quoted:
            continue
        if c in "\r\n":
            if has_text:
                counts.append(current)
            current, has_text = [0, 0, 0], False
            continue
        if c not in " \t":
            has_text = True
        if c in candidates:
            current[candidates.index(c)] += 1
    if has_text and len(counts) < 20:
        counts.append(current)
    best, best_consistent = -1, False
    for k in range(3):
        if not counts or counts[0][k] == 0:
            continue
        consistent = all(line[k] == counts[0][k] for line in counts)
        if best < 0 or (consistent and not best_consistent) or \
                (consistent == best_consistent and counts[0][k] > counts[0][best]):
            best, best_consistent = k, consistent
    return candidates[best] if best >= 0 else ","


def _is_missing(cell):
    text = cell.strip(" \t").lower()
    return text in _MISSING or text in ("+nan", "-nan")


def read_table(path):
    """(rows, line numbers, delimiter): rows as csv.DictReader gives them, numbers in decimal-comma
    tables rewritten with a point."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise DataError(f"{path}: the file is UTF-16 text; save it as UTF-8 (CSV UTF-8)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.start + 1})") from None
    delimiter = _delimiter(text)
    decimal_comma = delimiter == ";"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True)
    header, rows, lines = None, [], []
    for record in reader:
        if not record or (len(record) == 1 and not record[0].strip(" \t")):
            continue  # blank lines
        if header is None:
            header = [name.strip(" \t") for name in record]
            continue
        cells = [cell.strip(" \t") for cell in record]
        if decimal_comma:
            cells = [c.replace(",", ".") if "," in c and _NUMBER.fullmatch(c.replace(",", "."))
                     else c for c in cells]
        rows.append(dict(zip(header, cells)))
        lines.append(reader.line_num)
    if header is None or not rows:
        raise DataError(f"{path}: no rows under the header")
    return rows, lines, delimiter


def _number(path, line, column, text):
    if not _NUMBER.fullmatch(text):
        raise DataError(f"{path}:{line}: column {column!r}: {text!r} is not a number")
    value = float(text)
    if not math.isfinite(value) or abs(value) > 3.4028234663852886e38:
        raise DataError(f"{path}:{line}: column {column!r}: {text} is outside the float range")
    return value


def table_data(net, path):
    rows, lines, _ = read_table(path)
    task = net.task_info
    targets = task["targets"] if task["kind"] == "regression" else [task["target"]]
    used = list(task["features"]) + list(targets)
    try:
        cells = [[model._column(r, name) for name in used] for r in rows]
    except KeyError as e:
        raise DataError(f"{path}: {e.args[0]} (the model reads {', '.join(used)})") from None
    # The model's missing-value policy, as the CLI resumes it: "mean" fills the missing numbers
    # of features (model.encode_rows, with the model's missing_fill) and drops the rows missing
    # a text feature or a target, "drop" and "ignore" (whose features have no missing cells in
    # the training file) drop the rows, "fail" refuses them.
    policy = task.get("missing", "fail")
    fillable = [policy == "mean" and i < len(task["features"]) and
                not task["feature_categories"][i] for i in range(len(used))]
    missing = [i for i, row in enumerate(cells)
               if any(_is_missing(c) and not fill for c, fill in zip(row, fillable))]
    filled = sum(1 for row in cells if any(_is_missing(c) for c in row)) - len(missing)
    if filled:
        print(f"note: filled the missing values of {filled} row{'s' if filled > 1 else ''} "
              f"with the training mean the model keeps, as its missing: mean says",
              file=sys.stderr)
    if missing:
        first = missing[0]
        column = next(n for n, c, fill in zip(used, cells[first], fillable)
                      if _is_missing(c) and not fill)
        where = ", ".join(str(lines[i]) for i in missing[:5])
        where += ", ..." if len(missing) > 5 else ""
        count = f"{len(missing)} row{'s' if len(missing) > 1 else ''}"
        if policy == "fail":
            raise DataError(f"{path}:{lines[first]}: column {column!r}: missing value; {count} "
                            f"with missing values (lines {where}); the model's setting is "
                            f"missing: fail (train with --missing drop to leave them out)")
        if len(missing) == len(rows):
            raise DataError(f"{path}: every row has a missing value")
        print(f"note: dropped {count} with missing values (lines {where}), as the model's "
              f"missing: {policy} says", file=sys.stderr)
        keep = sorted(set(range(len(rows))) - set(missing))
        rows, lines = [rows[i] for i in keep], [lines[i] for i in keep]
    for row, line in zip(rows, lines):
        for name, categories in zip(task["features"], task["feature_categories"]):
            if not categories and not _is_missing(model._column(row, name)):
                _number(path, line, name, model._column(row, name))
    try:
        x = model.encode_rows(net, rows)
    except ValueError as e:
        raise DataError(f"{path}: {e}") from None
    if task["kind"] == "regression":
        values = torch.tensor([[_number(path, line, t, model._column(r, t)) for t in targets]
                               for r, line in zip(rows, lines)])
        return x, (values - net.target_offset) / net.target_scale
    classes = task["classes"]
    labels = []
    for r, line in zip(rows, lines):
        label = model._column(r, task["target"]).strip()
        if label not in classes:
            number = model._as_float(label)
            label = next((c for c in classes if number is not None and
                          model._as_float(c) == number), None)
            if label is None:
                raise DataError(f"{path}:{line}: column {task['target']!r}: "
                                f"{model._column(r, task['target'])!r} is not one of the "
                                f"model's classes ({', '.join(classes)})")
        labels.append(classes.index(label))
    y = torch.tensor(labels)
    return x, (y.to(torch.float32)[:, None] if task["kind"] == "binary" else y)


# ---- pictures, resized as the CLI resizes them ------------------------------------------------
# The CLI (src/io/ImageFile.cpp, src/tasks/ImageTask.cpp) composites on white, keeps a picture
# whose pixels are all gray as one 8-bit channel (Rec. 601 luma, rounded), and resizes with
# QImage::scaled(Qt::SmoothTransformation) of Qt 6. That is, in Qt 6.4:
#  - colour pictures, and gray ones shrunk below half a side or of 2^20 pixels and more: Qt's
#    smooth scale (after Imlib2): along a shrunk axis each output pixel is the average of the
#    source pixels it covers, in 14-bit fixed-point weights; along a grown axis, the two nearest
#    pixels with 8-bit weights; the sums truncated as Qt truncates them;
#  - other gray pictures: the raster engine's bilinear drawing, pixel centres in 16.16 fixed
#    point (one unit below the exact position), rows interpolated first, 8-bit weights.
# Checked against Qt 6.4.2 (export_check.py compares with the CLI's own target.png): equal in
# every pixel, but for a rare 1/255 in the last column of gray pictures grown by some factors.

def _area_taps(s, d):
    """(index [d, k], weight [d, k], grown): the source pixels and integer weights of each output
    pixel along an axis of s source and d output pixels, in Qt's smooth scale."""
    import numpy as np
    step = (s << 16) // d
    if d >= s:  # grown: two taps, 8-bit weights, centres aligned
        pos = (0x8000 * s) // d - 0x8000 + np.arange(d, dtype=np.int64) * step
        p = pos >> 16
        a = np.where((p < 0) | (p >= s - 1), 0, (pos >> 8) & 0xFF)
        p = np.maximum(p, 0)
        return np.stack([p, np.minimum(p + 1, s - 1)], 1), np.stack([256 - a, a], 1), True
    per = ((d << 14) + s - 1) // s  # one whole source pixel's share of 2^14
    taps = []
    for i in range(d):
        pos = i * step
        first = ((0x10000 - (pos & 0xFFFF)) * per) >> 16
        weights, rest = [first], (1 << 14) - first
        while rest > per:
            weights.append(per)
            rest -= per
        weights.append(rest)
        taps.append((pos >> 16, weights))
    k = max(len(w) for _, w in taps)
    index, weight = np.zeros((d, k), np.int64), np.zeros((d, k), np.int64)
    for i, (p, w) in enumerate(taps):
        index[i, :len(w)] = np.minimum(np.arange(p, p + len(w)), s - 1)
        weight[i, :len(w)] = w
    return index, weight, False


def _bilinear_taps(s, d, stepped):
    """The raster engine's two taps per output pixel: x positions stepped by a truncated 16.16
    increment from the first, y positions computed per row."""
    import numpy as np
    i = np.arange(d, dtype=np.int64)
    if stepped:
        step = (s << 16) // d
        pos = step // 2 - 0x8000 + i * step - 1
    else:
        pos = np.floor((i + 0.5) * (s / d) * 65536).astype(np.int64) - 0x8000 - 1
    p, a = pos >> 16, (pos & 0xFFFF) >> 8
    return np.stack([np.clip(p, 0, s - 1), np.clip(p + 1, 0, s - 1)], 1), np.stack([256 - a, a], 1)


def _weighted(values, axis, index, weight):
    import numpy as np
    moved = np.moveaxis(values, axis, 0)
    shape = (-1,) + (1,) * (moved.ndim - 1)
    out = np.zeros((index.shape[0],) + moved.shape[1:], np.int64)
    for k in range(index.shape[1]):
        out += weight[:, k].reshape(shape) * moved[index[:, k]]
    return np.moveaxis(out, 0, axis)


def smooth_scale(pixels, width, height):
    """pixels (uint8, height x width x 1 or 3) at width x height, as QImage::scaled with
    Qt::SmoothTransformation gives them (a Grayscale8 image for one channel, RGB32 for three)."""
    import numpy as np
    h, w = pixels.shape[:2]
    if (w, h) == (width, height):
        return pixels.copy()
    src = pixels.astype(np.int64)
    if pixels.shape[2] == 1 and 2 * width >= w and 2 * height >= h and w * h < (1 << 20):
        xi, xw = _bilinear_taps(w, width, True)
        yi, yw = _bilinear_taps(h, height, False)
        out = _weighted(_weighted(src, 0, yi, yw) >> 8, 1, xi, xw) >> 8
        return out.astype(np.uint8)
    xi, xw, x_grown = _area_taps(w, width)
    yi, yw, y_grown = _area_taps(h, height)
    if x_grown and y_grown:
        out = _weighted(_weighted(src, 0, yi, yw) >> 8, 1, xi, xw) >> 8
    elif x_grown:
        out = _weighted(_weighted(src, 0, yi, yw), 1, xi, xw) >> 22
    elif y_grown:
        out = _weighted(_weighted(src, 1, xi, xw), 0, yi, yw) >> 22
    else:
        out = _weighted(_weighted(src, 1, xi, xw) >> 4, 0, yi, yw) >> 24
    return out.astype(np.uint8)


def training_pixels(path, width, height, channels):
    """The picture at path as the CLI trains on it: uint8, height x width x channels."""
    import numpy as np
    from PIL import Image, ImageOps  # Debian: python3-pil
    try:
        with Image.open(path) as picture:
            picture = ImageOps.exif_transpose(picture)  # Qt honours the EXIF orientation too
            rgba = np.asarray(picture.convert("RGBA"), dtype=np.int64)
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: cannot read the picture: {e}") from None
    alpha = rgba[..., 3:4]
    rgb = (rgba[..., :3] * alpha + 255 * (255 - alpha) + 127) // 255  # on white, as ImageFile.cpp
    gray = channels == 1 or bool((rgb[..., 0] == rgb[..., 1]).all() and
                                 (rgb[..., 1] == rgb[..., 2]).all())
    if gray:
        luma = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
        pixels = np.clip(np.floor(luma + 0.5), 0, 255).astype(np.uint8)[..., None]
    else:
        pixels = rgb.astype(np.uint8)
    pixels = smooth_scale(pixels, width, height)
    if pixels.shape[2] != channels:
        pixels = np.repeat(pixels, channels, axis=2)
    return pixels


def image_data(net, path):
    task = net.task_info
    w, h, channels = int(task["width"]), int(task["height"]), int(task["channels"])
    pixels = torch.from_numpy(training_pixels(path, w, h, channels)).reshape(w * h, channels)
    return model.image_coordinates(net, w, h), pixels.to(torch.float32) / 255


def names_data(net, path):
    vocabulary = net.task_info["vocabulary"]
    contexts, targets = [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            name = line.strip()
            if net.task_info.get("case", "lower") != "keep":
                name = name.lower()
            if not name:
                continue
            for t in range(len(name) + 1):
                contexts.append(name[:t])
                if t < len(name) and name[t] not in vocabulary:
                    raise DataError(f"{path}:{number}: {name[t]!r} is not in the model's "
                                    f"vocabulary")
                targets.append(vocabulary.index(name[t]) if t < len(name) else 0)
    if not targets:
        raise DataError(f"{path}: no names")
    return model.encode_contexts(net, contexts), torch.tensor(targets)


# ---- training ----------------------------------------------------------------------------------

def save_atomically(state, path):
    """torch.save to a temporary file beside path, then renamed over it: a reader never sees a
    half-written file, and a failed save leaves nothing behind."""
    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        torch.save(state, temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


class Parallel:
    """One process, or this process's place among torchrun's (--ddp)."""

    def __init__(self, ddp):
        self.rank, self.world = 0, 1
        self.ddp = ddp
        if ddp:
            import torch.distributed as dist
            if "RANK" not in os.environ:
                raise DataError("--ddp: start it with torchrun (see --help); RANK is not set")
            dist.init_process_group("gloo")
            self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def share(self, rows):
        """This process's contiguous part of a batch's rows."""
        return torch.tensor_split(rows, self.world)[self.rank] if self.world > 1 else rows

    def mean(self, value):
        """The mean of a (detached) value over the processes."""
        if self.world == 1:
            return value
        import torch.distributed as dist
        value = value.clone()
        dist.all_reduce(value)
        return value / self.world

    def close(self):
        if self.ddp:
            import torch.distributed as dist
            dist.destroy_process_group()


def train(args, parallel):
    net = model.load(args.model)
    readers = {"tabular": table_data, "image": image_data, "names": names_data}
    if net.task not in readers:
        raise DataError(f"{args.model}: task {net.task!r} is not one train_more.py knows")
    x, y = readers[net.task](net, args.data)
    h = net.hyperparameters
    say = print if parallel.rank == 0 else (lambda *a, **k: None)
    if h.get("class_weight", "none") not in ("none", None):
        say("note: the model weighs its classes; this loop does not", file=sys.stderr)
    optimizer = model.make_optimizer(net, restore=True)
    step = int(net.training_state.get("step", 0))
    total = step + args.steps
    batch = int(h.get("batch_size", 0)) or x.shape[0]
    batch = min(batch, x.shape[0])
    clip = float(h.get("clip_norm", 0.0))
    generator = torch.Generator().manual_seed(args.seed)
    forward = net
    if parallel.ddp:
        # The wrapper only runs the forward pass; the schedule, the saved state and the optimizer
        # stay with `net` itself (DistributedDataParallel has none of its attributes).
        forward = torch.nn.parallel.DistributedDataParallel(net)

    say(f"continuing from step {step} for {args.steps} steps, the schedule planned over {total} "
        f"in total (as ironlearn-cli train --resume MODEL --steps {total}): learning rate "
        f"{model.learning_rate(net, step, total):.6g} at step {step + 1}, "
        f"{model.learning_rate(net, total - 1, total):.6g} at step {total}")
    if parallel.world > 1:
        say(f"data parallel over {parallel.world} processes: each takes its share of every batch "
            f"of {batch} rows")
    with torch.no_grad():
        say(f"step {step} loss {float(model.loss(net, net(x), y)):.9g} (all rows, before)")
    net.train()
    order, at = torch.randperm(x.shape[0], generator=generator), 0
    for _ in range(args.steps):
        if at >= x.shape[0]:
            order, at = torch.randperm(x.shape[0], generator=generator), 0
        rows = order[at:at + batch]
        at += batch
        lr = model.learning_rate(net, step, total)
        for group in optimizer.param_groups:
            group["lr"] = lr * group.get("lr_scale", 1.0)
        optimizer.zero_grad()
        mine = parallel.share(rows)
        outputs = forward(x[mine])
        if len(mine) == 0:  # a batch smaller than the processes: no rows here, zero gradients
            loss = outputs.sum() * 0.0
        else:
            # The mean over this share, weighted so that averaging over the processes (as
            # DistributedDataParallel averages the gradients) gives the mean over the batch.
            loss = model.loss(net, outputs, y[mine]) * (len(mine) * parallel.world / len(rows))
        loss.backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
        optimizer.step()
        step += 1
        say(f"step {step} loss {float(parallel.mean(loss.detach())):.9g} lr {lr:.6g}")
    net.eval()
    with torch.no_grad():
        say(f"step {step} loss {float(model.loss(net, net(x), y)):.9g} (all rows, after)")
    if parallel.rank == 0:
        save_atomically({"model": net.state_dict(), "optimizer": optimizer.state_dict(),
                         "step": step, "planned_steps": total}, args.out)
        say(f"saved {args.out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data")
    parser.add_argument("--steps", type=int, default=100, help="steps to train (default 100)")
    parser.add_argument("--model", default="model.safetensors")
    parser.add_argument("--out", default="more.pt")
    parser.add_argument("--seed", type=int, default=1, help="the batches' order (default 1)")
    parser.add_argument("--ddp", action="store_true",
                        help="data parallel under torchrun (gloo, CPU): see the notes above")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    parallel = None
    try:
        parallel = Parallel(args.ddp)
        train(args, parallel)
    except (DataError, OSError, ValueError, KeyError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"train_more.py: {message}", file=sys.stderr)
        sys.exit(1)
    finally:
        if parallel is not None:
            parallel.close()


if __name__ == "__main__":
    main()
