#!/usr/bin/python3
"""`kstencil sweep` end to end: files, rejected and WRONG configurations, resuming after a kill,
best.toml, strategies, every solver, several ranks, bad input.

Usage: test_sweep.py KSTENCIL_BINARY SOURCE_DIR
"""
import csv
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import unittest

KSTENCIL = None
SOURCE = None
ENV = dict(os.environ, OMP_PROC_BIND="false", KOKKOS_DISABLE_WARNINGS="1",
           KSTENCIL_PYTHON="/usr/bin/python3", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")

# Two layouts, three tiles of the line kernel: [1, 2, 8] asks for 8 work items along layout right's
# contiguous axis (z), which line cannot do (rejected); in layout left it runs.
SMALL = """
[run]
name = "small"
warmup = 1
repeats = 3
[grid]
nx = 40
ny = 36
nz = 32
[kernel]
variant = "line"
[sweep]
confirm = 1
confirm_rounds = 2
[sweep.vary]
kernel.layout = ["right", "left"]
kernel.tile = [[0, 0, 0], [1, 4, 1], [1, 2, 8]]
"""


def run(args, cwd, env=None, ranks=1, timeout=300):
    command = [KSTENCIL] + args
    if ranks > 1:
        command = [shutil.which("mpiexec"), "--oversubscribe", "-np", str(ranks)] + command
    return subprocess.run(command, cwd=cwd, env=env or ENV, capture_output=True, text=True,
                          timeout=timeout)


def records(folder):
    with open(os.path.join(folder, "results.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def final(folder, phase="sweep"):
    """The finished records of a phase, by configuration id."""
    return {r["id"]: r for r in records(folder)
            if r["phase"] == phase and r["status"] != "started"}


class Sweep(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kstencil-sweep-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def deck(self, text, name="deck.toml"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text + f'\n[output]\nroot = "{self.dir}/out"\n')
        return path

    def test_small_sweep(self):
        deck = self.deck(SMALL)
        env = dict(ENV, KSTENCIL_TEST_CORRUPT="kernel.tile=[1, 2, 8]")
        r = run(["sweep", deck], self.dir, env)
        # A WRONG configuration makes the sweep's status 1, like a run that fails verification.
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        folder = os.path.join(self.dir, "out", "small")
        for name in ("results.csv", "results.jsonl", "report.md", "best.toml", "sweep.toml",
                     "runs.log", "tiles.png", "kernels.png"):
            self.assertTrue(os.path.isfile(os.path.join(folder, name)), name)
        got = final(folder)
        # The default (right, [0, 0, 0]) is c0000 itself: 6 points, 6 records.
        self.assertEqual(len(got), 6, sorted(got))
        status = {(tuple(r["params"]["kernel.tile"]), r["params"]["kernel.layout"]): r
                  for r in got.values()}
        rejected = status[((1, 2, 8), "right")]
        self.assertEqual(rejected["status"], "rejected")
        self.assertIn("contiguous axis", rejected["reason"])
        self.assertNotIn("wall_s", rejected)  # never launched
        wrong = status[((1, 2, 8), "left")]
        self.assertEqual(wrong["status"], "WRONG")
        self.assertIn('"reference_bitwise":false', wrong["reason"])
        ok = [r for r in got.values() if r["status"] == "ok"]
        self.assertEqual(len(ok), 4)
        for r in ok:
            self.assertTrue(r["summary"]["verified"])
            self.assertGreater(r["gbs"], 0)
            self.assertAlmostEqual(r["fom_ratio"], r["gbs"] / r["copy_gbs"], places=9)
            self.assertLessEqual(r["time_min_s"], r["time_median_s"])
            self.assertLessEqual(r["time_median_s"], r["time_max_s"])
            self.assertEqual(r["samples"], 3)
        # The CSV holds every record, the confirmation rounds included (the default and the best
        # other, 2 rounds).
        with open(os.path.join(folder, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(sum(row["phase"] == "sweep" for row in rows), 6)
        self.assertEqual(sum(row["phase"] == "confirm" for row in rows), 4)
        report = open(os.path.join(folder, "report.md")).read()
        self.assertIn("## WRONG", report)
        self.assertIn("## rejected", report)
        ranking = report.split("## Verified configurations")[1].split("## WRONG")[0]
        self.assertNotIn(wrong["id"], ranking)
        self.assertNotIn(rejected["id"], ranking)
        # best.toml: the best verified configuration, runnable as is.
        with open(os.path.join(folder, "best.toml"), "rb") as f:
            best = tomllib.load(f)
        self.assertNotEqual(best["kernel"]["tile"], [1, 2, 8])
        r = run(["run", os.path.join(folder, "best.toml"), f"output.root={self.dir}/best"],
                self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "best", "small-best", "summary.json")) as f:
            summary = json.load(f)
        self.assertTrue(summary["verified"])
        self.assertEqual(summary["layout"], best["kernel"]["layout"])
        # --replot: the files again from the cache, nothing run.
        before = open(os.path.join(folder, "results.jsonl")).read()
        for name in ("report.md", "results.csv", "tiles.png", "kernels.png"):
            os.remove(os.path.join(folder, name))
        r = run(["sweep", deck, "--replot"], self.dir)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # the WRONG one is still there
        for name in ("report.md", "results.csv", "tiles.png", "kernels.png"):
            self.assertTrue(os.path.isfile(os.path.join(folder, name)), name)
        self.assertEqual(open(os.path.join(folder, "results.jsonl")).read(), before)

    def test_resume_after_kill(self):
        deck = self.deck("""
[run]
name = "resume"
warmup = 1
repeats = 20
[grid]
nx = 96
ny = 96
nz = 96
[kernel]
variant = "mdrange"
[sweep]
confirm = 0
[sweep.tiles]
min = 8
max = 16
axis_max = [16, 4, 4]
""")
        folder = os.path.join(self.dir, "out", "resume")
        cache = os.path.join(folder, "results.jsonl")
        p = subprocess.Popen([KSTENCIL, "sweep", deck], cwd=self.dir, env=ENV,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None:
            if os.path.exists(cache) and len(final(folder)) >= 4:
                break
            time.sleep(0.05)
        self.assertIsNone(p.poll(), "the sweep ended before it could be killed")
        p.send_signal(signal.SIGKILL)
        p.wait()
        done = final(folder)
        self.assertGreaterEqual(len(done), 4)
        r = run(["sweep", deck], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(f"{len(done)} results were in the cache and not re-run", r.stdout)
        after = records(folder)
        for key in {r["key"] for r in done.values()}:
            # Launched once: one start, one result, the result unchanged.
            self.assertEqual(sum(a["key"] == key and a["status"] == "started" for a in after), 1)
            self.assertEqual(sum(a["key"] == key and a["status"] != "started" for a in after), 1)
        for id_, record in done.items():
            self.assertEqual(final(folder)[id_], record)
        with open(os.path.join(folder, "sweep.toml")) as f:
            self.assertIn("kernel.tile", f.read())
        # Every point ran in the end: the power-of-two tiles of 8 or 16 items with y, z <= 4 are
        # 8 of 8 items (every y, z but 4, 4) and 9 of 16, plus [0, 0, 0].
        self.assertEqual(len(final(folder)), 18)

    def test_strategies_and_restriction(self):
        base = SMALL.replace('name = "small"', 'name = "strategies"').replace(
            'variant = "line"', 'variant = "mdrange"').split("[sweep]")[0]
        deck = self.deck(base)
        # --tiles 1:64 with x*y*z <= 8: the restriction leaves tiles of 1 to 8 items.
        r = run(["sweep", deck, "--tiles", "1:64", "sweep.restrict=x*y*z <= 8 && x >= 1",
                 "sweep.strategy=random", "sweep.samples=3", "sweep.confirm=0"], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        folder = os.path.join(self.dir, "out", "strategies")
        got = final(folder)
        self.assertEqual(len(got), 4)  # the default and the 3 drawn
        for rec in got.values():
            x, y, z = rec["params"]["kernel.tile"]
            if rec["id"] != "default":
                self.assertLessEqual(x * y * z, 8)
        report = open(os.path.join(folder, "report.md")).read()
        # Power-of-two tiles of 1 to 64 items: 84, and [0, 0, 0]; of 1 to 8 items: 20.
        self.assertIn("20 configurations in the space (65 more left out by sweep.restrict)",
                      report)
        # Local search from the default ([0, 0, 0] is not a power-of-two tile: the first point).
        r = run(["sweep", deck, "--overwrite", "--vary", "kernel.tile=[1,1,1],[2,1,1],[4,1,1],"
                 "[8,1,1],[16,1,1]", "--vary", "kernel.layout=right,left", "sweep.strategy=local",
                 "sweep.confirm=0"], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        report = open(os.path.join(folder, "report.md")).read()
        self.assertIn("Local search:", report)
        got = final(folder)
        self.assertGreaterEqual(len(got), 2)
        self.assertLessEqual(len(got), 11)
        # From Kokkos' default [0, 0, 0] (the deck's tile) the search tries the tiles of the
        # fewest work items: [1, 1, 1] (whether it moves on depends on the timings).
        r = run(["sweep", deck, "--overwrite", "--tiles", "1:4", "sweep.strategy=local",
                 "sweep.confirm=0"], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        tiles = [rec["params"]["kernel.tile"] for rec in final(folder).values()]
        self.assertIn([0, 0, 0], tiles)
        self.assertIn([1, 1, 1], tiles)
        # The budget stops launches: 2 configurations besides the default.
        r = run(["sweep", deck, "--overwrite", "--vary", "kernel.tile=[1,1,1],[2,1,1],[4,1,1]",
                 "sweep.budget=2", "sweep.confirm=0"], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(final(folder)), 2)
        self.assertIn("budget", open(os.path.join(folder, "report.md")).read())

    def test_every_solver(self):
        cases = {
            "fdtd_cavity.toml": ["--vary", "kernel.tile=[0,0,0],[8,4,2]", "grid.nx=12",
                                 "grid.ny=12", "grid.nz=12", "time.steps=20", "diagnostics.probes=[]"],
            "jacobi_1d.toml": ["--vary", "jacobi.norm=reduce,atomic", "grid.nx=65536",
                               "jacobi.max_iterations=50", "jacobi.print_every=0"],
            "poisson_3d.toml": ["--vary", "run.precision=double,float", "run.solver=cg",
                                "grid.nx=12", "grid.ny=12", "grid.nz=12"],
        }
        for deck, extra in cases.items():
            with self.subTest(deck=deck):
                r = run(["sweep", os.path.join(SOURCE, "inputs", deck), f"output.root={self.dir}",
                         "run.name=s", "sweep.confirm=0", "--overwrite"] + extra, self.dir)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                got = final(os.path.join(self.dir, "s"))
                self.assertGreaterEqual(len(got), 2)
                for rec in got.values():
                    self.assertEqual(rec["status"], "ok", rec)
                    self.assertGreater(rec["gbs"], 0)
                    self.assertGreater(rec["time_median_s"], 0)

    def test_shipped_sweep_decks_pass_a_dry_run(self):
        # Every sweep deck the project ships (make bench SET=..., inputs/sweep_*.toml) passes the
        # schema: a bad value fails here, not on the GPU machine (a configuration this host cannot
        # run, such as a GPU-only kernel parameter, is rejected, not an error).
        decks = sorted(glob.glob(os.path.join(SOURCE, "inputs", "bench", "*.toml")) +
                       glob.glob(os.path.join(SOURCE, "inputs", "sweep_*.toml")))
        self.assertGreaterEqual(len(decks), 15)
        for deck in decks:
            with self.subTest(deck=os.path.basename(deck)):
                r = run(["sweep", deck, "--dry-run", f"output.root={self.dir}/dry"], self.dir)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_progress_bar_on_a_terminal(self):
        # On a terminal (script(1) gives one) a single process draws the bar; Open MPI's singleton
        # start must not read as mpiexec's ranks.
        deck = self.deck(SMALL.replace('name = "small"', 'name = "tty"'))
        command = " ".join([KSTENCIL, "sweep", deck, "sweep.confirm=0"])
        r = subprocess.run(["script", "-qec", command, "/dev/null"], cwd=self.dir, env=ENV,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("\033[K", r.stdout)

    def test_dry_run_counts_each_run_once(self):
        # The deck as given (layout right, Kokkos' tile) is also the space's first point: one run.
        r = run(["sweep", self.deck(SMALL), "--dry-run"], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("c0000 {", r.stdout)
        self.assertEqual(r.stdout.count("-> the same run as default (run once)"), 1)
        self.assertIn("6 configurations (0 left out by sweep.restrict), strategy product: 5 to "
                      "launch, 1 rejected, 1 the same as another", r.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")))

    def test_several_ranks(self):
        deck = self.deck(SMALL.replace('name = "small"', 'name = "ranks"'))
        r = run(["sweep", deck, "sweep.confirm=0"], self.dir, ranks=2)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        got = final(os.path.join(self.dir, "out", "ranks"))
        self.assertEqual(len(got), 6)
        self.assertEqual({rec["ranks"] for rec in got.values()}, {2})
        self.assertEqual(sum(rec["status"] == "ok" for rec in got.values()), 5)
        # Said once: one summary line, from rank 0.
        self.assertEqual(r.stdout.count("kstencil sweep ranks:"), 1)
        # Piped output gets plain lines, though mpiexec hands the ranks a pseudo-terminal.
        self.assertNotIn("\033[", r.stdout)
        self.assertEqual(r.stdout.count(" -> ok"), 5)
        # Replotted by one rank (as on another machine): the records of the machine that ran it.
        r = run(["sweep", deck, "--replot"], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("kstencil sweep ranks: 5 verified, 0 WRONG, 1 rejected", r.stdout)

    def test_profile(self):
        deck = self.deck(SMALL.replace('name = "small"', 'name = "profiled"'))
        r = run(["sweep", deck, "sweep.confirm=0", "--vary", "kernel.tile=[0,0,0],[1,4,1]",
                 "sweep.profile=/usr/bin/time -o {out}.time {command}"], self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        profiles = os.path.join(self.dir, "out", "profiled", "profiles")
        for which in ("best", "default"):
            self.assertTrue(os.path.isfile(os.path.join(profiles, which + ".time")))
            log = open(os.path.join(profiles, which + ".log")).read()
            self.assertIn("verification  PASS", log)

    def test_bad_input(self):
        deck = self.deck(SMALL)
        cases = [
            (["--vary", "kernel.tiles=[1,1,1]"], "unknown deck key kernel.tiles"),
            (["--vary", "kernel.layout=up,down"],
             "--vary 'kernel.layout=up,down': value \"up\": [kernel] layout = \"up\": not one of"),
            (["--vary", "kernel.tile=[32,4,1],[64,2,1"], "[64,2,1: not a TOML value"),
            (["grid.nx=[1,2"], "'grid.nx=[1,2': not a TOML value"),
            (["sweep.restrict=x * layout < 4"], "restrict"),
            (["sweep.restrict=x = 3"], "'=' assigns"),
            (["sweep.restrict=x / 0"], "allowed: a condition that is a number at every point"),
            (["sweep.strategy=exhaustive"], '"product", "random", "local"'),
            (["--tiles", "64:8"], "MIN <= MAX"),
            (["--vary", "output.root=a,b"], "not a sweep parameter"),
            (["--vary", "kernel.layout=left,left"],
             "--vary 'kernel.layout=left,left': \"left\" is given twice"),
            (["--vary", "grid.nx,grid.ny=[8,8],[8,8]"], "[8, 8] is given twice"),
        ]
        for extra, message in cases:
            with self.subTest(extra=extra):
                r = run(["sweep", deck] + extra, self.dir)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)
                self.assertFalse(os.path.exists(os.path.join(self.dir, "out")))
        bad = self.deck(SMALL.replace('kernel.layout = ["right", "left"]', 'kernel.layout = "left"'),
                        "bad.toml")
        r = run(["sweep", bad], self.dir)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("[sweep.vary] kernel.layout: a non-empty list of values", r.stderr)
        # A [sweep] key's error names its line of the deck.
        text = SMALL.replace("confirm = 1", "confirm = 1\nsamples = 0")
        bad = self.deck(text, "bad.toml")
        r = run(["sweep", bad], self.dir)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        line = text.split("\n").index("samples = 0") + 1
        self.assertIn(f"bad.toml:{line}: [sweep] samples = 0", r.stderr)
        # A value of the deck's [sweep.vary] is named where it is, not as a command-line override.
        bad = self.deck(SMALL.replace('kernel.layout = ["right", "left"]',
                                      'kernel.layout = ["right", "up"]'), "bad.toml")
        r = run(["sweep", bad], self.dir)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("bad.toml: [sweep.vary] kernel.layout: value \"up\": [kernel] layout",
                      r.stderr)
        self.assertNotIn("command-line", r.stderr)
        # A folder that is not a sweep's is not touched.
        os.makedirs(os.path.join(self.dir, "out", "small"))
        with open(os.path.join(self.dir, "out", "small", "notes.txt"), "w") as f:
            f.write("mine")
        r = run(["sweep", deck], self.dir)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("already exists and is not empty", r.stderr)
        self.assertEqual(os.listdir(os.path.join(self.dir, "out", "small")), ["notes.txt"])


if __name__ == "__main__":
    KSTENCIL, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
