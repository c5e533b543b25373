# ---- names --------------------------------------------------------------------------------------

def encode_contexts(net, texts):
    """Each text's last `context` characters as ids, oldest first, padded on the left with the
    boundary id 0 (a name starts after `context` boundaries)."""
    task = net.task_info
    vocabulary, context = task["vocabulary"], int(task["context"])
    ids = {c: i for i, c in enumerate(vocabulary)}
    rows = []
    for text in texts:
        if task.get("case", "lower") != "keep":
            text = text.lower()
        try:
            window = [ids[c] for c in text][-context:] if text else []
        except KeyError as e:
            raise ValueError(f"{text!r}: {e.args[0]!r} is not in the vocabulary") from None
        rows.append([0] * (context - len(window)) + window)
    return torch.tensor(rows, dtype=torch.float32)


def next_char_probabilities(net, texts, temperature=1.0):
    """For each text, the probability of each vocabulary entry coming next (entry 0: the end)."""
    t = min(max(float(temperature), 0.1), 3.0)
    with torch.no_grad():
        return torch.softmax(net(encode_contexts(net, texts)) / t, dim=1)


def generate(net, count, temperature=1.0, seed=None, max_length=64):
    """count new names, sampled one character at a time (PyTorch's random numbers: the same
    model gives other names than the studio's sampler)."""
    generator = torch.Generator()
    if seed is not None:
        generator.manual_seed(seed)
    vocabulary = net.task_info["vocabulary"]
    names = []
    for _ in range(count):
        name = ""
        while len(name) < max_length:
            p = next_char_probabilities(net, [name], temperature)[0]
            if not name:
                p[0] = 0  # a name has at least one character
            i = int(torch.multinomial(p, 1, generator=generator))
            if i == 0:
                break
            name += vocabulary[i]
        names.append(name)
    return names


__all__ += ["encode_contexts", "next_char_probabilities", "generate"]

# @@ train_more.py  (above: this kind's part of model.py; below: its part of train_more.py)

# ---- names, one a line, as ironlearn-cli reads them (src/io/NamesFile.cpp) ----------------------

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


READERS["names"] = names_data
