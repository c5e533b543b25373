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


# Each kind of task's reader of its data, by the kind's name (net.task): read(net, path) gives the
# inputs and targets of every row. The kinds' sections below fill it.
READERS = {}

# @KINDS@ (each kind of task's reader of its data, in READERS)


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
    if net.task not in READERS:
        raise DataError(f"{args.model}: task {net.task!r} is not one train_more.py knows")
    x, y = READERS[net.task](net, args.data)
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
