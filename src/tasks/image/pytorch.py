# ---- images -------------------------------------------------------------------------------------

def image_coordinates(net, width, height, rows=None):
    """The network inputs of a width x height picture, row-major, (x, y) at pixel centres over
    the training picture's field of view (its longer side spans [-1, 1]). rows: a range of
    picture rows (default: all of them), for rendering a strip at a time."""
    w, h = net.task_info["width"], net.task_info["height"]
    longest = max(w, h)
    rows = range(height) if rows is None else rows
    i = torch.arange(width, dtype=torch.float64)
    j = torch.arange(rows.start, rows.stop, dtype=torch.float64)
    x = ((2 * i + 1) / width - 1) * (w / longest)
    y = ((2 * j + 1) / height - 1) * (h / longest)
    yy, xx = torch.meshgrid(y, x, indexing="ij")
    return torch.stack([xx.reshape(-1), yy.reshape(-1)], dim=1).to(torch.float32)


# Pixels per network call in render(): the CLI's tile size (ImageTask.h, renderImage).
RENDER_CHUNK_PIXELS = 65536


def render_working_set(net):
    """Bytes render() needs beyond its output: one strip of RENDER_CHUNK_PIXELS pixels (its
    coordinates, float64 while computed: 40 bytes a pixel; at most four live float32 tensors as
    wide as the widest layer: a layer's input, its output and two temporaries such as the hash
    grid's corner weights or the Fourier features' sin and cos), plus 16 MiB for the memory
    allocator's and PyTorch's own bookkeeping."""
    widest = max(_layer_widths(net))
    return RENDER_CHUNK_PIXELS * (40 + 4 * 4 * widest) + (16 << 20)


def _layer_widths(net):
    yield int(net.architecture["input_width"])
    for item in net.architecture["layers"]:
        yield int(item["output_width"])
    for module in net.layers:  # the hash grid's per-level gathers: 4 corners x features
        if isinstance(module, HashGrid):
            yield 4 * module.features


def render(net, width=None, height=None, clamp=True):
    """The picture at any size: height x width x channels intensities (clamped to [0, 1] unless
    clamp=False; ironlearn-cli render writes round(255 v)).

    Rendered a strip of rows at a time (about RENDER_CHUNK_PIXELS pixels) under
    torch.inference_mode, so the memory it takes is the output plus one strip's working set:
        peak bytes <= 4 * width * height * channels + render_working_set(net)
    (render_working_set: RENDER_CHUNK_PIXELS * (40 + 16 * the widest layer) + 16 MiB, a few tens
    of MB), whatever the size: 8192 x 8192 gray is 256 MiB of output."""
    width = int(width or net.task_info["width"])
    height = int(height or net.task_info["height"])
    if width < 1 or height < 1:
        raise ValueError(f"render: size {width}x{height}: each side must be at least 1")
    channels = int(net.task_info.get("channels", 3))
    out = torch.empty(height, width, channels, dtype=torch.float32)
    strip = max(1, RENDER_CHUNK_PIXELS // width)
    with torch.inference_mode():
        for top in range(0, height, strip):
            rows = range(top, min(height, top + strip))
            values = net(image_coordinates(net, width, height, rows))
            if clamp:
                values = torch.nan_to_num(values, nan=0.0).clamp_(0.0, 1.0)
            out[rows.start:rows.stop] = values.reshape(len(rows), width, channels)
    return out


__all__ += ["image_coordinates", "render", "render_working_set"]

# @@ train_more.py  (above: this kind's part of model.py; below: its part of train_more.py)

# ---- pictures, resized as the CLI resizes them ------------------------------------------------
# The CLI (src/io/ImageFile.cpp, src/tasks/image/ImageTask.cpp) composites on white, keeps a
# picture whose pixels are all gray as one 8-bit channel (Rec. 601 luma, rounded), and resizes
# with QImage::scaled(Qt::SmoothTransformation) of Qt 6. That is, in Qt 6.4:
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


READERS["image"] = image_data
