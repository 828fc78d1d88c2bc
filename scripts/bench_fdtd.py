#!/usr/bin/python3
"""FDTD benchmark set: one kstencil run per configuration (each verifies before it times and
measures the copy ceiling in the same process), collected into a CSV and a Markdown table.

  scripts/bench_fdtd.py [--kstencil PATH] [--set default|sweep|quick] [--out DIR] [overrides...]
"""
import argparse
import csv
import itertools
import json
import os
import subprocess
import sys
import time

from bench import tile_for_gpu

SIZES = {"quick": [16, 24], "default": [256, 384], "sweep": [256]}
COLUMNS = ["cells", "precision", "layout", "media", "variant_requested", "variant", "mapping",
           "tile", "launch_bounds", "values_per_cell", "timed_steps", "time_s", "mcells_per_s",
           "effective_gbs", "copy_gbs", "fom_ratio", "verified", "backend", "device"]


def configurations(name, sizes):
    """(cells per axis, overrides) pairs; tiles in GPU policy order (contiguous axis first)."""
    if name in ("default", "quick"):
        for n, precision, layout, media in itertools.product(
                sizes or SIZES[name], ("double", "float"), ("right", "left"), ("uniform", "arrays")):
            yield n, [f"run.precision={precision}", f"kernel.layout={layout}",
                      f"media.mode={media}", "kernel.variant=auto"]
    elif name == "sweep":
        for n, layout in itertools.product(sizes or SIZES[name], ("right", "left")):
            base = [f"kernel.layout={layout}", "run.precision=double", "media.mode=uniform"]
            yield n, base + ["kernel.variant=auto"]
            yield n, base + ["kernel.variant=cell", "kernel.tile=[0,0,0]"]
            for tile, bounds in itertools.product(("[32,4,1]", "[64,4,1]", "[128,1,1]", "[128,2,1]",
                                                   "[256,1,1]"), (0, 256)):
                yield n, base + ["kernel.variant=cell", f"kernel.tile={tile}",
                                 f"kernel.launch_bounds={bounds}"]
            for tile in ("[128,1,1]", "[256,1,1]", "[64,4,1]"):
                yield n, base + ["kernel.variant=column", f"kernel.tile={tile}"]
    else:
        sys.exit(f"bench_fdtd: unknown set {name!r} (allowed: default, quick, sweep)")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kstencil", default=os.path.join(here, "..", "build", "openmp", "miniapp",
                                                           "kstencil"))
    parser.add_argument("--deck", default=os.path.join(here, "..", "inputs", "fdtd_cavity.toml"))
    parser.add_argument("--set", default="default")
    parser.add_argument("--out", default=None)
    parser.add_argument("--sizes", help="cells per axis instead of the set's, e.g. 128,256")
    parser.add_argument("extra", nargs="*", help="overrides passed to every run")
    args = parser.parse_args()
    out = args.out or os.path.join("outputs", f"bench-fdtd-{args.set}")
    os.makedirs(out, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    configs = list(configurations(args.set, sizes))
    rows = []
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for i, (n, overrides) in enumerate(configs):
            layout = next(o.split("=")[1] for o in overrides if o.startswith("kernel.layout="))
            name = f"run{i:04d}"
            h = 1.0 / n
            cmd = [args.kstencil, "run", args.deck, f"run.name={name}", f"output.root={out}",
                   "output.fields=false", "output.overwrite=true", "diagnostics.every=0",
                   "time.steps=100", f"grid.nx={n}", f"grid.ny={n}", f"grid.nz={n}",
                   f"grid.hx={h}", f"grid.hy={h}", f"grid.hz={h}"] \
                + tile_for_gpu(overrides, layout) + args.extra
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
