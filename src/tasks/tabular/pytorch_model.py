# ---- tables -------------------------------------------------------------------------------------

_MISSING = {"", "na", "n/a", "nan", "null"}


def _column(row, name):
    if name in row:
        return row[name]
    lowered = {k.lower(): k for k in row}
    if name.lower() in lowered:
        return row[lowered[name.lower()]]
    raise KeyError(f"no column {name!r}")


def _is_missing(text):
    """A missing cell as the CSV reader sees it: empty, NA, N/A, NaN, null, or a number that
    reads as NaN ("+nan", "-nan")."""
    if text.lower() in _MISSING:
        return True
    number = _as_float(text)
    return number is not None and math.isnan(number)


def missing_fill(net):
    """Per feature, the value a missing cell stands for (a model trained with missing values
    filled with the column mean: the training rows' mean, in the file's units), or None."""
    task = net.task_info
    return task.get("missing_fill") if task.get("missing") == "mean" else None


def encode_rows(net, rows):
    """Rows (column name -> text, as csv.DictReader gives them) as the network's normalised
    inputs: numbers as (value - offset) / scale, text columns one-hot over their categories.
    A missing number (empty, NA, NaN...) is filled with missing_fill(net) where the model has
    it, as `ironlearn-cli predict` fills it; otherwise, and for a missing text, ValueError."""
    task = net.task_info
    fill = missing_fill(net)
    out = []
    for index, row in enumerate(rows):
        values = []
        for f, (name, categories) in enumerate(zip(task["features"], task["feature_categories"])):
            text = (_column(row, name) or "").strip()
            if _is_missing(text):
                if fill is not None and not categories:
                    values.append(float(fill[f]))
                    continue
                raise ValueError(f"row {index + 1}, column {name!r}: missing value")
            if categories:
                if text not in categories:
                    try:
                        number = float(text)
                        text = next(c for c in categories if _as_float(c) == number)
                    except (ValueError, StopIteration):
                        raise ValueError(f"row {index + 1}, column {name!r}: {text!r} is not "
                                         f"one of {categories}") from None
                values += [1.0 if c == text else 0.0 for c in categories]
            else:
                values.append(float(text))
        out.append(values)
    x = torch.tensor(out, dtype=torch.float32)
    return (x - net.input_offset) / net.input_scale


def _as_float(text):
    try:
        return float(text)
    except ValueError:
        return None


def decode(net, outputs):
    """Network outputs as predictions in the file's units: a list of dicts, per row,
    {target: value} for regression; {target: class, "p_" + class: probability} for classes."""
    task = net.task_info
    kind, target = task["kind"], task["target"]
    z = outputs.detach().to(torch.float64)
    results = []
    if kind == "regression":
        values = z * net.target_scale.to(torch.float64) + net.target_offset.to(torch.float64)
        for row in values:
            results.append({t: float(v) for t, v in zip(task["targets"], row)})
        return results
    classes = task["classes"]
    if kind == "binary":
        p1 = torch.sigmoid(z[:, 0])
        probabilities = torch.stack([1 - p1, p1], dim=1)
        chosen = (z[:, 0] > 0).to(torch.int64)
    else:
        probabilities = torch.softmax(z, dim=1)
        chosen = torch.argmax(z, dim=1)
    for p, c in zip(probabilities, chosen):
        result = {target: classes[int(c)]}
        result.update({"p_" + name: float(v) for name, v in zip(classes, p)})
        results.append(result)
    return results


def predict_rows(net, rows):
    """Predictions for table rows (column name -> text), in the file's units: class names and
    their probabilities for classes, denormalised values for regression."""
    rows = list(rows)
    with torch.no_grad():
        return decode(net, net(encode_rows(net, rows)))


__all__ += ["encode_rows", "predict_rows", "missing_fill"]
