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

# @@ train_more.py  (above: this kind's part of model.py; below: its part of train_more.py)

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


READERS["tabular"] = table_data
