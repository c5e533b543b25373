#!/usr/bin/env python3
"""Writes a man page from a program's own --help, so that the two cannot drift apart.

    manpage.py --program PATH --name NAME --summary TEXT --out FILE.1 [--commands] [--env K=V]

The page is the program's --help text (and, with --commands, each command's `NAME CMD --help`),
set in man(7) markup: "Options:" and "Arguments:" blocks become tagged paragraphs, the usage line
the SYNOPSIS, the first paragraph the DESCRIPTION, and blocks headed "Exit status:",
"Examples:", "Environment:" and "Files:" their own sections. Everything else keeps its lines,
unfilled. The build runs this on the programs it built (packaging/CMakeLists.txt).
"""
import argparse
import datetime
import os
import re
import subprocess
import sys

SECTIONS = {"exit status": "EXIT STATUS", "examples": "EXAMPLES", "environment": "ENVIRONMENT",
            "files": "FILES"}


def run(program, args, env):
    result = subprocess.run([program] + args, capture_output=True, text=True, env=env, timeout=60)
    text = result.stdout if result.stdout.strip() else result.stderr
    if result.returncode != 0 or not text.strip():
        sys.exit(f"manpage.py: {program} {' '.join(args)} exited {result.returncode}:\n{text}")
    return text


def escape(text):
    """Text for a man page line: backslashes escaped, option dashes as minus signs, and no
    line starting with a control character."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"(?<![\w-])-(?=[-\w])", r"\\-", text)
    text = re.sub(r"(?<=\\-)-", r"\\-", text)
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def blocks(text):
    """Splits help text into (heading, lines) blocks at blank lines. A block's heading is its
    first line when that line ends with a colon and is not indented."""
    out = []
    for chunk in re.split(r"\n\s*\n", text.strip("\n")):
        lines = chunk.split("\n")
        first = lines[0]
        if not first.startswith(" ") and first.rstrip().endswith(":") and len(lines) > 1:
            out.append((first.rstrip()[:-1], lines[1:]))
        elif not first.startswith(" ") and re.match(r"^[A-Z][\w ]*: ", first) and len(lines) == 1:
            head, rest = first.split(": ", 1)  # "Exit status: 0 success, ..."
            out.append((head, ["  " + rest]))
        else:
            out.append((None, lines))
    return out


def tagged(lines):
    """Options and arguments ("  --name <V>   what it does", continued further in) as .TP
    paragraphs."""
    items = []
    for line in lines:
        m = re.match(r"^\s{1,4}(\S.*?)(?:\s{2,}(\S.*))?$", line)
        deeper = len(line) - len(line.lstrip()) > 6
        if m and not deeper:
            items.append([m.group(1), [m.group(2)] if m.group(2) else []])
        elif items:
            items[-1][1].append(line.strip())
        else:
            items.append(["", [line.strip()]])
    out = []
    for tag, words in items:
        out += [".TP", "\\fB" + escape(tag) + "\\fR" if tag else "", escape(" ".join(words))]
    return [line for line in out if line != ""]


def verbatim(lines):
    return [".PP", ".nf"] + [escape(line) for line in lines] + [".fi"]


def body(text, skip_usage=True):
    """The man markup of one help text, less its usage line; returns (usage, description,
    sections, rest) where sections maps a SECTIONS title to its lines."""
    usage, description, rest, sections = "", [], [], {}
    for head, lines in blocks(text):
        if head is None and lines[0].startswith("Usage:") or head == "Usage" and not usage:
            usage = lines[0][len("Usage:"):].strip() if head is None else lines[0].strip()
            if len(lines) > 1 and head is None:
                description += lines[1:]
            continue
        if head is None and not description and not rest and not lines[0].startswith(" "):
            description += lines
            continue
        key = (head or "").lower()
        if key in SECTIONS:
            sections.setdefault(SECTIONS[key], []).extend(lines)
        elif head in ("Options", "Arguments"):
            rest += [".PP", "\\fI" + head + ":\\fR"] + tagged(lines)
        elif head is not None:
            rest += [".PP", "\\fI" + escape(head) + ":\\fR"] + verbatim(lines)[1:]
        else:
            rest += verbatim(lines)
    return usage, description, sections, rest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--commands", action="store_true",
                    help="the program has commands: a section for each, from CMD --help")
    ap.add_argument("--see-also", default="")
    ap.add_argument("--version", default="")
    ap.add_argument("--date", default="", help="YYYY-MM-DD for the page's footer (the release)")
    args = ap.parse_args()

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", COLUMNS="80", LC_ALL="C.UTF-8")
    top = run(args.program, ["--help"], env)
    usage, description, sections, rest = body(top)

    date = args.date or datetime.date.today().isoformat()
    name = args.name
    page = [
        f'.\\" Generated by packaging/linux/manpage.py from `{name} --help`: edit the program\'s',
        '.\\" help text, not this file.',
        f'.TH {name.upper()} 1 "{date}" "{name} {args.version}" "User Commands"',
        ".SH NAME", f"{escape(name)} \\- {escape(args.summary)}",
        ".SH SYNOPSIS", ".B " + escape(name),
    ]
    first, _, synopsis = usage.partition(" ")  # Qt's parsers print argv[0], maybe a full path
    if first != name and not first.endswith("/" + name):
        synopsis = usage
    page.append(escape(synopsis))
    page += [".SH DESCRIPTION"] + [escape(line.strip()) for line in description]
    page += rest

    if args.commands:
        commands = []
        for head, lines in blocks(top):
            if head == "Commands":
                for line in lines:
                    m = re.match(r"^  ([a-z][\w-]*)\s", line)
                    if m and not line.strip().startswith(name):
                        commands.append(m.group(1))
        page.append(".SH COMMANDS")
        for command in commands:
            text = run(args.program, [command, "--help"], env)
            c_usage, c_description, c_sections, c_rest = body(text)
            page += [".SS " + escape(command), ".B " + escape(c_usage)]
            page += [".PP"] + [escape(line.strip()) for line in c_description]
            page += c_rest
            for title, lines in c_sections.items():
                sections.setdefault(title, []).extend(lines)

    for title in ("EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"):
        if title in sections:
            lines = sections[title]
            page += [".SH " + title]
            page += tagged(lines) if title in ("ENVIRONMENT", "FILES") else verbatim(lines)
    if args.see_also:
        refs = [r.strip() for r in args.see_also.split(",") if r.strip()]
        page += [".SH SEE ALSO", ",\n".join("\\fB" + escape(r[:-3]) + "\\fR" + r[-3:]
                                          for r in refs)]
    with open(args.out + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(page) + "\n")
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
