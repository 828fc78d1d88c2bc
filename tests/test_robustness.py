#!/usr/bin/python3
"""Robustness of the kstencil program: grids larger than memory, a full disk, signals.

Usage: test_robustness.py KSTENCIL_BINARY SOURCE_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

KSTENCIL = None
SOURCE = None
ENV = dict(os.environ, OMP_PROC_BIND="false", KOKKOS_DISABLE_WARNINGS="1",
           KSTENCIL_PYTHON="/usr/bin/python3", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def deck(name):
    return os.path.join(SOURCE, "inputs", name)


def run(args, env=ENV, timeout=300):
    return subprocess.run([KSTENCIL] + args, env=env, capture_output=True, text=True,
                          timeout=timeout)


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


class Robustness(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kstencil-robust-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_grid_larger_than_memory(self):
        # 4096^3 needs terabytes on any of these solvers; the check happens before anything is
        # allocated or written, says both numbers and offers a grid that fits.
        available = mem_available()
        cases = [("laplacian.toml", []), ("fdtd_cavity.toml", ["diagnostics.probes=[]"]),
                 ("poisson_3d.toml", []), ("poisson_3d.toml", ["run.solver=cg"])]
        for name, extra in cases:
            with self.subTest(deck=name, extra=extra):
                root = os.path.join(self.dir, "out")
                # CG's int row indices stop 4096^3 sooner (an error of its own).
                n = 1200 if extra == ["run.solver=cg"] else 4096
                r = run(["run", deck(name), f"grid.nx={n}", f"grid.ny={n}", f"grid.nz={n}",
                         f"output.root={root}"] + extra)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(f"[grid] nx = {n}: grid", r.stderr)
                self.assertIn("GiB in host memory per rank", r.stderr)
                self.assertIn("are available", r.stderr)
                self.assertIn("a grid that fits, e.g. [", r.stderr)
                self.assertFalse(os.path.exists(root))
                # The grid offered fits and is the largest cube that does: its need, scaled from
                # the message's (rounded to 0.1 GiB: 1% margins), against the message's available.
                need = float(r.stderr.split("needs about ")[1].split(" GiB")[0]) * 2**30
                free = float(r.stderr.split("but ")[1].split(" GiB")[0]) * 2**30
                fits = [int(v) for v in r.stderr.split("e.g. [")[1].split("]")[0].split(",")]
                self.assertEqual(len(set(fits)), 1)
                self.assertLessEqual(need * fits[0]**3 / n**3, 1.01 * free)
                self.assertGreater(need * (fits[0] + 1)**3 / n**3, 0.99 * free)
                if available:
                    self.assertLess(abs(free - available), 0.5 * available)
        # The sweep rejects such a configuration without launching it.
        r = run(["sweep", deck("laplacian.toml"), f"output.root={self.dir}/s", "sweep.confirm=0",
                 "--vary", "grid.nx,grid.ny,grid.nz=[32,32,32],[4096,4096,4096]"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "s", "laplacian", "results.jsonl")) as f:
            records = [json.loads(line) for line in f]
        big = [x for x in records if x["params"]["grid.nx"] == 4096 and x["status"] != "started"]
        self.assertEqual([x["status"] for x in big], ["rejected"])
        self.assertIn("GiB", big[0]["reason"])

    def mount_small_disk(self, size):
        disk = os.path.join(self.dir, "disk")
        os.makedirs(disk)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", disk],
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.skipTest("cannot mount a small tmpfs here (needs root): " + r.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", disk])
        return disk

    def test_full_disk(self):
        disk = self.mount_small_disk("300k")
        # FDTD's step files (about 200 KiB each) do not fit beyond the first: refused before the
        # first step with one clear message, exit 2, no folder left.
        h = "grid.hx=0.0625 grid.hy=0.0625 grid.hz=0.0625"
        args = ["run", deck("fdtd_cavity.toml"), "grid.nx=16", "grid.ny=16", "grid.nz=16",
                "output.every=10", f"output.root={disk}"] + h.split()
        r = run(args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stderr.count("kstencil: error:"), 1, r.stderr)
        self.assertIn("not enough free space for the run's", r.stderr)
        self.assertIn("allowed: fewer step files (output.every", r.stderr)
        self.assertEqual(os.listdir(disk), [])
        # Without the checks the write itself meets the full disk: HDF5's failure is one message
        # naming the file, the partial file is removed, and the process ends cleanly (MPI_Finalize
        # used to crash on the file HDF5 could not close).
        r = run(args, env=dict(ENV, KSTENCIL_TEST_NO_SPACE_CHECK="1"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("kstencil: error: HDF5 error writing", r.stderr)
        self.assertNotIn("Segmentation", r.stderr)
        self.assertFalse([f for f in os.listdir(os.path.join(disk, "fdtd_cavity"))
                          if f.endswith(".tmp")])
        # A run that fails before writing anything leaves no folder behind.
        shutil.rmtree(os.path.join(disk, "fdtd_cavity"))
        r = run(["run", deck("laplacian.toml"), "grid.nx=64", "grid.ny=64", "grid.nz=64",
                 f"output.root={disk}/a/b"])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("not enough free space", r.stderr)
        self.assertEqual(os.listdir(disk), [])

    def start(self, args, ranks=1):
        command = [KSTENCIL] + args
        if ranks > 1:
            command = [shutil.which("mpiexec"), "--oversubscribe", "-np", str(ranks)] + command
        return subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def stop_after(self, p, path, ranks=1, seconds=120):
        """Sends SIGTERM once `path` exists (the run is past its set-up), to every rank as a
        batch system does, and returns the status and output."""
        deadline = time.time() + seconds
        while not os.path.exists(path) and time.time() < deadline and p.poll() is None:
            time.sleep(0.05)
        time.sleep(0.5)
        if ranks == 1:
            p.send_signal(signal.SIGTERM)
        else:
            children = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True,
                                      text=True).stdout.split()
            self.assertEqual(len(children), ranks)
            for child in children:
                os.kill(int(child), signal.SIGTERM)
        out, err = p.communicate(timeout=120)
        return p.returncode, out, err

    def test_signal_fdtd(self):
        for ranks in (1, 2):
            with self.subTest(ranks=ranks):
                root = os.path.join(self.dir, f"fdtd{ranks}")
                p = self.start(["run", deck("fdtd_cavity.toml"), "time.steps=1000000",
                                "output.every=500000", f"output.root={root}"], ranks)
                folder = os.path.join(root, "fdtd_cavity")
                status, out, err = self.stop_after(
                    p, os.path.join(folder, "fdtd_cavity_000000.h5"), ranks)
                self.assertEqual(status, 4, out + err)
                with open(os.path.join(folder, "summary.json")) as f:
                    summary = json.load(f)
                step = summary["interrupted_at_step"]
                self.assertGreater(step, 0)
                self.assertTrue(summary["verified"])
                # The stop step's state in a checkpoint (test_restart.py continues one); no step
                # file off the output cadence.
                self.assertTrue(os.path.isfile(os.path.join(folder, f"checkpoint_{step:09d}.h5")))
                self.assertFalse(os.path.exists(os.path.join(folder, f"fdtd_cavity_{step:06d}.h5")))
                with open(os.path.join(folder, "fdtd_cavity.xdmf")) as f:
                    self.assertIn("fdtd_cavity_000000.h5", f.read())
                self.assertFalse([n for n in os.listdir(folder) if ".tmp" in n])
                self.assertEqual(out.count("stopped       by a signal"), 1)

    def test_killed_run_folder_is_overwritten(self):
        # SIGKILL (the OOM killer, a batch limit) leaves no summary, but the deck written first
        # still marks the folder as a run's: --overwrite replaces it.
        root = os.path.join(self.dir, "killed")
        args = ["run", deck("fdtd_cavity.toml"), f"output.root={root}"]
        p = self.start(args + ["time.steps=1000000", "output.every=500000"])
        folder = os.path.join(root, "fdtd_cavity")
        deadline = time.time() + 120
        while (not os.path.exists(os.path.join(folder, "fdtd_cavity_000000.h5"))
               and time.time() < deadline and p.poll() is None):
            time.sleep(0.05)
        p.kill()
        p.communicate(timeout=120)
        self.assertEqual(p.returncode, -signal.SIGKILL)
        self.assertFalse(os.path.exists(os.path.join(folder, "summary.json")))
        with open(os.path.join(folder, "deck.toml")) as f:
            self.assertIn("steps = 1000000", f.read())
        r = run(args + ["time.steps=2", "output.every=1"])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--overwrite", r.stderr)
        r = run(args + ["time.steps=2", "output.every=1", "--overwrite"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(n for n in os.listdir(folder) if n.endswith(".h5")),
                         [f"fdtd_cavity_00000{n}.h5" for n in range(3)])

    def test_signal_to_one_rank(self):
        # A signal to one rank (not a batch system's to all) stops every rank at the same step,
        # and every rank exits 4.
        root = os.path.join(self.dir, "one")
        status = os.path.join(self.dir, "status")
        os.makedirs(status)
        wrapper = ['sh', '-c', f'"$0" "$@"; echo $? > {status}/$OMPI_COMM_WORLD_RANK', KSTENCIL]
        p = subprocess.Popen([shutil.which("mpiexec"), "--oversubscribe", "-np", "2"] + wrapper +
                             ["run", deck("fdtd_cavity.toml"), "time.steps=1000000",
                              "output.every=500000", f"output.root={root}"],
                             env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        folder = os.path.join(root, "fdtd_cavity")
        deadline = time.time() + 120
        while (not os.path.exists(os.path.join(folder, "fdtd_cavity_000000.h5"))
               and time.time() < deadline and p.poll() is None):
            time.sleep(0.05)
        time.sleep(0.5)
        shells = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True,
                                text=True).stdout.split()
        self.assertEqual(len(shells), 2)
        ranks = subprocess.run(["pgrep", "-P", shells[-1]], capture_output=True,
                               text=True).stdout.split()
        self.assertEqual(len(ranks), 1)
        os.kill(int(ranks[0]), signal.SIGTERM)
        out, err = p.communicate(timeout=120)
        statuses = []
        for name in os.listdir(status):
            with open(os.path.join(status, name)) as f:
                statuses.append(f.read().strip())
        statuses.sort()
        self.assertEqual(statuses, ["4", "4"], out + err)
        with open(os.path.join(folder, "summary.json")) as f:
            step = json.load(f)["interrupted_at_step"]
        self.assertTrue(os.path.isfile(os.path.join(folder, f"checkpoint_{step:09d}.h5")))

    def test_signal_during_laplacian_timing(self):
        # The Laplacian's timed rounds stop at the next round (100000 rounds ran to the end): no
        # figures, the verified fields written, exit 4.
        root = os.path.join(self.dir, "lap")
        p = self.start(["run", deck("laplacian.toml"), "grid.nx=64", "grid.ny=64", "grid.nz=64",
                        "run.repeats=100000", f"output.root={root}"])
        time.sleep(2)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 4, out + err)
        self.assertIn("not timed (stopped by a signal)", out)
        with open(os.path.join(root, "laplacian", "summary.json")) as f:
            summary = json.load(f)
        self.assertTrue(summary["interrupted"])
        self.assertTrue(summary["verified"])
        self.assertIsNone(summary["fom_ratio"])
        self.assertNotIn("timing", summary)
        self.assertTrue(os.path.isfile(os.path.join(root, "laplacian", "laplacian_000000.h5")))

    def test_signal_to_the_group_while_plotting(self):
        # A terminal's Ctrl-C reaches the whole process group: python's plot, in a group of its
        # own, finishes (it was killed mid-plot: a traceback, no energy.png).
        root = os.path.join(self.dir, "plot")
        p = subprocess.Popen([KSTENCIL, "run", deck("fdtd_dipole.toml"), "time.steps=100",
                              f"output.root={root}"], env=ENV, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        folder = os.path.join(root, "fdtd_dipole")
        deadline = time.time() + 120
        while (not os.path.exists(os.path.join(folder, "energy.csv")) and time.time() < deadline
               and p.poll() is None):
            time.sleep(0.005)
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=120)
        self.assertIn(p.returncode, (0, 4), out + err)
        self.assertNotIn("Traceback", err)
        self.assertTrue(os.path.isfile(os.path.join(folder, "energy.png")), out + err)

    def test_signal_jacobi_and_sweep(self):
        root = os.path.join(self.dir, "jacobi")
        p = self.start(["run", deck("poisson_3d.toml"), "grid.nx=97", "grid.ny=97", "grid.nz=97",
                        "jacobi.print_every=1", f"output.root={root}"])
        # Past verification once it prints its first iteration.
        deadline = time.time() + 120
        line = ""
        while "Iteration" not in line and time.time() < deadline:
            line = p.stdout.readline()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 4, out + err)
        self.assertIn("Stopped by a signal at iteration", out)
        folder = os.path.join(root, "poisson_3d")
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        self.assertTrue(summary["interrupted"])
        self.assertFalse(summary["converged"])
        # No timed rounds after a stop (the signal would cut them short): no figures.
        self.assertIsNone(summary["time_per_iteration_s"])
        self.assertIsNone(summary["fom_ratio"])
        self.assertNotIn("timing", summary)
        self.assertIn("not timed (stopped by a signal)", out)
        self.assertTrue(os.path.isfile(os.path.join(folder, "history.csv")))
        stopped = summary["iterations"]
        self.assertEqual(os.path.basename(summary["checkpoint"]), f"checkpoint_{stopped:09d}.h5")
        self.assertTrue(os.path.isfile(os.path.join(folder, f"checkpoint_{stopped:09d}.h5")))
        # A sweep stops launching, writes its files from what finished, and resumes later.
        p = self.start(["sweep", deck("laplacian.toml"), f"output.root={self.dir}/s",
                        "sweep.confirm=0", "grid.nx=96", "grid.ny=96", "grid.nz=96",
                        "--tiles", "1:64", "kernel.variant=mdrange"])
        cache = os.path.join(self.dir, "s", "laplacian", "results.jsonl")
        status, out, err = self.stop_after(p, cache)
        self.assertEqual(status, 4, out + err)
        with open(os.path.join(self.dir, "s", "laplacian", "report.md")) as f:
            report = f.read()
        self.assertIn("Stopped by a signal", report)
        self.assertIn("not run", report)


if __name__ == "__main__":
    KSTENCIL, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
