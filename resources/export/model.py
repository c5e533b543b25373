"""An Iron Learn Studio model as a PyTorch module.

Written by `ironlearn-cli export MODEL --to pytorch` (or the studio's File > Export Model) next
to the model file it reads, `model.safetensors`. It needs only PyTorch: the safetensors file is
read here, and every layer and every preprocessing step of the studio is written out below in
plain PyTorch, so the predictions match `ironlearn-cli predict` / `render` / `evaluate`.

    import model
    net = model.load("model.safetensors")         # the nn.Module, in evaluation mode
    net.task                                      # "tabular", "image" or "names"

    # tables: rows as csv.DictReader gives them (column name -> text); a model trained with
    # missing values filled with the column mean fills an empty number cell as predict does
    model.predict_rows(net, [{"sepal_length_cm": "5.1", ...}])   # -> [{"species": "setosa", "p_setosa": ...}]
    # images: intensities in [0, 1], height x width x channels, at any size, a strip of rows
    # at a time: memory is the output plus a fixed working set (see render)
    model.render(net, 1024, 768)
    # names: next-character probabilities after a context, and generated names
    model.next_char_probabilities(net, ["em"]);  model.generate(net, 10, temperature=0.8)

    # continue training (train_more.py shows a whole loop): the optimizer, its state restored
    optimizer = model.make_optimizer(net, restore=True)
    loss = model.loss(net, net(inputs), targets)

The network maps the *normalised* inputs to the raw outputs (logits for classes, normalised
values for regression), exactly as the studio trains it; `encode_rows` / `decode` and the
helpers above do the preprocessing, with the statistics of the file as plain tensors
(`net.input_offset`, `net.input_scale`, ...).
"""
import json
import math
import struct

import torch
from torch import nn
import torch.nn.functional as F

# Each kind of task's section below adds its functions.
__all__ = ["load", "read_safetensors", "IronLearnNet", "make_optimizer", "learning_rate", "loss"]

_DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16,
           "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32, "U8": torch.uint8}


def read_safetensors(path):
    """The tensors of a safetensors file (name -> tensor) and its metadata (name -> string)."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    metadata = header.pop("__metadata__", {}) or {}
    base = 8 + size
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = bytearray(data[base + begin:base + end])
        t = torch.frombuffer(raw, dtype=_DTYPES[entry["dtype"]]) if raw else \
            torch.zeros(0, dtype=_DTYPES[entry["dtype"]])
        tensors[name] = t.reshape(entry["shape"]).clone()
    return tensors, metadata


# ---- layers ----------------------------------------------------------------------------------
# Every layer sees rows of `width` numbers read as `positions` groups (1 unless after a merge):
# the per-position layers (dense, layernorm, batchnorm) treat each group as a row of its own.

def _per_position(x, positions):
    return x.reshape(x.shape[0] * positions, x.shape[1] // positions)


# The element-wise activations: name -> (f(x, a), the argument a's default as the layer language
# writes it, or None). The export writes this table from the layer registry
# (src/engine/layers/ActivationLayers.cpp), so it holds every activation of the program that
# wrote it.
ACTIVATIONS = {}  # @ACTIVATIONS@


class Activation(nn.Module):
    def __init__(self, kind, argument):
        super().__init__()
        self.kind, self.argument = kind, argument
        self.f = ACTIVATIONS[kind][0]

    def extra_repr(self):
        return self.kind + (f", {self.argument:g}" if ACTIVATIONS[self.kind][1] else "")

    def forward(self, x, inputs):
        return self.f(x, self.argument)


class Shape:
    """What the next layer sees: rows of `width` numbers, read as `positions` groups of
    `position_width` (after an embedding or a merge; 0 otherwise); the network's own input
    width (skip reads it) and the names' vocabulary (embedding's default)."""

    def __init__(self, width, vocab):
        self.width, self.positions, self.position_width = width, 1, 0
        self.input_width, self.vocab = width, vocab

    @property
    def channels(self):
        return self.width // self.positions


# The other layers: each type's module, written from the layer registry (the type's PyTorch form,
# src/engine/layers/*.cpp), with a build(args, out, shape) that makes it from the layer item's
# arguments and the shape before it, and moves the shape past it. LAYERS: name -> module.
LAYERS = {}  # @LAYERS@


def _numbers(spec):
    parts = spec.split(":")
    return parts[0], [p for p in parts[1:]]


def _real(text, default):
    """A real argument of the layer language, as the studio reads it: a float32."""
    if not text:
        return default
    return struct.unpack("<f", struct.pack("<f", float(text)))[0]


class IronLearnNet(nn.Module):
    """The layer stack of a model file, as the studio runs it. forward(x): x is the normalised
    input (tables), the coordinates (images) or the context ids (names), one row per sample."""

    def __init__(self, architecture, task):
        super().__init__()
        self.architecture, self.task_info = architecture, task
        self.task = task.get("task", "")
        shape = Shape(int(architecture["input_width"]), architecture.get("vocab"))
        self.input_width = shape.width
        layers = []
        for item in architecture["layers"]:
            kind, args = _numbers(item["spec"])
            out = int(item["output_width"])
            if kind in ACTIVATIONS:
                default = ACTIVATIONS[kind][1]
                layer = Activation(kind, _real(args[0] if args else "", _real(default or "0", 0)))
            elif kind in LAYERS:
                layer = LAYERS[kind].build(args, out, shape)
            else:
                raise ValueError(f"layer {item['spec']!r}: not known to this exporter")
            layers.append(layer)
            if shape.width != out:
                raise ValueError(f"layer {item['spec']!r}: width {shape.width}, the file says {out}")
        self.layers = nn.ModuleList(layers)
        self._task_tensors(task)

    def _task_tensors(self, task):
        def buffer(name, values):
            self.register_buffer(name, torch.tensor(values, dtype=torch.float32), persistent=False)
        if self.task == "tabular":
            buffer("input_offset", task.get("input_offset", []))
            buffer("input_scale", task.get("input_scale", []))
            buffer("target_offset", task.get("target_offset", []))
            buffer("target_scale", task.get("target_scale", []))

    def forward(self, x):
        inputs = x
        for layer in self.layers:
            x = layer(x, inputs)
        return x


# ---- the model file ---------------------------------------------------------------------------

def load(path="model.safetensors"):
    """The model in `path` as an IronLearnNet in evaluation mode, with its preprocessing
    (net.task_info, the tabular statistics as buffers) and the file's training state
    (net.hyperparameters, net.training_state, net.optimizer_state for make_optimizer)."""
    tensors, meta = read_safetensors(path)
    if meta.get("format") != "ironlearn":
        raise ValueError(f"{path}: not an Iron Learn model (no \"format\": \"ironlearn\")")
    architecture = json.loads(meta["architecture"])
    task = json.loads(meta.get("task", "{}"))
    net = IronLearnNet(architecture, task)
    state = {}
    for name, value in net.state_dict().items():
        if name not in tensors:
            raise ValueError(f"{path}: no tensor {name}")
        state[name] = tensors[name].reshape(value.shape)
    net.load_state_dict(state, strict=True)
    net.hyperparameters = json.loads(meta.get("hyperparameters", "{}"))
    net.training_state = json.loads(meta.get("training", "{}"))
    net.optimizer_name = meta.get("optimizer", "")
    net.optimizer_state = {k[len("optimizer."):]: v for k, v in tensors.items()
                           if k.startswith("optimizer.")}
    net.eval()
    return net


# @KINDS@ (each kind of task's section: its preprocessing and outputs)


# ---- training further ---------------------------------------------------------------------------

def _groups(net):
    """The trainable parameters in the file's order (that of the flat optimizer state), split
    into the optimizer's groups: the hash grid tables have their own settings."""
    grid, other = [], []
    for module in net.layers:
        for p in module.parameters(recurse=False):
            (grid if isinstance(module, HashGrid) else other).append(p)
    return other, grid


def make_optimizer(net, restore=True):
    """The optimizer the model was trained with (torch.optim.Adam, AdamW, SGD, RMSprop or Adagrad
    with the file's settings), its state (moments, step count) taken from the file when restore
    is set, so
    training goes on where it stopped."""
    config = net.hyperparameters.get("optimizer", {})
    kind = config.get("kind", "adam")
    lr = learning_rate(net, int(net.training_state.get("step", 0)))
    other, grid = _groups(net)

    def settings(values):
        wd = float(values.get("weight_decay", 0.0))
        if kind in ("adam", "adamw"):
            return {"betas": (float(values.get("beta1", 0.9)), float(values.get("beta2", 0.999))),
                    "eps": float(values.get("eps", 1e-8)), "weight_decay": wd}
        if kind == "rmsprop":
            return {"alpha": float(values.get("rho", 0.99)), "eps": float(values.get("eps", 1e-8)),
                    "weight_decay": wd}
        if kind == "adagrad":
            return {"eps": float(values.get("eps", 1e-10)), "weight_decay": wd}
        return {"momentum": float(values.get("momentum", 0.0)) if kind == "momentum" else 0.0,
                "weight_decay": wd}

    groups = [dict(params=other, lr=lr, **settings(config))]
    if grid:
        own = dict(config)
        own.update(config.get("groups", {}).get("grid_tables", {}))
        scale = float(own.get("lr", 0.0)) / float(net.hyperparameters["schedule"]["lr_max"]) \
            if float(own.get("lr", 0.0)) > 0 else 1.0
        groups.append(dict(params=grid, lr=lr * scale, lr_scale=scale, **settings(own)))
    cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "rmsprop": torch.optim.RMSprop,
           "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD,
           "momentum": torch.optim.SGD}[kind]
    optimizer = cls(groups)
    if restore and net.optimizer_state:
        _restore_state(net, optimizer, kind, other + grid)
    return optimizer


def _restore_state(net, optimizer, kind, params):
    names = {"adam": ("m", "v"), "adamw": ("m", "v"), "rmsprop": ("v",), "adagrad": ("sum",),
             "momentum": ("velocity",), "sgd": ()}[kind]
    torch_names = {"m": "exp_avg", "v": "exp_avg_sq" if kind != "rmsprop" else "square_avg",
                   "velocity": "momentum_buffer", "sum": "sum"}
    step = int(net.training_state.get("step", 0))
    offset = 0
    for p in params:
        state = optimizer.state[p]
        for name in names:
            flat = net.optimizer_state[name]
            state[torch_names[name]] = flat[offset:offset + p.numel()].reshape(p.shape).clone()
        if kind in ("adam", "adamw", "adagrad"):
            state["step"] = torch.tensor(float(step))
        elif kind == "rmsprop":
            state["step"] = step
        offset += p.numel()


def learning_rate(net, step, total=None):
    """The schedule's learning rate at optimizer step `step` (0-based), as the studio plans it:
    constant, step decay or a cosine from lr_max to lr_min over `total` steps (default: the
    steps the file's run planned), the first warmup_steps scaled up linearly. Training on past
    a finished run: give the new total, as `ironlearn-cli train --resume MODEL --steps TOTAL`
    does (the cosine is planned again over TOTAL steps, picking up at step `step`)."""
    s = net.hyperparameters.get("schedule", {})
    lr_max, lr_min = float(s.get("lr_max", 1e-3)), float(s.get("lr_min", 0.0))
    warmup = int(s.get("warmup_steps", 0))
    if total is None:
        total = int(net.training_state.get("planned_steps", 0))
    total = max(1, int(total))
    kind = s.get("kind", "cosine")
    lr = lr_max
    if kind == "step":
        lr = lr_max * float(s.get("gamma", 0.5)) ** (step // max(1, int(s.get("step_every", 1))))
    elif kind == "cosine":
        t = min(max(float(step), 0.0), float(total))
        lr = lr_min + (lr_max - lr_min) * 0.5 * (1.0 + math.cos(math.pi * t / total))
    if warmup > 0 and step < warmup:
        lr *= (step + 1) / warmup
    return lr


def loss(net, outputs, targets):
    """The model's training loss (mse, mae, bce or cross-entropy with its label smoothing) of
    outputs against targets (normalised values, 0/1, or class indices)."""
    h = net.hyperparameters
    kind = h.get("loss", "mse")
    if kind == "mse":
        return F.mse_loss(outputs, targets)
    if kind == "mae":
        return F.l1_loss(outputs, targets)
    if kind == "bce":
        return F.binary_cross_entropy_with_logits(outputs, targets)
    return F.cross_entropy(outputs, targets.to(torch.int64),
                           label_smoothing=float(h.get("label_smoothing", 0.0)))
