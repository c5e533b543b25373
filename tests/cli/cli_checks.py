"""What the Python checks that testCliExport runs share: failing with one line, and running the
real ironlearn-cli in a working directory."""

import subprocess
import sys


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def run_cli(cli, work, *args, env=None):
    """Runs `cli args` in `work`; fails the check, with its stderr, unless it exits 0."""
    r = subprocess.run([cli] + list(args), capture_output=True, text=True, cwd=work, env=env)
    if r.returncode != 0:
        fail(f"ironlearn-cli {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout
