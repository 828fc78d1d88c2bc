#!/usr/bin/python3
"""Weak and strong scaling of the Laplacian, FDTD, Jacobi and CG over MPI ranks: one verified run per
solver, rank count and overlap setting (mpiexec -np N kstencil run ...), then a CSV, a Markdown table
and a PNG plot of the parallel efficiency and the halo's share of a step.

  scripts/bench_scaling.py --mode weak|strong [--ranks 1,2,4] [--solvers laplacian,fdtd,jacobi]
                           [--size NXxNYxNZ | --size laplacian=NXxNYxNZ,fdtd=...]
                           [--overlap both|on|off] [--kstencil PATH]
                           [--mpiexec "mpiexec --oversubscribe"] [--out DIR] [overrides...]
  scripts/bench_scaling.py --plot-only DIR   # redo table and plot from DIR/results.csv
  (--one-rank-from CSV: the one-rank rows of an earlier results.csv, not run again)

strong: the same grid at every rank count; efficiency T(1) / (N T(N)).
(--mode weak,strong runs both, into DIR/weak and DIR/strong, sharing the one-rank runs; one rank
runs once for both overlap settings, which need several ranks.)
weak:   N times the grid along x (the process grid [N, 1, 1]: every rank owns the grid given);
        efficiency T(1) / T(N).
T is the time of one step: the Laplacian's median step (halo exchange included), FDTD's timed steps
(between diagnostics), Jacobi's median iteration with its norm, CG's mean iteration (CG has no
overlap). Every run verifies before it times.
On hosts every rank gets the same OpenMP threads at every rank count, cores / (largest rank count)
unless --threads says otherwise, so N ranks use N times the resources of one; threads are unbound
(pinned threads of several ranks would share cores).
On GPUs kstencil gives each rank the GPU of its node-local rank (the "devices" column says which
each used): run at most as many ranks as the node has GPUs. copy_ratio is the solver's figure of
merit over the copy measured in the same run, both summed over the ranks: the ratio per GPU.
Rows are appended to DIR/results.csv as each run finishes, so a cut-off series keeps what it ran.
"""
import argparse
import csv
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
DECKS = {"laplacian": "inputs/laplacian.toml", "fdtd": "inputs/fdtd_cavity.toml",
         "jacobi": "inputs/poisson_3d.toml", "cg": "inputs/poisson_3d.toml"}
# Benchmark settings per solver: fields and diagnostics off, enough work to time.
SETTINGS = {"laplacian": ["run.repeats=20"],
            "fdtd": ["time.steps=100", "diagnostics.every=0", "diagnostics.probes=[]"],
            "jacobi": ["jacobi.max_iterations=1", "run.repeats=20", "jacobi.print_every=0"],
            "cg": ["run.solver=cg", "cg.max_iterations=50", "cg.print_every=0"]}
COLUMNS = ["solver", "mode", "ranks", "dims", "overlap", "nx", "ny", "nz", "step_s", "efficiency",
           "halo_share", "pack_s", "exchange_s", "unpack_s", "interior_s", "update_s", "copy_gbs",
           "copy_ratio", "devices", "wall_s", "verified", "backend", "device"]


def step_time(solver, summary):
    if solver == "laplacian":
        return summary["time_median_s"]
    if solver == "fdtd":
        return summary["time_s"] / summary["timed_steps"]
    return summary["time_per_iteration_s"]  # Jacobi, CG


def run_one(args, mode, solver, ranks, overlap, size, extra):
    nx, ny, nz = size[solver]
    dims = "[0, 0, 0]"
    if mode == "weak":
        nx, dims = nx * ranks, f"[{ranks}, 1, 1]"
    name = f"{solver}-{mode}-{ranks}-{overlap}"
    overrides = [f"grid.nx={nx}", f"grid.ny={ny}", f"grid.nz={nz}", f"mpi.dims={dims}",
                 f"mpi.overlap={'true' if overlap == 'on' else 'false'}", "output.fields=false",
                 f"output.root={args.out}", f"run.name={name}", "output.overwrite=true"]
    command = ([args.kstencil] if ranks == 1 else
               shlex.split(args.mpiexec) + ["-np", str(ranks), args.kstencil])
    command += ["run", os.path.join(SOURCE, DECKS[solver])] + SETTINGS[solver] + overrides + extra
    threads = args.threads or max(1, (os.cpu_count() or 1) // args.max_ranks)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false",
               KOKKOS_DISABLE_WARNINGS="1")
    started = time.monotonic()
    r = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(command)}\n{r.stdout}\n{r.stderr}")
    with open(os.path.join(args.out, name, "summary.json")) as f:
        s = json.load(f)
    if not s["verified"]:
        sys.exit(f"not verified: {' '.join(command)}")
    m = s["mpi"]
    return {"solver": solver, "mode": mode, "ranks": ranks,
            "dims": "x".join(str(d) for d in m["dims"]), "overlap": overlap, "nx": nx, "ny": ny,
            "nz": nz, "step_s": step_time(solver, s), "halo_share": m["halo_share"],
            "pack_s": m["pack_s"], "exchange_s": m["exchange_s"], "unpack_s": m["unpack_s"],
            "interior_s": m["interior_s"], "update_s": m["update_s"], "copy_gbs": s["copy_gbs"],
            "copy_ratio": s["fom_ratio"], "devices": " ".join(str(v) for v in m["devices"]),
            "wall_s": round(wall, 1), "verified": s["verified"], "backend": s["backend"],
            "device": s["device"]}


def efficiencies(rows, mode):
    base = {(r["solver"], r["overlap"]): r["step_s"] for r in rows if r["ranks"] == 1}
    for r in rows:
        t1 = base.get((r["solver"], r["overlap"]))
        if t1 is None:
            r["efficiency"] = float("nan")
        else:
            r["efficiency"] = t1 / r["step_s"] if mode == "weak" else t1 / (r["ranks"] * r["step_s"])


def write_outputs(rows, out, mode):
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    lines = [f"# {mode} scaling ({rows[0]['device']}, {rows[0]['backend']})", "",
             "| solver | ranks | dims | overlap | grid | step (ms) | efficiency | halo share | "
             "copy ratio | devices |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['solver']} | {r['ranks']} | {r['dims']} | {r['overlap']} | "
                     f"{r['nx']}x{r['ny']}x{r['nz']} | {r['step_s'] * 1e3:.3f} | "
                     f"{r['efficiency']:.2f} | {r['halo_share']:.2f} | {r['copy_ratio']:.3f} | "
                     f"{r['devices']} |")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plot", file=sys.stderr)
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for key in sorted({(r["solver"], r["overlap"]) for r in rows}):
        sel = [r for r in rows if (r["solver"], r["overlap"]) == key]
        label = f"{key[0]} (overlap {key[1]})"
        a.plot([r["ranks"] for r in sel], [r["efficiency"] for r in sel], "o-", label=label)
        b.plot([r["ranks"] for r in sel], [r["halo_share"] for r in sel], "o-", label=label)
    a.set(xlabel="ranks", ylabel="parallel efficiency", title=f"{mode} scaling", ylim=(0, 1.1))
    b.set(xlabel="ranks", ylabel="share of the step",
          title="halo phases (with overlap: while the interior runs)")
    for axis in (a, b):
        axis.set_xticks(sorted({r["ranks"] for r in rows}))
    a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scaling.png"), dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", help="weak, strong, or weak,strong (one-rank runs shared)")
    p.add_argument("--plot-only", metavar="DIR")
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--solvers", default="laplacian,fdtd,jacobi,cg")
    p.add_argument("--size", default="256x256x256")
    p.add_argument("--overlap", choices=["both", "on", "off"], default="both")
    p.add_argument("--kstencil", default=os.path.join(SOURCE, "build/openmp/miniapp/kstencil"))
    p.add_argument("--mpiexec", default="mpiexec --oversubscribe --bind-to none")
    p.add_argument("--threads", type=int, default=0, help="OpenMP threads per rank")
    p.add_argument("--out", default=None)
    p.add_argument("--one-rank-from", metavar="CSV", action="append", default=[],
                   help="take the one-rank rows of these results.csv files instead of running "
                        "them again (same build, machine and sizes)")
    p.add_argument("overrides", nargs="*")
    args = p.parse_args()
    if args.plot_only:
        with open(os.path.join(args.plot_only, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            for key in ("ranks", "nx", "ny", "nz"):
                r[key] = int(r[key])
            for key in ("step_s", "efficiency", "halo_share", "copy_ratio"):
                r[key] = float(r[key])
        write_outputs(rows, args.plot_only, rows[0]["mode"])
        return
    if not args.mode:
        p.error("--mode weak|strong|weak,strong is required")
    modes = args.mode.split(",")
    if any(m not in ("weak", "strong") for m in modes):
        p.error("--mode: weak, strong or weak,strong")
    args.out = os.path.abspath(args.out or os.path.join("outputs", "scaling-" + "-".join(modes)))
    solvers = args.solvers.split(",")
    size = {}
    for part in args.size.split(","):
        name, _, dims = part.rpartition("=")
        for solver in ([name] if name else solvers):
            size[solver] = tuple(int(v) for v in dims.split("x"))
    ranks = [int(v) for v in args.ranks.split(",")]
    args.max_ranks = max(ranks)
    if 1 not in ranks:
        ranks = [1] + ranks  # the efficiency's reference
    overlaps = ["off", "on"] if args.overlap == "both" else [args.overlap]
    one_rank = {}  # solver -> its one-rank row: the same run for both modes and overlaps
    for path in args.one_rank_from:
        with open(path) as f:
            for r in csv.DictReader(f):
                if int(r["ranks"]) != 1 or tuple(int(r[k]) for k in ("nx", "ny", "nz")) != \
                        size.get(r["solver"]):
                    continue
                for key in ("ranks", "nx", "ny", "nz"):
                    r[key] = int(r[key])
                for key in ("step_s", "halo_share", "pack_s", "exchange_s", "unpack_s",
                            "interior_s", "update_s", "copy_gbs", "copy_ratio", "wall_s"):
                    r[key] = float(r[key])
                one_rank[r["solver"]] = r
    for mode in modes:
        out = args.out if len(modes) == 1 else os.path.join(args.out, mode)
        os.makedirs(out, exist_ok=True)
        partial = os.path.join(out, "results.csv")
        if os.path.exists(partial):
            os.remove(partial)
        rows = []
        for solver in solvers:
            for overlap in overlaps:
                if solver == "cg" and overlap == "on":
                    continue  # one spmv: nothing to overlap
                for n in ranks:
                    if n == 1 and solver in one_rank:
                        rows.append(dict(one_rank[solver], mode=mode, overlap=overlap))
                        continue
                    rows.append(run_one(args, mode, solver, n, overlap, size, args.overrides))
                    r = rows[-1]
                    if n == 1:
                        one_rank[solver] = r
                    print(f"{solver:9} {mode} {n:3} ranks overlap {overlap:3}: "
                          f"{r['step_s'] * 1e3:8.3f} ms, halo {r['halo_share']:.2f}, copy ratio "
                          f"{r['copy_ratio']:.3f}, devices {r['devices']}, {r['wall_s']} s",
                          flush=True)
                    efficiencies(rows, mode)
                    with open(partial, "w", newline="") as f:
                        w = csv.DictWriter(f, COLUMNS)
                        w.writeheader()
                        w.writerows(rows)
        efficiencies(rows, mode)
        write_outputs(rows, out, mode)
        print(f"{out}/results.csv, results.md, scaling.png")

if __name__ == "__main__":
    main()
