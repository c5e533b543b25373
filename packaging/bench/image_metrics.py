"""The image task's training grid and quality measures in NumPy, for torch_image.py: the same
coordinates, intensities, PSNR and SSIM as src/tasks/image/ImageQuality.cpp, so a PyTorch network and
ours are measured alike. Also reads an Iron Learn model file (safetensors) for the cross-check.

Only NumPy and Pillow: no torch here, so this module may be imported before torch's thread
variables are set."""

import json
import struct

import numpy as np
from PIL import Image


def load_target(path):
    """The picture as the image task trains on it: (H, W, C) float32 in [0, 1], C = 1 for a gray
    PNG (what race writes for a gray training picture) and 3 otherwise, each byte / 255 in
    float32 as imageIntensities() computes it."""
    image = Image.open(path)
    image.load()
    if image.mode in ("L", "I;16", "I"):
        image = image.convert("L")
    else:
        image = image.convert("RGB")
    a = np.asarray(image, dtype=np.float32)
    if a.ndim == 2:
        a = a[:, :, None]
    return a / np.float32(255)


def coordinates(width, height):
    """(H * W, 2) float32 inputs at pixel centres, row by row: x = (2i + 1 - W) / L,
    y = (2j + 1 - H) / L, L = max(W, H) (ImageGeometry's mapping, computed in double as
    imageCoordinates() does, then rounded to float)."""
    side = float(max(width, height))
    ex, ey = width / side, height / side
    xs = ((2.0 * np.arange(width) + 1) / width - 1) * ex
    ys = ((2.0 * np.arange(height) + 1) / height - 1) * ey
    gx, gy = np.meshgrid(xs, ys)  # (H, W): j down the rows, i along them
    return np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)


def clamped(values):
    """Network outputs as the picture shows them: NaN -> 0, then clamped to [0, 1]."""
    v = np.nan_to_num(np.asarray(values, dtype=np.float32), nan=0.0, posinf=1.0, neginf=0.0)
    return np.clip(v, 0.0, 1.0)


def psnr_db(pred, target):
    """10 log10(1 / MSE) over every intensity, the differences in double (psnrDb())."""
    d = pred.astype(np.float64).ravel() - target.astype(np.float64).ravel()
    mse = float(np.mean(d * d))
    if np.isnan(mse):
        return float("nan")
    return float("inf") if mse == 0 else 10.0 * np.log10(1.0 / mse)


def ssim_index(pred, target):
    """Mean SSIM (Wang et al. 2004) of (H, W, C) pictures as ssimIndex() computes it: a Gaussian
    window of n = min(11, W, H) taps, sigma 1.5, over the positions where it fits whole (no
    padding), C1 = 0.01^2 and C2 = 0.03^2 for a dynamic range of 1, averaged over channels."""
    h, w, channels = target.shape
    n = min(11, w, h)
    d = np.arange(n) - (n - 1) / 2.0
    kernel = np.exp(-d * d / (2 * 1.5 * 1.5))
    kernel /= kernel.sum()
    window = np.lib.stride_tricks.sliding_window_view

    def smooth(img):  # separable: along the rows, then down the columns
        rows = window(img, n, axis=1) @ kernel
        return window(rows, n, axis=0) @ kernel

    c1, c2 = 0.01 ** 2, 0.03 ** 2
    total = 0.0
    for c in range(channels):
        a = pred[:, :, c].astype(np.float64)
        b = target[:, :, c].astype(np.float64)
        ma, mb = smooth(a), smooth(b)
        va = smooth(a * a) - ma * ma
        vb = smooth(b * b) - mb * mb
        cov = smooth(a * b) - ma * mb
        s = ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
        total += float(s.mean())
    return total / channels


def read_safetensors(path):
    """(tensors, metadata) of a safetensors file: {name: float32 array}, {key: str}. The format:
    an 8-byte little-endian header length, a JSON header of dtype/shape/offsets, the data."""
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + length])
    base = 8 + length
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} is {t['dtype']}, not F32")
        start, end = t["data_offsets"]
        tensors[name] = np.frombuffer(blob[base + start:base + end], dtype="<f4").reshape(t["shape"])
    return tensors, metadata
