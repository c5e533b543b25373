"""Continue training an exported Iron Learn Studio model in PyTorch, where it stopped.

    python3 train_more.py DATA [--steps N] [--model model.safetensors] [--out more.pt]

DATA is the file the model was trained on (a CSV table, a picture, a list of names). The loss,
the optimizer with its saved state (Adam's moments and step count...), the batch size, the
gradient clipping and the learning-rate schedule are the model file's, so the first step here
is the step after the studio's last. Every row of DATA is trained on (the studio held some out
for validation; split them off first if you need them). Prints the loss before the first step
and after each; saves the weights and the optimizer state with torch.save.

On several GPUs or machines: wrap the module in torch.nn.parallel.DistributedDataParallel after
torch.distributed.init_process_group("nccl"), give each process its share of the batches (a
DistributedSampler), and start it with `torchrun --nproc_per_node=GPUS train_more.py DATA`.
"""
import argparse
import csv
import sys

import torch

import model


def table_data(net, path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        text = f.read()
    dialect = csv.Sniffer().sniff(text.split("\n", 1)[0], delimiters=",;\t")
    rows = list(csv.DictReader(text.splitlines(), dialect=dialect))
    task = net.task_info
    x = model.encode_rows(net, rows)
    if task["kind"] == "regression":
        values = torch.tensor([[float(model._column(r, t)) for t in task["targets"]] for r in rows])
        return x, (values - net.target_offset) / net.target_scale
    classes = task["classes"]
    labels = []
    for r in rows:
        label = model._column(r, task["target"]).strip()
        if label not in classes:
            label = next(c for c in classes if model._as_float(c) == model._as_float(label))
        labels.append(classes.index(label))
    y = torch.tensor(labels)
    return x, (y.to(torch.float32)[:, None] if task["kind"] == "binary" else y)


def image_data(net, path):
    from PIL import Image  # Debian: python3-pil
    task = net.task_info
    picture = Image.open(path).convert("RGBA")
    white = Image.new("RGBA", picture.size, (255, 255, 255, 255))
    picture = Image.alpha_composite(white, picture).convert("RGB")
    if picture.size != (task["width"], task["height"]):
        picture = picture.resize((task["width"], task["height"]), Image.BILINEAR)
    pixels = torch.tensor(list(picture.getdata()), dtype=torch.float64)
    if task["channels"] == 1:
        pixels = torch.round(pixels @ torch.tensor([0.299, 0.587, 0.114], dtype=torch.float64))[:, None]
    return model.image_coordinates(net, task["width"], task["height"]), (pixels / 255).float()


def names_data(net, path):
    vocabulary = net.task_info["vocabulary"]
    contexts, targets = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            name = line.strip()
            if net.task_info.get("case", "lower") != "keep":
                name = name.lower()
            if not name:
                continue
            for t in range(len(name) + 1):
                contexts.append(name[:t])
                targets.append(vocabulary.index(name[t]) if t < len(name) else 0)
    return model.encode_contexts(net, contexts), torch.tensor(targets)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--model", default="model.safetensors")
    parser.add_argument("--out", default="more.pt")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    net = model.load(args.model)
    x, y = {"tabular": table_data, "image": image_data, "names": names_data}[net.task](net, args.data)
    h = net.hyperparameters
    if h.get("class_weight", "none") not in ("none", None):
        print("note: the model weighs its classes; this loop does not", file=sys.stderr)
    optimizer = model.make_optimizer(net, restore=True)
    step = int(net.training_state.get("step", 0))
    batch = int(h.get("batch_size", 0)) or x.shape[0]
    clip = float(h.get("clip_norm", 0.0))
    generator = torch.Generator().manual_seed(args.seed)

    with torch.no_grad():
        print(f"step {step} loss {float(model.loss(net, net(x), y)):.6f} (all rows, before)")
    net.train()
    order, at = torch.randperm(x.shape[0], generator=generator), 0
    for _ in range(args.steps):
        if at >= x.shape[0]:
            order, at = torch.randperm(x.shape[0], generator=generator), 0
        rows = order[at:at + batch]
        at += batch
        lr = model.learning_rate(net, step)
        for group in optimizer.param_groups:
            group["lr"] = lr * group.get("lr_scale", 1.0)
        optimizer.zero_grad()
        loss = model.loss(net, net(x[rows]), y[rows])
        loss.backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
        optimizer.step()
        step += 1
        print(f"step {step} loss {float(loss):.6f} lr {lr:.6g}")
    net.eval()
    with torch.no_grad():
        print(f"step {step} loss {float(model.loss(net, net(x), y)):.6f} (all rows, after)")
    torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict(), "step": step},
               args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
