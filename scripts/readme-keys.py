#!/usr/bin/python3
"""Rewrites the deck-key tables in README.md from `kstencil keys <solver>`, between the markers
<!-- keys:SOLVER --> and <!-- /keys:SOLVER -->.

  scripts/readme-keys.py [--kstencil PATH]
"""
import argparse
import os
import re
import subprocess

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--kstencil", default=os.path.join(here, "..", "build", "openmp", "miniapp",
                                                       "kstencil"))
args = parser.parse_args()
readme_path = os.path.join(here, "..", "README.md")
text = open(readme_path).read()
env = dict(os.environ, OMP_PROC_BIND="spread", OMP_PLACES="threads")


def table(match):
    solver = match.group(1)
    keys = subprocess.run([args.kstencil, "keys", solver], capture_output=True, text=True,
                          check=True, env=env).stdout
    return f"<!-- keys:{solver} -->\n{keys.strip()}\n<!-- /keys:{solver} -->"


new = re.sub(r"<!-- keys:(\w+) -->.*?<!-- /keys:\1 -->", table, text, flags=re.S)
if new != text:
    tmp = readme_path + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, readme_path)
