#!/usr/bin/env python3
"""Source files over 600 lines and functions over 80 lines must say why, in one line at their top:
a `// Long: <reason>` comment (for a file, in its leading comment block; for a function, in the
comment block right above its signature). Prints each one that does not and exits 1; prints the
ones that do with --list. Run by CTest as testSourceSizes over src/ and kernels/.

The function finder reads clang-formatted code: a body opens with a `{` alone on its line, at the
indent of the signature above it (the project's .clang-format puts function braces there and no
other kind of brace), and closes with the `}` at the same indent.

    packaging/source_sizes.py [--list] [ROOT...]     (default: src kernels)
"""
import os
import re
import sys

MAX_FILE = 600
MAX_FUNCTION = 80
SUFFIXES = (".cpp", ".h", ".cu", ".cuh")
NOT_FUNCTIONS = re.compile(r"^(namespace|class|struct|enum|union|if|for|while|switch|else|do|"
                           r"case|try|catch|return|extern)\b")


def has_reason(lines, first):
    """True when the comment block ending just above line `first` holds a `// Long:` line."""
    i = first - 1
    if i >= 0 and lines[i].strip().startswith("template <"):
        i -= 1
    while i >= 0 and lines[i].strip().startswith("//"):
        if lines[i].strip().startswith("// Long:"):
            return True
        i -= 1
    return False


def leading_reason(lines):
    for line in lines:
        if not line.strip().startswith("//"):
            return False
        if line.strip().startswith("// Long:"):
            return True
    return False


def functions(lines):
    """(first line, line count, signature) of every function body in clang-formatted code."""
    i = 1
    while i < len(lines):
        m = re.match(r"^( *)\{\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent = m.group(1)
        j = i - 1
        while j > 0 and not re.match("^" + indent + r"\S", lines[j]):
            j -= 1
        signature = " ".join(line.strip() for line in lines[j:i])
        head = signature.split("(")[0]
        if NOT_FUNCTIONS.match(signature) or "(" not in signature or "=" in head:
            i += 1
            continue
        k = i + 1
        while k < len(lines) and not re.match("^" + indent + r"\}", lines[k]):
            k += 1
        yield j, k - j + 1, signature
        i = k + 1


def main(argv):
    listing = "--list" in argv
    roots = [a for a in argv if a != "--list"] or ["src", "kernels"]
    missing, reasoned = [], []
    for root in roots:
        for folder, _, names in sorted(os.walk(root)):
            for name in sorted(names):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                count = len(lines) - (lines[-1] == "")
                if count > MAX_FILE:
                    entry = f"{path}: {count} lines"
                    (reasoned if leading_reason(lines) else missing).append(entry)
                for first, length, signature in functions(lines):
                    if length > MAX_FUNCTION:
                        entry = f"{path}:{first + 1}: {length} lines: {signature[:70]}"
                        (reasoned if has_reason(lines, first) else missing).append(entry)
    if listing:
        print("\n".join(reasoned))
    if missing:
        print(f"over {MAX_FILE} lines (a file) or {MAX_FUNCTION} (a function) with no "
              "'// Long: <reason>' at its top:")
        print("\n".join("  " + m for m in missing))
        return 1
    print(f"{len(reasoned)} long files and functions, each with its reason")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
