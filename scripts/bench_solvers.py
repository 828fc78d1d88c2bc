#!/usr/bin/python3
"""Jacobi against CG on inputs/poisson_3d.toml at n^3 (same tolerance in the same measure):
iterations and time to solution, one verified kstencil run per solver and size. What a sweep
cannot express (it ranks one solver's configurations by bandwidth); Jacobi's norm strategies are a
sweep: inputs/bench/jacobi_norms.toml.

  scripts/bench_solvers.py [--kstencil PATH] [--sizes 65,129,257] [--out DIR] [overrides...]
"""
import argparse
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ["grid", "solver", "precision", "tolerance", "iterations", "converged", "error",
           "solve_s", "ms_per_iteration", "verified", "backend", "device"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kstencil",
                        default=os.path.join(HERE, "..", "build", "openmp", "miniapp", "kstencil"))
    parser.add_argument("--sizes", default="65,129,257", help="points per axis, comma-separated")
    parser.add_argument("--out", default=os.path.join("outputs", "bench-solvers"))
    parser.add_argument("extra", nargs="*", help="overrides passed to every run")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows, ok = [], True
    for n in (int(v) for v in args.sizes.split(",")):
        h = 1.0 / (n - 1)
        for solver in ("jacobi", "cg"):
            name = f"{solver}-{n}"
            cmd = [args.kstencil, "run", os.path.join(HERE, "..", "inputs", "poisson_3d.toml"),
                   f"run.name={name}", f"output.root={args.out}", "output.fields=false",
                   "output.overwrite=true", f"run.solver={solver}", "run.repeats=3"] + \
                [f"grid.{k}={v}" for k, v in (("nx", n), ("ny", n), ("nz", n), ("hx", h),
                                                ("hy", h), ("hz", h))] + args.extra
            result = subprocess.run(cmd, capture_output=True, text=True)
            path = os.path.join(args.out, name, "summary.json")
            if result.returncode == 2 or not os.path.exists(path):
                print(f"{name}: not run ({result.stderr.strip()[:300]})", flush=True)
                ok = False
                continue
            with open(path) as f:
                s = json.load(f)
            ok = ok and s["verified"]
            rows.append({**{k: s.get(k) for k in COLUMNS if k in s},
                         "grid": "x".join(map(str, s["grid"])), "solver": solver,
                         "ms_per_iteration": 1e3 * s["solve_s"] / max(s["iterations"], 1)})
            print(f"{solver} {n}^3: {s['iterations']} iterations, {s['solve_s']:.4g} s to "
                  f"solution, error {s['error']:.3g}, "
                  f"{'converged' if s['converged'] else 'NOT converged'}, "
                  f"{'PASS' if s['verified'] else 'FAIL'}", flush=True)
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
