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
