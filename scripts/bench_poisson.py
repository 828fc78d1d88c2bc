#!/usr/bin/python3
"""Jacobi and CG benchmark sets: one kstencil run per configuration (each verifies before it times
and measures the copy ceiling in the same process), collected into CSVs and Markdown tables.

  scripts/bench_poisson.py [--kstencil PATH] [--set NAME] [--out DIR] [overrides...]

norms:   Jacobi's four norm strategies on seed 004's 1D problem and on an n^3 grid: time per
         iteration with and without the norm, the norm's share, bandwidth against the copy.
solvers: inputs/poisson_3d.toml at n^3 with Jacobi and with CG (same tolerance, same measure):
         iterations and time to solution.
The sets (their sizes n) are data: [poisson.NAME] in scripts/bench-sets.toml.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

from bench import load_sets

NORMS = ("reduce", "reduce-range", "atomic", "kokkos-kernels")
NORM_COLUMNS = ["grid", "precision", "layout", "norm", "tile", "launch_bounds", "time_per_iteration_s",
                "time_per_iteration_without_norm_s", "norm_share", "effective_gbs", "copy_gbs",
                "fom_ratio", "verified", "backend", "device"]
SOLVER_COLUMNS = ["grid", "precision", "kernel", "tolerance", "iterations", "converged", "error",
                  "solve_s", "time_per_iteration_s", "verified", "backend", "device"]


def run(kstencil, deck, out, name, overrides):
    cmd = [kstencil, "run", deck, f"run.name={name}", f"output.root={out}", "output.fields=false",
           "output.overwrite=true"] + overrides
    start = time.time()
    result = subprocess.run(cmd, capture_output=True, text=True)
    path = os.path.join(out, name, "summary.json")
    if result.returncode == 2 or not os.path.exists(path):
        print(f"{name}: skipped ({result.stderr.strip()[:300]})", flush=True)
        return None
    with open(path) as f:
        summary = json.load(f)
    summary["wall_s"] = time.time() - start
    return summary


def table(rows, columns, header, formats):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(f(r[c]) for c, f in zip(columns, formats)) + " |")
    return "\n".join(lines) + "\n"


def write(out, stem, rows, columns):
    with open(os.path.join(out, f"{stem}.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (" ".join(map(str, r[k])) if isinstance(r.get(k), list)
                                 else r.get(k)) for k in columns})


def grid_text(g):
    return " x ".join(str(n) for n in g)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    inputs = os.path.join(here, "..", "inputs")
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kstencil", default=os.path.join(here, "..", "build", "openmp", "miniapp",
                                                           "kstencil"))
    sets = load_sets("poisson")
    parser.add_argument("--set", default="default", choices=sorted(sets))
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", choices=("norms", "solvers"), help="run one part only")
    parser.add_argument("extra", nargs="*", help="overrides passed to every run")
    args = parser.parse_args()
    out = args.out or os.path.join("outputs", f"bench-poisson-{args.set}")
    os.makedirs(out, exist_ok=True)
    sizes = sets[args.set]
    ok = True
    report = []

    if args.only in (None, "norms"):
        rows = []
        problems = [(os.path.join(inputs, "jacobi_1d.toml"), [])]
        for n in sizes["norm_sizes"]:
            # A few solve iterations, then the timed ones (run.repeats) on a fresh solver.
            problems.append((os.path.join(inputs, "poisson_3d.toml"),
                             [f"grid.nx={n}", f"grid.ny={n}", f"grid.nz={n}",
                              "jacobi.max_iterations=10", "jacobi.print_every=0",
                              "run.precision=double"]))
        for (deck, overrides), one_d in zip(problems, [True] + [False] * len(problems)):
            # The four strategies with the backend's defaults, then the MDRange reduction with
            # larger tiles along the contiguous axis (Kokkos 3.4 launches it on as many blocks as
            # the tile has threads, rounded up to a power of two).
            variants = [[f"jacobi.norm={norm}"] for norm in NORMS]
            for threads in (256, 512, 1024):
                tile = f"[{threads},1,1]" if one_d else f"[1,1,{threads}]"
                variants.append(["jacobi.norm=reduce", "kernel.variant=mdrange",
                                 f"kernel.tile={tile}", "kernel.launch_bounds=0"])
            for variant in variants:
                s = run(args.kstencil, deck, out, f"norm{len(rows):03d}",
                        overrides + variant + ["run.repeats=20"] + args.extra)
                if s is None:
                    continue
                rows.append(s)
                ok = ok and s["verified"]
                print(f"jacobi {grid_text(s['grid'])} {s['precision']} {s['norm']} tile {s['tile']}: "
                      f"{s['time_per_iteration_s'] * 1e3:.4g} ms/iteration, without norm "
                      f"{s['time_per_iteration_without_norm_s'] * 1e3:.4g} ms, norm share "
                      f"{100 * s['norm_share']:.0f}%, ratio {s['fom_ratio']:.3f}, "
                      f"{'PASS' if s['verified'] else 'FAIL'}", flush=True)
        write(out, "norms", rows, NORM_COLUMNS)
        report.append("Jacobi: time per iteration by norm strategy\n\n" + table(
            rows, ["grid", "precision", "norm", "tile", "time_per_iteration_s",
                   "time_per_iteration_without_norm_s", "norm_share", "fom_ratio", "verified"],
            ["grid", "precision", "norm", "tile (x y z)", "ms/iteration", "ms without norm",
             "norm share", "ratio to copy", "verified"],
            [grid_text, str, str, grid_text, lambda v: f"{v * 1e3:.4g}", lambda v: f"{v * 1e3:.4g}",
             lambda v: f"{100 * v:.0f}%", lambda v: f"{v:.3f}",
             lambda v: "PASS" if v else "FAIL"]))

    if args.only in (None, "solvers"):
        rows = []
        for n in sizes["solver_sizes"]:
            h = 1.0 / (n - 1)
            grid = [f"grid.nx={n}", f"grid.ny={n}", f"grid.nz={n}", f"grid.hx={h}", f"grid.hy={h}",
                    f"grid.hz={h}", "run.repeats=3"]
            for solver in ("jacobi", "cg"):
                s = run(args.kstencil, os.path.join(inputs, "poisson_3d.toml"), out,
                        f"solve{len(rows):03d}", grid + [f"run.solver={solver}"] + args.extra)
                if s is None:
                    continue
                rows.append(s)
                ok = ok and s["verified"]
                s["time_per_iteration_s"] = s["solve_s"] / max(s["iterations"], 1)
                print(f"{solver} {grid_text(s['grid'])}: {s['iterations']} iterations, "
                      f"{s['solve_s']:.4g} s to solution, error {s['error']:.3g}, "
                      f"{'converged' if s['converged'] else 'NOT converged'}, "
                      f"{'PASS' if s['verified'] else 'FAIL'}", flush=True)
        write(out, "solvers", rows, SOLVER_COLUMNS)
        report.append("Jacobi and CG on inputs/poisson_3d.toml\n\n" + table(
            rows, ["grid", "kernel", "iterations", "converged", "solve_s",
                   "time_per_iteration_s", "verified"],
            ["grid", "solver", "iterations", "converged", "time to solution (s)",
             "ms/iteration", "verified"],
            [grid_text, str, str, lambda v: "yes" if v else "no", lambda v: f"{v:.4g}",
             lambda v: f"{v * 1e3:.4g}", lambda v: "PASS" if v else "FAIL"]))

    text = "\n".join(report)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    print(text)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
