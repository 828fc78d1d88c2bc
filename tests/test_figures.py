#!/usr/bin/python3
"""The figures of merit against hand counts: the Laplacian's bytes (seed 000's count of the points
a perfect cache would move) counted point by point on small odd grids, and every solver's GB/s
against its bytes and its median time; FDTD's probes against the fields in its HDF5 files.

Usage: test_figures.py KSTENCIL_BINARY SOURCE_DIR
"""
import csv
import glob
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py

KSTENCIL = None
SOURCE = None
ENV = dict(os.environ, OMP_PROC_BIND="false", KOKKOS_DISABLE_WARNINGS="1")


def summary_of(args, folder):
    r = subprocess.run([KSTENCIL, "run"] + args + [f"output.root={folder}", "run.name=f",
                                                   "output.overwrite=true",
                                                   "output.fields=false"],
                       env=ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(folder, "f", "summary.json")) as f:
        return json.load(f)


def laplacian_bytes_by_hand(n, size):
    """Points read: every point some interior point's stencil touches; written: the interior."""
    nx, ny, nz = n
    read = set()
    for i, j, k in itertools.product(range(1, nx - 1), range(1, ny - 1), range(1, nz - 1)):
        for d in ((0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
            read.add((i + d[0], j + d[1], k + d[2]))
    written = (nx - 2) * (ny - 2) * (nz - 2)
    return (len(read) + written) * size


class Figures(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kstencil-figures-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_laplacian_bytes_and_fom(self):
        inputs = os.path.join(SOURCE, "inputs", "laplacian.toml")
        for n, precision in (((5, 4, 7), "double"), ((9, 6, 3), "float"), ((12, 11, 10), "double")):
            with self.subTest(n=n, precision=precision):
                s = summary_of([inputs, f"grid.nx={n[0]}", f"grid.ny={n[1]}", f"grid.nz={n[2]}",
                                f"run.precision={precision}"], self.dir)
                size = 8 if precision == "double" else 4
                self.assertEqual(s["bytes"], laplacian_bytes_by_hand(n, size))
                self.assertAlmostEqual(s["fom_gbs"], s["bytes"] / s["time_median_s"] * 1e-9,
                                       delta=1e-9 * s["fom_gbs"])
                self.assertEqual(s["timing"]["median_s"], s["time_median_s"])
                self.assertEqual(s["timing"]["samples"], s["repeats"])
                self.assertLessEqual(s["time_min_s"], s["time_median_s"])
                self.assertLessEqual(s["time_median_s"], s["time_max_s"])

    def test_jacobi_and_cg_bandwidth(self):
        deck = os.path.join(SOURCE, "inputs", "poisson_3d.toml")
        # Jacobi reads the old iterate and writes the new one: 2 values per point.
        s = summary_of([deck, "grid.nx=17", "grid.ny=17", "grid.nz=17", "jacobi.print_every=0"],
                       self.dir)
        self.assertAlmostEqual(s["effective_gbs"],
                               2 * 17**3 * 8 / s["time_per_iteration_s"] * 1e-9,
                               delta=1e-9 * s["effective_gbs"])
        self.assertEqual(s["timing"]["median_s"], s["time_per_iteration_s"])
        # CG: its bytes per iteration over the mean iteration time of the solve.
        s = summary_of([deck, "run.solver=cg", "grid.nx=17", "grid.ny=17", "grid.nz=17",
                        "cg.print_every=0"], self.dir)
        self.assertAlmostEqual(s["time_per_iteration_s"], s["solve_s"] / s["iterations"],
                               delta=1e-12)
        self.assertAlmostEqual(s["effective_gbs"],
                               s["bytes_per_iteration"] / s["time_per_iteration_s"] * 1e-9,
                               delta=1e-9 * s["effective_gbs"])
        # A CG solve that starts converged (no source, zero boundaries) runs no iteration: no
        # figure, not a 0 (a sweep would rank it).
        s = summary_of([deck, "run.solver=cg", "grid.nx=9", "grid.ny=9", "grid.nz=9",
                        "poisson.rhs=0.0", "boundary.x_low=0.0", "cg.print_every=0"], self.dir)
        self.assertEqual(s["iterations"], 0)
        for key in ("time_per_iteration_s", "effective_gbs", "copy_gbs", "fom_ratio"):
            self.assertIsNone(s[key], key)
        self.assertNotIn("timing", s)

    def test_fdtd_probes_equal_the_written_fields(self):
        # Probes off the lattice's half points (no rounding ties), one near a wall (clamped); the
        # steps both record: 0, 10, 20, 30.
        deck = os.path.join(SOURCE, "inputs", "fdtd_cavity.toml")
        probes = "[[0.31, 0.47, 0.52], [0.9, 0.13, 0.77], [0.01, 0.99, 0.5]]"
        r = subprocess.run([KSTENCIL, "run", deck, f"output.root={self.dir}", "run.name=p",
                            "grid.nx=12", "grid.ny=10", "grid.nz=8", "grid.hx=0.0833",
                            "grid.hy=0.1", "grid.hz=0.125", "time.steps=40", "output.every=10",
                            "diagnostics.every=5", f"diagnostics.probes={probes}"],
                           env=ENV, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        folder = os.path.join(self.dir, "p")
        with open(os.path.join(folder, "probes.csv")) as f:
            rows = list(csv.DictReader(f))
        compared = 0
        for path in sorted(glob.glob(os.path.join(folder, "p_*.h5"))):
            with h5py.File(path) as h5:
                step = int(h5.attrs["step"])
                for row in (r for r in rows if int(r["step"]) == step):
                    position = [float(row[a]) for a in "xyz"]
                    for name in ("ex", "ey", "ez", "hx", "hy", "hz"):
                        d = h5[name]
                        index = []
                        for axis in range(3):
                            x = (position[axis] - d.attrs["origin"][axis]) / d.attrs["spacing"][axis]
                            index.append(min(max(math.floor(x + 0.5), 0), d.attrs["dims"][axis] - 1))
                        # Datasets are (z, y, x); the CSV holds the value to 17 digits.
                        self.assertEqual(float(row[name]), float(d[index[2], index[1], index[0]]),
                                         (step, name, position, index))
                        compared += 1
        self.assertEqual(compared, 4 * 3 * 6)


if __name__ == "__main__":
    KSTENCIL, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
