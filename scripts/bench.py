#!/usr/bin/python3
"""Laplacian benchmark set: runs kstencil once per configuration (each run verifies before it times
and measures copy bandwidth in the same process), then writes a CSV, a Markdown table and a PNG plot.

  scripts/bench.py [--kstencil PATH] [--set default|quick|sweep|march|stores|blocking|blocks|rowends|planes|launches|shapes|sizes|parts|short|registers|scratch] [--out DIR] [-- extra overrides]
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

SIZES = {
    "quick": [(64, 64, 64), (96, 96, 96)],
    # The last two have 64 MiB planes (double) in layout left and right respectively.
    "default": [(256, 256, 256), (512, 512, 512), (768, 768, 768), (1024, 1024, 1024),
                (2048, 1024, 256), (4096, 2048, 64), (64, 2048, 4096)],
}
COLUMNS = ["set", "nx", "ny", "nz", "precision", "layout", "variant_requested", "variant", "iterate",
           "mapping", "tile", "launch_bounds", "m", "m_slow", "blocks_per_item", "parts", "launches", "streaming_stores", "zero_row_ends", "time_median_s", "fom_gbs", "copy_gbs",
           "fom_ratio", "verified", "backend", "device"]
# The GPU default's m, m_slow and blocks per work item (default_laplacian_kernel).
DEFAULT_BLOCKS = {("double", "right"): (8, 1, 3), ("double", "left"): (8, 1, 3),
                  ("float", "right"): (4, 2, 3), ("float", "left"): (8, 1, 4)}


def row_tile(size, layout):
    """The default's threads (policy order) for a grid: 64 x 2 where the contiguous axis has at most
    64 points, else 128 x 1."""
    short = (size[2] if layout == "right" else size[0]) <= 64
    return "[64,2,1]" if short else "[128,1,1]"


def default_subdomain(size, precision, layout):
    """Overrides for the subdomain variant as the GPU default configures it (blocks, threads, launch
    bound) on a grid; parts and the other keys are left to the deck and the caller."""
    m, m_slow, per_item = DEFAULT_BLOCKS[precision, layout]
    return [f"kernel.layout={layout}", f"run.precision={precision}", "kernel.variant=subdomain",
            f"kernel.m={m}", f"kernel.m_slow={m_slow}", f"kernel.blocks_per_item={per_item}",
            f"kernel.tile={row_tile(size, layout)}", "kernel.launch_bounds=128"]


def configurations(name, sizes):
    """(label, size, overrides) triples of a benchmark set."""
    if name in ("default", "quick"):
        for size, precision, layout in itertools.product(sizes or SIZES[name], ("double", "float"),
                                                          ("right", "left")):
            yield name, size, [f"run.precision={precision}", f"kernel.layout={layout}",
                               "kernel.variant=auto"]
    elif name == "sweep":
        # Tiles in policy order for the GPU mapping (contiguous axis first): see tile_for_gpu.
        for size in sizes or [(512, 512, 512), (2048, 1024, 256)]:
            for layout in ("right", "left"):
                base = [f"kernel.layout={layout}", "run.precision=double"]
                yield name, size, base + ["kernel.variant=auto"]
                yield name, size, base + ["kernel.variant=mdrange", "kernel.iterate=right"]
                for tile in ("[32,4,2]", "[64,4,1]", "[256,1,1]"):
                    yield name, size, base + ["kernel.variant=mdrange", f"kernel.tile={tile}"]
                for m, bounds, tile in itertools.product((4, 8, 16), (0, 256),
                                                         ("[64,1,4]", "[256,1,1]")):
                    yield name, size, base + ["kernel.variant=register-blocked", f"kernel.m={m}",
                                              f"kernel.launch_bounds={bounds}", f"kernel.tile={tile}"]
                for parts in (2, 4):
                    yield name, size, base + ["kernel.variant=subdomain", "kernel.m=8",
                                              f"kernel.parts={parts}", "kernel.tile=[256,1,1]",
                                              "kernel.launch_bounds=256"]
    elif name == "march":
        # The march variant (blocks of m points along y marching along the slowest axis) against
        # the default: block, threads, slabs, stores (GPU policy order: contiguous axis first).
        for size in sizes or [(512, 512, 512), (2048, 1024, 256)]:
            for layout in ("right", "left"):
                base = [f"kernel.layout={layout}", "run.precision=double"]
                yield name, size, base + ["kernel.variant=auto"]
                for m, threads in itertools.product((2, 4, 8), (128, 256)):
                    yield name, size, base + ["kernel.variant=march", f"kernel.m={m}",
                                              f"kernel.launch_bounds={threads}",
                                              f"kernel.tile=[{threads},1,1]"]
                march = base + ["kernel.variant=march", "kernel.m=4", "kernel.launch_bounds=128",
                                "kernel.tile=[128,1,1]"]
                yield name, size, march + ["kernel.streaming_stores=false"]
                for parts in (2, 8, 32):
                    yield name, size, march + [f"kernel.parts={parts}"]
                for m in (4, 8):
                    yield name, size, [f"kernel.layout={layout}", "run.precision=float",
                                       "kernel.variant=march", f"kernel.m={m}",
                                       "kernel.launch_bounds=128", "kernel.tile=[128,1,1]"]
    elif name == "stores":
        # Evict-first stores in the register-blocked kernels, and slab counts for the plane cliff.
        for size in sizes or [(512, 512, 512), (2048, 1024, 256)]:
            for layout in ("right", "left"):
                base = [f"kernel.layout={layout}", "run.precision=double"]
                sub = base + ["kernel.variant=subdomain", "kernel.m=4", "kernel.launch_bounds=128",
                              "kernel.tile=[128,1,1]"]
                for streaming in ("true", "false"):
                    yield name, size, sub + [f"kernel.streaming_stores={streaming}"]
                for m, threads in itertools.product((4, 8), (128, 256)):
                    yield name, size, base + ["kernel.variant=register-blocked", f"kernel.m={m}",
                                              f"kernel.launch_bounds={threads}",
                                              f"kernel.tile=[{threads},1,1]"]
                if layout == "left":
                    for parts in (4, 8):
                        yield name, size, sub + [f"kernel.parts={parts}"]
            for m in (4, 8):
                yield name, size, ["kernel.layout=right", "run.precision=float",
                                   "kernel.variant=subdomain", f"kernel.m={m}",
                                   "kernel.launch_bounds=128", "kernel.tile=[128,1,1]"]
        if not sizes:
            for size, layout in itertools.product([(256, 256, 256), (768, 768, 768),
                                                   (1024, 1024, 1024)], ("right", "left")):
                yield name, size, [f"kernel.layout={layout}", "run.precision=double",
                                   "kernel.variant=auto"]
    elif name == "blocking":
        # Register blocks of m (y) x m_slow (slowest axis) points per work item, threads per block.
        for size in sizes or [(512, 512, 512)]:
            for precision, layout in itertools.product(("double", "float"), ("right", "left")):
                base = [f"kernel.layout={layout}", f"run.precision={precision}"]
                yield name, size, base + ["kernel.variant=auto"]
                for m, m_slow, threads in itertools.product((2, 4, 8), (1, 2, 4), (128, 256)):
                    yield name, size, base + ["kernel.variant=subdomain", f"kernel.m={m}",
                                              f"kernel.m_slow={m_slow}",
                                              f"kernel.launch_bounds={threads}",
                                              f"kernel.tile=[{threads},1,1]"]
    elif name == "blocks":
        # Register blocks per work item along the slowest axis (kernel.blocks_per_item), the rows
        # consecutive blocks share read from the L1, for the two blocks the defaults use.
        for size in sizes or [(512, 512, 512)]:
            for precision, layout in itertools.product(("double", "float"), ("right", "left")):
                base = [f"kernel.layout={layout}", f"run.precision={precision}"]
                yield name, size, base + ["kernel.variant=auto"]
                tile = row_tile(size, layout)
                for (m, m_slow), blocks in itertools.product(((4, 2), (8, 1)), (1, 2, 3, 4)):
                    yield name, size, base + ["kernel.variant=subdomain", f"kernel.m={m}",
                                              f"kernel.m_slow={m_slow}",
                                              f"kernel.blocks_per_item={blocks}",
                                              f"kernel.tile={tile}", "kernel.launch_bounds=128"]
    elif name == "rowends":
        # Stores of 0 at each row's ends (kernel.zero_row_ends) against leaving them untouched, with
        # the defaults' blocks, on the grids with the shortest rows in each layout.
        for size in sizes or [(2048, 1024, 256), (4096, 2048, 64), (64, 2048, 4096)]:
            for precision, layout in itertools.product(("double", "float"), ("right", "left")):
                for zero in ("true", "false"):
                    yield name, size, default_subdomain(size, precision, layout) + [
                        f"kernel.zero_row_ends={zero}"]
    elif name == "planes":
        # Y parts with the defaults' blocks on the grids whose planes (64 MiB in double) need the
        # most: 4096 x 2048 x 64 in layout left, 64 x 2048 x 4096 in layout right.
        grids = ([(size, layout) for size in sizes for layout in ("right", "left")] if sizes else
                 [((4096, 2048, 64), "left"), ((64, 2048, 4096), "right")])
        for (size, layout), precision in itertools.product(grids, ("double", "float")):
            counts = (12, 16, 21, 24, 32, 48) if precision == "double" else (6, 8, 12, 16, 24)
            for parts in counts:
                yield name, size, default_subdomain(size, precision, layout) + [
                    f"kernel.parts={parts}"]
    elif name == "launches":
        # Y parts in one launch (kernel.parts_in_one_launch) against one launch per part, with the
        # defaults' blocks and automatic parts, on the grids where those are more than one.
        grids = ([(size, layout) for size in sizes for layout in ("right", "left")] if sizes else
                 [((1024, 1024, 1024), "right"), ((1024, 1024, 1024), "left"),
                  ((2048, 1024, 256), "left"), ((4096, 2048, 64), "left"),
                  ((64, 2048, 4096), "right")])
        for (size, layout), precision in itertools.product(grids, ("double", "float")):
            for one_launch in ("true", "false"):
                yield name, size, default_subdomain(size, precision, layout) + [
                    f"kernel.parts_in_one_launch={one_launch}"]
    elif name == "shapes":
        # Thread-block shapes (policy order: contiguous axis, y blocks, slowest-axis blocks) for
        # the best register blocks of the "blocking" set.
        blocks = {"double": ((4, 2), (2, 4)), "float": ((8, 4), (4, 2))}
        tiles = [("[128,1,1]", 128), ("[64,2,1]", 128), ("[32,4,1]", 128), ("[64,1,2]", 128),
                 ("[32,1,4]", 128), ("[32,2,2]", 128), ("[256,1,1]", 256), ("[128,2,1]", 256),
                 ("[128,1,2]", 256)]
        for size in sizes or [(512, 512, 512)]:
            for precision, layout in itertools.product(("double", "float"), ("right", "left")):
                for m, m_slow in blocks[precision]:
                    base = [f"kernel.layout={layout}", f"run.precision={precision}",
                            "kernel.variant=subdomain", f"kernel.m={m}", f"kernel.m_slow={m_slow}"]
                    for tile, threads in tiles:
                        yield name, size, base + [f"kernel.tile={tile}",
                                                  f"kernel.launch_bounds={threads}"]
                    yield name, size, base + ["kernel.tile=[128,1,1]", "kernel.launch_bounds=128",
                                              "kernel.streaming_stores=false"]
    elif name == "sizes":
        # The candidate defaults at every size of the default set.
        for size in sizes or SIZES["default"]:
            for layout in ("right", "left"):
                for m, m_slow in ((4, 2), (2, 4)):
                    yield name, size, [f"kernel.layout={layout}", "run.precision=double",
                                       "kernel.variant=subdomain", f"kernel.m={m}",
                                       f"kernel.m_slow={m_slow}", "kernel.tile=[128,1,1]",
                                       "kernel.launch_bounds=128"]
    elif name == "parts":
        # Y parts for the default 4 x 2 block (double) on the grids whose planes need more than one.
        for size in sizes or [(768, 768, 768), (1024, 1024, 1024), (2048, 1024, 256)]:
            for layout, parts in itertools.product(("right", "left"), (1, 2, 3, 4, 6)):
                yield name, size, [f"kernel.layout={layout}", "run.precision=double",
                                   "kernel.variant=subdomain", "kernel.m=4", "kernel.m_slow=2",
                                   "kernel.tile=[128,1,1]", "kernel.launch_bounds=128",
                                   f"kernel.parts={parts}"]
    elif name == "short":
        # Blocks and thread-block shapes where the contiguous axis has 64 points (policy order:
        # contiguous axis, y blocks, slowest-axis blocks), double.
        shapes = [((4, 2), "[64,2,1]", 128), ((4, 2), "[64,1,2]", 128), ((4, 2), "[32,4,1]", 128),
                  ((4, 2), "[32,2,2]", 128), ((4, 2), "[64,4,1]", 256), ((2, 4), "[64,2,1]", 128),
                  ((2, 4), "[32,4,1]", 128), ((8, 1), "[64,2,1]", 128), ((4, 1), "[64,2,1]", 128),
                  ((8, 2), "[64,2,1]", 128), ((4, 4), "[64,2,1]", 128), ((2, 2), "[64,2,1]", 128)]
        # The layout whose contiguous axis is the 64-point one: z in layout right, x in left.
        grids = [(s, "right" if s[2] == 64 else "left") for s in sizes] if sizes else \
            [((4096, 2048, 64), "right"), ((64, 2048, 4096), "left")]
        for size, layout in grids:
            for (m, m_slow), tile, threads in shapes:
                yield name, size, [f"kernel.layout={layout}", "run.precision=double",
                                   "kernel.variant=subdomain", f"kernel.m={m}",
                                   f"kernel.m_slow={m_slow}", f"kernel.tile={tile}",
                                   f"kernel.launch_bounds={threads}"]
    elif name == "registers":
        # The launch bound as a register cap for 128-thread blocks: none lets ptxas take what it
        # likes, 128 and 256 up to 255 registers, 512 caps at 128 and 1024 at 64 (more blocks per SM).
        for size in sizes or [(512, 512, 512), (1024, 1024, 1024), (2048, 1024, 256)]:
            blocks = ((4, 2), (2, 4), (4, 4), (8, 2)) if size == (512, 512, 512) else ((4, 2), (2, 4))
            for layout, (m, m_slow), bounds in itertools.product(("right", "left"), blocks,
                                                                  (0, 128, 512, 1024)):
                yield name, size, [f"kernel.layout={layout}", "run.precision=double",
                                   "kernel.variant=subdomain", f"kernel.m={m}",
                                   f"kernel.m_slow={m_slow}", "kernel.tile=[128,1,1]",
                                   f"kernel.launch_bounds={bounds}"]
    elif name == "scratch":
        # Team tiles of the scratch variant (policy order: contiguous axis, y, planes per team)
        # against the default.
        for size in sizes or [(512, 512, 512)]:
            for layout in ("right", "left"):
                base = [f"kernel.layout={layout}", "run.precision=double"]
                yield name, size, base + ["kernel.variant=auto"]
                for (c, y), s in itertools.product(((32, 4), (32, 8), (64, 4), (64, 8), (128, 4),
                                                    (128, 8)), (64, 128, max(size))):
                    yield name, size, base + ["kernel.variant=scratch",
                                              f"kernel.tile=[{c},{y},{s}]"]
    else:
        sys.exit(f"bench: unknown set {name!r} (allowed: default, quick, sweep, march, stores, "
                 "blocking, blocks, rowends, planes, launches, shapes, sizes, parts, short, "
                 "registers, scratch)")


def tile_for_gpu(overrides, layout):
    # Tiles above are written in policy order for the GPU mapping (contiguous axis first); the deck
    # takes x y z, which for layout right is the reverse.
    out = []
    for o in overrides:
        if o.startswith("kernel.tile=") and layout == "right":
            values = o.split("=", 1)[1].strip("[]").split(",")
            o = "kernel.tile=[" + ",".join(reversed(values)) + "]"
        out.append(o)
    return out


def run_all(args):
    os.makedirs(args.out, exist_ok=True)
    rows = []
    # Written after every run so that an interrupted benchmark keeps what it measured.
    csv_file = open(os.path.join(args.out, "results.csv"), "w", newline="")
    writer = csv.DictWriter(csv_file, fieldnames=COLUMNS)
    writer.writeheader()
    sizes = [tuple(int(v) for v in text.split("x")) for text in args.sizes.split(",")] \
        if args.sizes else None
    configs = list(configurations(args.set, sizes))
    for n, (label, size, overrides) in enumerate(configs):
        layout = next(o.split("=")[1] for o in overrides if o.startswith("kernel.layout="))
        name = f"run{n:04d}"
        cmd = [args.kstencil, "run", args.deck, f"run.name={name}", f"output.root={args.out}",
               "output.fields=false", "output.overwrite=true", f"grid.nx={size[0]}",
               f"grid.ny={size[1]}", f"grid.nz={size[2]}"] + tile_for_gpu(overrides, layout) + args.extra
        start = time.time()
        result = subprocess.run(cmd, capture_output=True, text=True)
        summary_path = os.path.join(args.out, name, "summary.json")
        if result.returncode == 2 or not os.path.exists(summary_path):
            print(f"[{n + 1}/{len(configs)}] skipped ({result.stderr.strip()[:200]})", flush=True)
            continue
        with open(summary_path) as f:
            s = json.load(f)
        row = {"set": label, "nx": size[0], "ny": size[1], "nz": size[2]}
        for key in COLUMNS[4:]:
            value = s.get(key)
            row[key] = " ".join(map(str, value)) if isinstance(value, list) else value
        rows.append(row)
        writer.writerow(row)
        csv_file.flush()
        print(f"[{n + 1}/{len(configs)}] {size} {s['precision']} {s['layout']} {s['variant']} "
              f"tile {s['tile']} m {s['m']}x{s.get('m_slow', 1)}x{s.get('blocks_per_item', 1)} lb {s['launch_bounds']}: {s['fom_gbs']:.1f} GB/s, "
              f"copy {s['copy_gbs']:.1f}, ratio {s['fom_ratio']:.3f}, "
              f"{'PASS' if s['verified'] else 'FAIL'} ({time.time() - start:.1f} s)", flush=True)
    csv_file.close()
    return rows


def read_rows(folder):
    with open(os.path.join(folder, "results.csv")) as f:
        return list(csv.DictReader(f))


def write_table(rows, folder):
    header = ["grid", "precision", "layout", "variant", "mapping", "tile (x y z)", "LB", "m",
              "m_slow", "blocks", "parts", "launches", "zero ends", "median ms", "FOM GB/s", "copy GB/s", "FOM/copy", "verified"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join([
            f"{r['nx']}x{r['ny']}x{r['nz']}", r["precision"], r["layout"], r["variant"],
            r["mapping"], r["tile"], str(r["launch_bounds"]), str(r["m"]),
            str(r.get("m_slow") or 1), str(r.get("blocks_per_item") or 1), str(r["parts"]),
            str(r.get("launches") or ""),
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
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kstencil", default=os.path.join(here, "..", "build", "openmp", "miniapp",
                                                           "kstencil"))
    parser.add_argument("--deck", default=os.path.join(here, "..", "inputs", "bench.toml"))
    parser.add_argument("--set", default="default")
    parser.add_argument("--out", default=None)
    parser.add_argument("--sizes", help="grids to run instead of the set's, e.g. 512x512x512,64x64x64")
    parser.add_argument("--plot-only", metavar="DIR")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("extra", nargs="*", help="overrides passed to every run")
    args = parser.parse_args()
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
