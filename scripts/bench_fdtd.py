#!/usr/bin/python3
"""FDTD benchmark sets: one kstencil run per configuration (each verifies before it times and
measures the copy ceiling in the same process), collected into a CSV and a Markdown table. The sets
are data: [fdtd.NAME] in scripts/bench-sets.toml.

  scripts/bench_fdtd.py [--kstencil PATH] [--set NAME] [--sizes N,...] [--out DIR] [overrides...]
  scripts/bench_fdtd.py --list         # the sets and what each measures
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

from bench import configurations, find_set, list_sets, literal

COLUMNS = ["cells", "precision", "layout", "media", "variant_requested", "variant", "mapping",
           "tile", "launch_bounds", "values_per_cell", "timed_steps", "time_s", "mcells_per_s",
           "effective_gbs", "copy_gbs", "fom_ratio", "verified", "backend", "device"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kstencil", default=os.path.join(here, "..", "build", "openmp", "miniapp",
                                                           "kstencil"))
    parser.add_argument("--deck", default=os.path.join(here, "..", "inputs", "fdtd_cavity.toml"))
    parser.add_argument("--set", default="default", help="an [fdtd.NAME] of bench-sets.toml")
    parser.add_argument("--list", action="store_true", help="list the sets and exit")
    parser.add_argument("--out", default=None)
    parser.add_argument("--sizes", help="cells per axis instead of the set's, e.g. 128,256")
    parser.add_argument("extra", nargs="*", help="overrides passed to every run")
    args = parser.parse_args()
    if args.list:
        list_sets("fdtd")
        return
    spec = find_set("fdtd", args.set)
    out = args.out or os.path.join("outputs", f"bench-fdtd-{args.set}")
    os.makedirs(out, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    configs = [(n, [f"run.precision={precision}", f"kernel.layout={layout}"] +
                [f"{key}={literal(value)}" for key, value in config.items()])
               for n, precision, layout, runs in configurations(spec, sizes) for config in runs]
    rows = []
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for i, (n, overrides) in enumerate(configs):
            name = f"run{i:04d}"
            h = 1.0 / n
            cmd = [args.kstencil, "run", args.deck, f"run.name={name}", f"output.root={out}",
                   "output.fields=false", "output.overwrite=true", "diagnostics.every=0",
                   "time.steps=100", f"grid.nx={n}", f"grid.ny={n}", f"grid.nz={n}",
                   f"grid.hx={h}", f"grid.hy={h}", f"grid.hz={h}"] \
                + overrides + args.extra
            start = time.time()
            result = subprocess.run(cmd, capture_output=True, text=True)
            path = os.path.join(out, name, "summary.json")
            if result.returncode == 2 or not os.path.exists(path):
                print(f"[{i + 1}/{len(configs)}] skipped ({result.stderr.strip()[:200]})", flush=True)
                continue
            with open(path) as g:
                s = json.load(g)
            row = {k: (" ".join(map(str, s[k])) if isinstance(s.get(k), list) else s.get(k))
                   for k in COLUMNS}
            writer.writerow(row)
            f.flush()
            rows.append(row)
            print(f"[{i + 1}/{len(configs)}] {n}^3 {s['precision']} {s['layout']} {s['media']} "
                  f"{s['variant']} tile {s['tile']} lb {s['launch_bounds']}: "
                  f"{s['mcells_per_s']:.0f} Mcells/s, {s['effective_gbs']:.1f} GB/s, copy "
                  f"{s['copy_gbs']:.1f}, ratio {s['fom_ratio']:.3f}, "
                  f"{'PASS' if s['verified'] else 'FAIL'} ({time.time() - start:.1f} s)", flush=True)
    header = ["cells", "precision", "layout", "media", "variant", "tile (x y z)", "LB", "Mcells/s",
              "GB/s", "copy GB/s", "ratio", "verified"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join([
            r["cells"], r["precision"], r["layout"], r["media"], r["variant"], r["tile"],
            str(r["launch_bounds"]), f"{r['mcells_per_s']:.0f}", f"{r['effective_gbs']:.1f}",
            f"{r['copy_gbs']:.1f}", f"{r['fom_ratio']:.3f}", "PASS" if r["verified"] else "FAIL"])
            + " |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    print(text)
    sys.exit(0 if all(r["verified"] for r in rows) else 1)


if __name__ == "__main__":
    main()
