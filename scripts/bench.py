#!/usr/bin/python3
"""Laplacian benchmark sets: runs kstencil once per configuration (each run verifies before it times
and measures copy bandwidth in the same process), then writes a CSV, a Markdown table and a PNG plot.
The sets are data: [laplacian.NAME] in scripts/bench-sets.toml.

  scripts/bench.py [--kstencil PATH] [--set NAME] [--sizes NXxNYxNZ,...] [--out DIR] [overrides...]
  scripts/bench.py --list              # the sets and what each measures
  scripts/bench.py --plot-only DIR     # redo table and plot from DIR/results.csv
"""
import argparse
import csv
import itertools
import json
import os
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
SETS_FILE = os.path.join(HERE, "bench-sets.toml")
COLUMNS = ["set", "nx", "ny", "nz", "precision", "layout", "variant_requested", "variant", "iterate",
           "mapping", "tile", "launch_bounds", "m", "m_slow", "blocks_per_item", "parts",
           "streaming_stores", "zero_row_ends", "time_median_s", "fom_gbs", "copy_gbs",
           "fom_ratio", "verified", "backend", "device"]
# What a set with base = "default" takes from the default run's summary.json (as kernel.KEY). Parts
# stay automatic: their count follows the block's depth, which such a set may change.
PINNED = ("variant", "tile", "m", "m_slow", "blocks_per_item", "launch_bounds", "streaming_stores",
          "zero_row_ends")


def load_sets(solver):
    with open(SETS_FILE, "rb") as f:
        return tomllib.load(f)[solver]


def find_set(solver, name):
    sets = load_sets(solver)
    if name not in sets:
        sys.exit(f"unknown {solver} set {name!r} (in {SETS_FILE}: {', '.join(sets)})")
    return sets[name]


def list_sets(solver):
    for name, spec in load_sets(solver).items():
        print(f"{name:10} {spec.get('about', '')}")


def flatten(table, prefix=""):
    """{'kernel': {'m': 4}} -> {'kernel.m': 4}: TOML's dotted keys back into deck keys."""
    out = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def literal(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(literal(v) for v in value) + "]"
    return str(value)


def axis_tile(tile, layout):
    """A tile written contiguous axis first, as kernel.tile's x y z: reversed in layout right,
    whose contiguous axis is z."""
    return list(reversed(tile)) if layout == "right" else list(tile)


def expand(run, layout):
    """One run table of a set -> a list of {deck key: value}: every combination of its lists,
    the pseudo-keys tile and threads turned into kernel.tile and kernel.launch_bounds."""
    run = flatten(run)
    if "tile" in run and run["tile"] and not isinstance(run["tile"][0], list):
        run["tile"] = [run["tile"]]  # one tile, not a list of tiles
    keys = list(run)
    choices = [run[k] if isinstance(run[k], list) and k != "kernel.tile" else [run[k]]
               for k in keys]
    out = []
    for values in itertools.product(*choices):
        config = {}
        for key, value in zip(keys, values):
            if key == "tile":
                config["kernel.tile"] = axis_tile(value, layout)
            elif key == "threads":
                config["kernel.tile"] = axis_tile([value, 1, 1], layout)
                config.setdefault("kernel.launch_bounds", value)
            else:
                config[key] = value
        out.append(config)
    return out


def configurations(spec, sizes):
    """(size, precision, layout, configs) per grid, precision and layout of a set; configs is the
    list of {deck key: value} of the runs that apply there. sizes (from --sizes) replace the set's
    sizes or grids, each in every layout."""
    layouts = spec.get("layouts", ["right", "left"])
    if sizes:
        grids = [(size, layout) for size in sizes for layout in layouts]
    elif "grids" in spec:
        grids = [(g["size"], g["layout"]) for g in spec["grids"]]
    else:
        grids = [(size, layout) for size in spec["sizes"] for layout in layouts]
    precisions = spec.get("precisions", ["double", "float"])
    # Grid by grid, both precisions, then the layouts: the order of the default set's table.
    by_size = {}
    for size, layout in grids:
        by_size.setdefault(size, []).append(layout)
    for size, layouts in by_size.items():
        for precision, layout in itertools.product(precisions, layouts):
            runs = []
            for run in spec["runs"]:
                run = dict(run)
                when = run.pop("when", {})
                if when.get("precision", precision) != precision or \
                        when.get("layout", layout) != layout:
                    continue
                runs.extend(expand(run, layout))
            yield size, precision, layout, runs


def default_config(summary):
    """The default's configuration as deck keys, from a run's summary.json."""
    return {f"kernel.{key}": summary[key] for key in PINNED if summary.get(key) is not None}


def parse_size(text):
    return tuple(int(v) for v in str(text).split("x"))


def run_all(args):
    os.makedirs(args.out, exist_ok=True)
    rows = []
    # Written after every run so that an interrupted benchmark keeps what it measured.
    csv_file = open(os.path.join(args.out, "results.csv"), "w", newline="")
    writer = csv.DictWriter(csv_file, fieldnames=COLUMNS)
    writer.writeheader()
    spec = find_set("laplacian", args.set)
    sizes = args.sizes.split(",") if args.sizes else None
    base = spec.get("base")
    if base not in (None, "default"):
        sys.exit(f"bench: set {args.set!r}: base = {base!r} (allowed: \"default\")")
    plan = list(configurations(spec, sizes))
    total = sum(len(runs) + (base is not None) for *_, runs in plan)
    n = 0

    def run_one(size, precision, layout, config):
        nonlocal n
        name = f"run{n:04d}"
        n += 1
        nx, ny, nz = parse_size(size)
        overrides = [f"run.precision={precision}", f"kernel.layout={layout}"] + \
            [f"{key}={literal(value)}" for key, value in config.items()]
        cmd = [args.kstencil, "run", args.deck, f"run.name={name}", f"output.root={args.out}",
               "output.fields=false", "output.overwrite=true", f"grid.nx={nx}", f"grid.ny={ny}",
               f"grid.nz={nz}"] + overrides + args.extra
        start = time.time()
        result = subprocess.run(cmd, capture_output=True, text=True)
        summary_path = os.path.join(args.out, name, "summary.json")
        if result.returncode == 2 or not os.path.exists(summary_path):
            print(f"[{n}/{total}] skipped ({result.stderr.strip()[:200]})", flush=True)
            return None
        with open(summary_path) as f:
            s = json.load(f)
        row = {"set": args.set, "nx": nx, "ny": ny, "nz": nz,
               "variant_requested": config.get("kernel.variant", "auto")}
        for key in COLUMNS[4:]:
            if key == "variant_requested":
                continue
            value = s.get(key)
            row[key] = " ".join(map(str, value)) if isinstance(value, list) else value
        rows.append(row)
        writer.writerow(row)
        csv_file.flush()
        print(f"[{n}/{total}] {size} {s['precision']} {s['layout']} {s['variant']} "
              f"tile {s['tile']} m {s['m']}x{s.get('m_slow', 1)}x{s.get('blocks_per_item', 1)} "
              f"lb {s['launch_bounds']} parts {s.get('parts')}: {s['fom_gbs']:.1f} GB/s, "
              f"copy {s['copy_gbs']:.1f}, ratio {s['fom_ratio']:.3f}, "
              f"{'PASS' if s['verified'] else 'FAIL'} ({time.time() - start:.1f} s)", flush=True)
        return s

    for size, precision, layout, runs in plan:
        pinned = {}
        if base == "default":
            # The default runs first on each grid; its summary says what it chose.
            s = run_one(size, precision, layout, {"kernel.variant": "auto"})
            if s is None:
                print(f"  no default on {size} {precision} {layout}: its runs are skipped")
                n += len(runs)
                continue
            pinned = default_config(s)
        for config in runs:
            run_one(size, precision, layout, {**pinned, **config})
    csv_file.close()
    return rows


def read_rows(folder):
    with open(os.path.join(folder, "results.csv")) as f:
        return list(csv.DictReader(f))


def write_table(rows, folder):
    header = ["grid", "precision", "layout", "variant", "mapping", "tile (x y z)", "LB", "m",
              "m_slow", "blocks", "parts", "zero ends", "median ms", "FOM GB/s", "copy GB/s",
              "FOM/copy", "verified"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join([
            f"{r['nx']}x{r['ny']}x{r['nz']}", r["precision"], r["layout"], r["variant"],
            r["mapping"], r["tile"], str(r["launch_bounds"]), str(r["m"]),
            str(r.get("m_slow") or 1), str(r.get("blocks_per_item") or 1), str(r["parts"]),
            "yes" if str(r.get("zero_row_ends")) in ("True", "true") else "no",
            f"{float(r['time_median_s']) * 1e3:.3f}", f"{float(r['fom_gbs']):.1f}",
            f"{float(r['copy_gbs']):.1f}", f"{float(r['fom_ratio']):.3f}",
            "PASS" if str(r["verified"]) in ("True", "true") else "FAIL"]) + " |")
    device = rows[0]["device"] if rows else "?"
    backend = rows[0]["backend"] if rows else "?"
    text = f"Backend {backend}, device {device}.\n\n" + "\n".join(lines) + "\n"
    with open(os.path.join(folder, "results.md"), "w") as f:
        f.write(text)
    return text


def plot(rows, folder):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 5))
    groups = {}
    for r in rows:
        key = (r["precision"], r["layout"], r["variant_requested"])
        groups.setdefault(key, []).append(r)
    for (precision, layout, variant), rs in sorted(groups.items()):
        labels = [f"{r['nx']}x{r['ny']}x{r['nz']}" for r in rs]
        ax.plot(labels, [float(r["fom_ratio"]) for r in rs], marker="o",
                label=f"{precision} {layout} {variant}")
    ax.axhline(1.0, color="grey", lw=0.5)
    ax.set_ylabel("FOM / copy bandwidth (same run)")
    ax.set_xlabel("grid")
    ax.set_ylim(0, 1.1)
    ax.set_title(f"kstencil Laplacian on {rows[0]['backend']} ({rows[0]['device']})" if rows else "")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "results.png"), dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kstencil", default=os.path.join(HERE, "..", "build", "openmp", "miniapp",
                                                           "kstencil"))
    parser.add_argument("--deck", default=os.path.join(HERE, "..", "inputs", "bench.toml"))
    parser.add_argument("--set", default="default", help="a [laplacian.NAME] of bench-sets.toml")
    parser.add_argument("--list", action="store_true", help="list the sets and exit")
    parser.add_argument("--out", default=None)
    parser.add_argument("--sizes", help="grids to run instead of the set's, e.g. 512x512x512,64x64x64")
    parser.add_argument("--plot-only", metavar="DIR")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("extra", nargs="*", help="overrides passed to every run")
    args = parser.parse_args()
    if args.list:
        list_sets("laplacian")
        return
    if args.plot_only:
        folder, rows = args.plot_only, read_rows(args.plot_only)
    else:
        args.out = args.out or os.path.join("outputs", f"bench-{args.set}")
        folder, rows = args.out, run_all(args)
    print(write_table(rows, folder))
    if not args.no_plot:
        plot(rows, folder)
    failed = [r for r in rows if str(r["verified"]) not in ("True", "true")]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
