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
