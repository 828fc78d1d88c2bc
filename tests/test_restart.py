#!/usr/bin/python3
"""Checkpoint/restart of FDTD, Jacobi and CG: a run stopped part-way (by its end, or by a signal)
and continued with `kstencil run DECK --restart FILE` ends as the uninterrupted run does: fields,
step files, XDMF, energy/probes/history CSVs and the printed history, on 1 rank and across rank
counts; decks that change the problem, and files that are no checkpoint, are refused.

Usage: test_restart.py KSTENCIL_BINARY SOURCE_DIR
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import h5py
import numpy as np

KSTENCIL = None
SOURCE = None
MPIEXEC = shutil.which("mpiexec")
ENV = dict(os.environ, OMP_PROC_BIND="false", OMP_NUM_THREADS="1", KOKKOS_DISABLE_WARNINGS="1",
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", KSTENCIL_PYTHON="/usr/bin/python3")

# FDTD with everything a checkpoint must carry: a source (its phase), probes, a lossy block (per-cell
# media), energy every 5 steps, fields every 10.
FDTD = ["grid.nx=20", "grid.ny=18", "grid.nz=16", "media.block_lo=[8.0, 4.0, 4.0]",
        "media.block_hi=[14.0, 12.0, 10.0]", "source.position=[6.0, 9.0, 8.0]",
        "source.delay=10.0", "source.width=4.0", "source.frequency=0.1",
        "diagnostics.probes=[[7.0, 9.0, 8.0], [12.0, 9.0, 8.0]]", "diagnostics.plot=false",
        "output.every=10"]
POISSON = ["grid.nx=17", "grid.ny=15", "grid.nz=13", "grid.hx=0.0625", "grid.hy=0.0625",
           "grid.hz=0.0625", "jacobi.tolerance=1e-5", "jacobi.print_every=7",
           "cg.tolerance=1e-9", "cg.print_every=1"]


def deck(name):
    return os.path.join(SOURCE, "inputs", name)


def launch(ranks, args, timeout=300):
    command = [MPIEXEC, "--oversubscribe", "-np", str(ranks), KSTENCIL] if ranks > 1 else [KSTENCIL]
    return subprocess.run(command + args, env=ENV, capture_output=True, text=True, timeout=timeout)


def datasets(path):
    with h5py.File(path) as f:
        return {name: np.array(f[name]) for name in f}


def iteration_lines(text):
    return [line for line in text.splitlines() if line.startswith("Iteration = ")]


def checkpoint_steps(folder):
    return sorted(int(re.findall(r"\d+", os.path.basename(p))[0])
                  for p in glob.glob(os.path.join(folder, "checkpoint_*.h5")))


class Restart(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kstencil-restart-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_ok(self, ranks, args, status=0):
        r = launch(ranks, args)
        self.assertEqual(r.returncode, status, " ".join(args) + "\n" + r.stdout + r.stderr)
        return r

    def assert_same_files(self, a, b, names):
        for name in names:
            with open(os.path.join(a, name)) as fa, open(os.path.join(b, name)) as fb:
                self.assertEqual(fa.read(), fb.read(), name)

    def assert_same_fields(self, a, b, pattern):
        files_a = sorted(os.path.basename(p) for p in glob.glob(os.path.join(a, pattern)))
        files_b = sorted(os.path.basename(p) for p in glob.glob(os.path.join(b, pattern)))
        self.assertEqual(files_a, files_b)
        self.assertTrue(files_a)
        for name in files_a:
            want, got = datasets(os.path.join(a, name)), datasets(os.path.join(b, name))
            self.assertEqual(sorted(want), sorted(got), name)
            for field in want:
                self.assertEqual(want[field].dtype, got[field].dtype)
                self.assertTrue(np.array_equal(want[field], got[field]), f"{name}:{field}")
        return files_a

    def test_fdtd_bitwise_across_restarts_and_rank_counts(self):
        for precision, ranks_before, ranks_after in (("double", 1, 1), ("double", 2, 3),
                                                     ("float", 3, 1)):
            with self.subTest(precision=precision, ranks=(ranks_before, ranks_after)):
                base = [deck("fdtd_dipole.toml"), f"run.precision={precision}"] + FDTD
                whole = os.path.join(self.dir, f"whole-{precision}-{ranks_before}")
                self.run_ok(1, ["run"] + base + ["time.steps=60", f"output.root={whole}"])
                # 30 steps with a checkpoint every 10 (the last two kept), then on to 60.
                root = os.path.join(self.dir, f"parts-{precision}-{ranks_before}")
                first = base + ["checkpoint.every=10", f"output.root={root}"]
                self.run_ok(ranks_before, ["run"] + first + ["time.steps=30"])
                folder = os.path.join(root, "fdtd_dipole")
                self.assertEqual(checkpoint_steps(folder), [20, 30])
                r = self.run_ok(ranks_after, ["run"] + first + [
                    "time.steps=60", "--restart", os.path.join(folder, "checkpoint_000000030.h5")])
                self.assertIn("restart", r.stdout)
                self.assertEqual(checkpoint_steps(folder), [50, 60])
                a = os.path.join(whole, "fdtd_dipole")
                steps = self.assert_same_fields(a, folder, "fdtd_dipole_*.h5")
                self.assertEqual(len(steps), 7)  # 0, 10, ..., 60
                self.assert_same_files(a, folder, ["energy.csv", "probes.csv", "fdtd_dipole.xdmf"])
                with open(os.path.join(folder, "summary.json")) as f:
                    summary = json.load(f)
                self.assertEqual(summary["restarted_from"]["step"], 30)
                self.assertTrue(summary["verified"])
                # The checkpoint holds the state at its step: E at 60 dt equals the step file's.
                last = datasets(os.path.join(folder, "checkpoint_000000060.h5"))
                final = datasets(os.path.join(folder, "fdtd_dipole_000060.h5"))
                for c in ("ex", "ey", "ez", "hx", "hy", "hz"):
                    self.assertTrue(np.array_equal(last[c], final[c]), c)

    def poisson_pair(self, solver, short, ranks_before, ranks_after):
        """The solve uninterrupted on ranks_before ranks, and stopped after `short` iterations
        (its end) and continued on ranks_after ranks; returns both folders and outputs."""
        base = [deck("poisson_3d.toml"), f"run.solver={solver}"] + POISSON
        tag = f"{solver}-{ranks_before}-{ranks_after}"
        whole = os.path.join(self.dir, "whole-" + tag)
        a = self.run_ok(ranks_before, ["run"] + base + [f"output.root={whole}"])
        root = os.path.join(self.dir, "parts-" + tag)
        first = base + [f"checkpoint.every={short // 2}", f"output.root={root}"]
        b1 = self.run_ok(ranks_before, ["run"] + first + [f"{solver}.max_iterations={short}"])
        folder = os.path.join(root, "poisson_3d")
        checkpoint = os.path.join(folder, f"checkpoint_{short:09d}.h5")
        self.assertTrue(os.path.isfile(checkpoint))
        b2 = self.run_ok(ranks_after, ["run"] + first + ["--restart", checkpoint])
        return os.path.join(whole, "poisson_3d"), folder, a.stdout, b1.stdout + b2.stdout

    def test_jacobi_and_cg_bitwise(self):
        for solver, short in (("jacobi", 40), ("cg", 10)):
            with self.subTest(solver=solver):
                a, b, out_a, out_b = self.poisson_pair(solver, short, 1, 1)
                self.assertEqual(iteration_lines(out_a), iteration_lines(out_b))
                self.assertGreater(len(iteration_lines(out_a)), 3)
                self.assert_same_files(a, b, ["history.csv", "poisson_3d.xdmf"])
                final = self.assert_same_fields(a, b, "poisson_3d_*[0-9].h5")
                self.assertEqual(len(final), 1)
                with open(os.path.join(b, "summary.json")) as f:
                    summary = json.load(f)
                self.assertTrue(summary["converged"])
                self.assertEqual(summary["restarted_from"]["step"], short)

    def test_poisson_other_rank_counts(self):
        # The iterate of Jacobi does not depend on the ranks (bitwise); CG's dot products are summed
        # per rank, so its iterates agree to rounding: the same iteration count, u within 1e-12.
        a, b, _, _ = self.poisson_pair("jacobi", 40, 2, 3)
        self.assert_same_fields(a, b, "poisson_3d_*[0-9].h5")
        a, b, _, _ = self.poisson_pair("cg", 10, 3, 2)
        fa = glob.glob(os.path.join(a, "poisson_3d_*[0-9].h5"))
        fb = glob.glob(os.path.join(b, "poisson_3d_*[0-9].h5"))
        self.assertEqual(len(fa), 1)
        self.assertEqual(len(fb), 1)
        ua, ub = datasets(fa[0])["u"], datasets(fb[0])["u"]
        # Both solve A u = b: |u_a - u_b| <= (|r_a| + |r_b|) / lambda_min, |r| = error d sqrt(N)
        # (the residuals recomputed from u), lambda_min of the interior operator
        # sum_a 4/h^2 sin^2(pi / (2 (n_a - 1))).
        n, h = np.array([17, 15, 13]), 0.0625
        d = 3 * 2 / h**2
        lambda_min = sum(4 / h**2 * np.sin(np.pi / (2 * (m - 1)))**2 for m in n)
        errors = []
        for folder in (a, b):
            with open(os.path.join(folder, "summary.json")) as f:
                summary = json.load(f)
            self.assertTrue(summary["converged"])
            errors.append(summary["true_error"])
        bound = sum(errors) * d * np.sqrt(np.prod(n)) / lambda_min
        self.assertLess(np.sqrt(np.sum((ua - ub)**2)), bound)
        self.assertGreater(bound, 0)

    def test_signal_then_restart(self):
        # SIGTERM part-way: the checkpoint of the stop step is written, and continuing from it (on
        # another rank count, to a later end) gives the uninterrupted run's fields and energy.
        root = os.path.join(self.dir, "signal")
        args = ["run", deck("fdtd_cavity.toml"), "time.steps=1000000", "output.every=500000",
                f"output.root={root}"]
        p = subprocess.Popen([KSTENCIL] + args, env=ENV, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        folder = os.path.join(root, "fdtd_cavity")
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(folder, "fdtd_cavity_000000.h5")) and \
                time.time() < deadline and p.poll() is None:
            time.sleep(0.05)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 4, out + err)
        with open(os.path.join(folder, "summary.json")) as f:
            step = json.load(f)["interrupted_at_step"]
        checkpoint = os.path.join(folder, f"checkpoint_{step:09d}.h5")
        self.assertTrue(os.path.isfile(checkpoint), os.listdir(folder))
        self.assertFalse([n for n in os.listdir(folder) if ".tmp" in n])
        # What a run killed while writing leaves (SIGKILL: no clean-up); the restart removes it.
        stray = ["fdtd_cavity_500000.h5.tmp", f"checkpoint_{step + 1:09d}.h5.tmp"]
        for name in stray:
            with open(os.path.join(folder, name), "w") as f:
                f.write("partial")
        end = step + 25
        self.run_ok(2, args[:2] + [f"time.steps={end}", "output.every=500000",
                                   f"output.root={root}", "--restart", checkpoint])
        self.assertFalse([n for n in os.listdir(folder) if ".tmp" in n])
        whole = os.path.join(self.dir, "whole")
        self.run_ok(1, args[:2] + [f"time.steps={end}", "output.every=500000",
                                   f"output.root={whole}"])
        a = os.path.join(whole, "fdtd_cavity")
        self.assertEqual(self.assert_same_fields(a, folder, "fdtd_cavity_*.h5"),
                         ["fdtd_cavity_000000.h5", f"fdtd_cavity_{end:06d}.h5"])
        self.assert_same_files(a, folder, ["energy.csv", "fdtd_cavity.xdmf"])

    def test_refused(self):
        root = os.path.join(self.dir, "refused")
        base = [deck("poisson_3d.toml")] + POISSON + [f"output.root={root}"]
        self.run_ok(1, ["run"] + base + ["jacobi.max_iterations=20", "checkpoint.every=10"])
        folder = os.path.join(root, "poisson_3d")
        checkpoint = os.path.join(folder, "checkpoint_000000020.h5")
        before = sorted(os.listdir(folder))
        other = os.path.join(self.dir, "other")
        cases = [
            (base + ["grid.nx=19"], checkpoint, "[grid] nx = 19: differs from the checkpoint"),
            (base + ["boundary.x_low=2.0"], checkpoint, "[boundary] x_low = 2.0: differs"),
            (base + ["run.precision=float"], checkpoint, "[run] precision = \"float\": differs"),
            (base + ["run.solver=cg"], checkpoint, "a checkpoint of the jacobi solver"),
            ([deck("fdtd_cavity.toml"), f"output.root={other}"], checkpoint,
             "a checkpoint of the jacobi solver"),
            ([deck("laplacian.toml"), f"output.root={other}"], checkpoint,
             "has no checkpoints"),
            # The run folder is the checkpoint's: its XDMF lists the steps before it.
            (base + ["run.name=renamed"], checkpoint,
             '[run] name = "renamed": a restart continues the run folder of its checkpoint'),
            (base[:-1] + [f"output.root={other}"], checkpoint,
             f'[output] root = "{other}": a restart continues the run folder of its checkpoint'),
            (base, os.path.join(folder, "missing.h5"), "no such checkpoint file"),
            (base, folder, "a folder, not a checkpoint file"),
            (base, os.path.join(folder, "deck.toml"), "not a kstencil checkpoint"),
            (base, os.path.join(folder, "poisson_3d_000020.h5"), "not a kstencil checkpoint"),
        ]
        for args, restart, message in cases:
            with self.subTest(args=args[-2:], restart=os.path.basename(restart)):
                r = launch(1, ["run"] + args + ["--restart", restart])
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)
                self.assertEqual(r.stderr.count("error"), 1, r.stderr)
                self.assertEqual(sorted(os.listdir(folder)), before)
                self.assertFalse(os.path.exists(other))
        # A link to the checkpoint, elsewhere, continues the folder the checkpoint is in.
        link = os.path.join(self.dir, "latest.h5")
        os.symlink(checkpoint, link)
        r = launch(1, ["run"] + base + ["jacobi.max_iterations=30", "--restart", link])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(folder, "summary.json")) as f:
            self.assertGreater(json.load(f)["iterations"], 20)
        # An FDTD end before the checkpoint's step.
        fdtd_root = os.path.join(self.dir, "fdtd")
        fdtd = [deck("fdtd_cavity.toml"), "time.steps=20", "checkpoint.every=20",
                f"output.root={fdtd_root}"]
        self.run_ok(1, ["run"] + fdtd)
        r = launch(1, ["run"] + fdtd[:-2] + ["time.steps=10", f"output.root={fdtd_root}",
                                              "--restart", os.path.join(
                                                  fdtd_root, "fdtd_cavity",
                                                  "checkpoint_000000020.h5")])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("[time] steps = 10: ends before the checkpoint", r.stderr)
        # Checkpoints need a run folder.
        r = launch(1, ["run"] + fdtd[:-1] + ["output.enabled=false"])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("[checkpoint] every = 20: checkpoints are written into the run folder",
                      r.stderr)


if __name__ == "__main__":
    KSTENCIL, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
