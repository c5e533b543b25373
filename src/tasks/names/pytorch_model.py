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
