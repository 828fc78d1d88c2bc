#!/usr/bin/python3
"""Writes docs/DECK_KEYS.md, the deck-key tables of every solver, from `kstencil keys <solver>`.
With --check it writes nothing and exits 1 (with a diff) if the file differs from what the binary
prints; tests/test_cli.py runs that check, so the file cannot fall behind the keys.

  scripts/deck-keys.py [--kstencil PATH] [--check]
"""
import argparse
import difflib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "docs", "DECK_KEYS.md")
SOLVERS = ("laplacian", "fdtd", "jacobi", "cg", "sweep")
HEADER = """# Deck keys

Every key a deck may set, per solver, as `kstencil keys <solver>` prints it (and `[sweep]`'s own,
read by `kstencil sweep`: docs/SWEEP.md). Unknown sections or
keys, wrong types and values outside "Allowed" are errors; any key can also be given on the command
line as `section.key=value`. Generated from the binary by `scripts/deck-keys.py`; the `cli` test
fails when this file and the binary disagree.
"""


def generate(kstencil):
    # Thread binding set so that Kokkos' OpenMP back end does not warn (on stderr, but quietly).
    env = dict(os.environ, OMP_PROC_BIND="spread", OMP_PLACES="threads")
    parts = [HEADER]
    for solver in SOLVERS:
        table = subprocess.run([kstencil, "keys", solver], capture_output=True, text=True,
                               check=True, env=env).stdout.strip()
        parts.append(f"## {solver}\n\n{table}\n")
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kstencil", default=os.path.join(HERE, "..", "build", "openmp", "miniapp",
                                                           "kstencil"))
    parser.add_argument("--check", action="store_true",
                        help="compare instead of writing; exit 1 if the file is out of date")
    args = parser.parse_args()
    text = generate(args.kstencil)
    if args.check:
        current = open(DOC).read() if os.path.exists(DOC) else ""
        if current != text:
            sys.stdout.writelines(difflib.unified_diff(
                current.splitlines(True), text.splitlines(True), "docs/DECK_KEYS.md",
                "kstencil keys"))
            sys.exit("docs/DECK_KEYS.md is out of date: run scripts/deck-keys.py --kstencil BINARY")
        return
    tmp = DOC + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, DOC)


if __name__ == "__main__":
    main()
