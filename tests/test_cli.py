#!/usr/bin/python3
"""End-to-end checks of the kstencil program: decks, errors, outputs, HDF5/XDMF, ParaView.

Usage: test_cli.py KSTENCIL_BINARY SOURCE_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import unittest
import xml.etree.ElementTree as ET

import h5py
import numpy as np

KSTENCIL = None
SOURCE = None


def run(args, cwd=None):
    env = dict(os.environ, OMP_PROC_BIND="false", KOKKOS_DISABLE_WARNINGS="1",
               KSTENCIL_PYTHON="/usr/bin/python3")
    return subprocess.run([KSTENCIL] + args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


# The small deck shared with the C++ deck tests.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "decks", "small.toml")) as _f:
    SMALL_DECK = _f.read()


def sine_field(nx, ny, nz):
    i, j, k = np.arange(nx), np.arange(ny), np.arange(nz)
    sx, sy, sz = (np.sin(np.pi * a / (n - 1)) for a, n in ((i, nx), (j, ny), (k, nz)))
    # Array order (z, y, x) like the HDF5 datasets.
    return sz[:, None, None] * sy[None, :, None] * sx[None, None, :]


def stencil(u, h):
    """Seed 000's formula in its evaluation order and precision, on the interior of a (z, y, x)
    array; coefficients 1/h^2 are formed in double and rounded, as kstencil does."""
    t = u.dtype.type
    ix, iy, iz = (t(1.0 / (s * s)) for s in h)
    centre = t(-2) * (ix + iy + iz)
    c = u[1:-1, 1:-1, 1:-1]
    return (c * centre + (u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:]) * ix
            + (u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]) * iy
            + (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1]) * iz)


class Workdir(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kstencil-cli-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def deck(self, text, name="deck.toml"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_deck(self, text, *overrides):
        return run(["run", self.deck(text)] + list(overrides), cwd=self.dir)

    def check_in_paraview(self, xdmf, *fragments):
        """pvbatch reads every array of every step (tests/paraview_check.py) and says so."""
        self.assertIsNotNone(shutil.which("pvbatch"), "pvbatch not found (make test installs it)")
        r = subprocess.run(["xvfb-run", "-a", "pvbatch",
                            os.path.join(SOURCE, "tests", "paraview_check.py"), xdmf],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for fragment in fragments:
            self.assertIn(fragment, r.stdout)

    def expect_error(self, deck_text, overrides, *fragments):
        """Bad input: exit 2, a message with every fragment, nothing on stdout, no output."""
        r = run(["run", self.deck(deck_text)] + overrides, cwd=self.dir)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "")
        for fragment in fragments:
            self.assertIn(fragment, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")), "output was written")


class Commands(unittest.TestCase):
    def test_version(self):
        r = run(["--version"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"kstencil \d+\.\d+\.\d+ \(Kokkos \d+\.\d+\.\d+\)")

    def test_help_lists_subcommands(self):
        r = run(["--help"])
        self.assertEqual(r.returncode, 0)
        for word in ("run", "info", "keys", "--kokkos"):
            self.assertIn(word, r.stdout)
        # kstencil's help alone (Kokkos' own: --kokkos-help).
        self.assertNotIn("Kokkos command line arguments", r.stdout + r.stderr)
        self.assertTrue(r.stdout.startswith("kstencil"), r.stdout[:200])

    def test_bad_command_line_is_bad_input(self):
        # Exit 2, as a bad deck: no subcommand, an unknown option, an extra argument, a bad choice.
        for args in ([], ["run", "deck.toml", "--bogus"], ["info", "extra"], ["keys", "bogus"]):
            with self.subTest(args=args):
                r = run(args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertTrue(r.stderr.strip(), r.stdout)

    def test_info_reports_space_and_copy_bandwidth(self):
        version = run(["--version"]).stdout
        major, minor = map(int, version.split("(Kokkos ")[1].split(".")[:2])
        # Kokkos' own flag passes through (renamed in Kokkos 3.7): 1 thread, which no machine
        # this runs on has as its default.
        flag = "--kokkos-threads=1" if (major, minor) < (3, 7) else "--kokkos-num-threads=1"
        r = run(["info", flag])
        self.assertEqual(r.returncode, 0, r.stderr)
        for word in ("Kokkos version", "default execution space", "concurrency", "last-level cache",
                     "copy bandwidth"):
            self.assertIn(word, r.stdout)
        self.assertRegex(r.stdout, r"concurrency\s+1\n")
        self.assertRegex(r.stdout, r"copy bandwidth\s+[0-9.]+ GB/s")
        # A --kokkos-* flag this Kokkos does not know is said on stderr, not silently dropped.
        r = run(["info", "--kokkos-no-such-flag=3"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--kokkos-no-such-flag=3", r.stderr)

    def test_keys_lists_every_key(self):
        r = run(["keys"])
        self.assertEqual(r.returncode, 0)
        for key in ("nx", "layout", "iterate", "tile", "launch_bounds", "m", "m_slow", "parts", "overwrite",
                    "fields"):
            key = f"| `{key}` |"
            self.assertIn(key, r.stdout)

    def test_deck_keys_doc_matches_the_binary(self):
        # docs/DECK_KEYS.md is generated from `kstencil keys`: a key changed without regenerating
        # the file (scripts/deck-keys.py) fails here, with the diff.
        r = subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "deck-keys.py"),
                            "--kstencil", KSTENCIL, "--check"], capture_output=True, text=True,
                           timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_docs_the_source_cites_exist(self):
        # Comments give evidence as (docs/<page>.md, "Section"): the page must exist and hold that
        # section as a heading or a paragraph's bold lead, so a rewrite cannot drop it silently.
        cite = re.compile(r'(docs/[A-Za-z_]+\.md)(?:, "([^"]+)")?')
        found = 0
        for folder in ("src", "miniapp", "tests", "scripts"):
            for dirpath, _, files in os.walk(os.path.join(SOURCE, folder)):
                for name in files:
                    if not name.endswith((".cpp", ".hpp", ".py", ".sh", ".txt")):
                        continue
                    with open(os.path.join(dirpath, name), errors="replace") as f:
                        text = f.read()
                    for doc, section in cite.findall(text):
                        found += 1
                        where = f"{os.path.join(dirpath, name)} cites {doc}"
                        path = os.path.join(SOURCE, doc)
                        self.assertTrue(os.path.isfile(path), where)
                        if section:
                            with open(path) as f:
                                leads = [line.lstrip("#* ") for line in f
                                         if line.startswith(("#", "**"))]
                            self.assertTrue(any(lead.startswith(section) for lead in leads),
                                            f'{where}, "{section}": no such section')
        self.assertGreater(found, 20)


class GoodRuns(Workdir):
    def check_run(self, layout, precision, variant, *overrides):
        """A run of the small deck (m = 4) with the given kernel and further overrides."""
        r = self.run_deck(SMALL_DECK, f"kernel.layout={layout}", f"run.precision={precision}",
                          f"kernel.variant={variant}", *overrides)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("verification  PASS", r.stdout)
        folder = os.path.join(self.dir, "out", "small")
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        for key in ("kernel", "variant", "variant_requested", "layout", "iterate", "tile",
                    "points_per_group", "policy_tile", "m", "m_slow", "blocks_per_item", "parts",
                    "grid", "time_median_s", "fom_gbs", "copy_gbs", "fom_ratio", "verified"):
            self.assertIn(key, summary)
        self.assertEqual(summary["variant"], variant)
        self.assertEqual(summary["variant_requested"], variant)
        # The tile in work items per work group (x y z) with Kokkos' defaults filled in, and the
        # points a group covers; the console says the same.
        self.assertEqual(len(summary["tile"]), 3)
        self.assertTrue(all(t >= 1 for t in summary["tile"]), summary["tile"])
        self.assertTrue(all(p >= 1 for p in summary["points_per_group"]),
                        summary["points_per_group"])
        tile_line = (f"[{', '.join(map(str, summary['tile']))}] work items per group (x y z) = "
                     f"[{', '.join(map(str, summary['points_per_group']))}] points")
        self.assertIn(tile_line, r.stdout)
        if variant == "blocked":
            # The deck's m = 4; m x 1 points per block along y.
            self.assertEqual(summary["m"], 4)
            self.assertIn("4 x 1 points per block", r.stdout)
        self.assertEqual(summary["layout"], layout)
        self.assertEqual(summary["precision"], precision)
        self.assertEqual(summary["grid"], [21, 14, 9])
        self.assertTrue(summary["verified"])
        self.assertGreater(summary["fom_gbs"], 0)
        self.assertAlmostEqual(summary["fom_ratio"], summary["fom_gbs"] / summary["copy_gbs"])
        # The resolved deck holds every key with the overrides applied.
        with open(os.path.join(folder, "deck.toml"), "rb") as f:
            resolved = tomllib.load(f)
        self.assertEqual(resolved["kernel"]["layout"], layout)
        self.assertEqual(resolved["kernel"]["tile"], [0, 0, 0])
        self.assertEqual(sorted(os.listdir(folder)),
                         ["deck.toml", "small.xdmf", "small_000000.h5", "summary.json"])

        dtype = np.float32 if precision == "float" else np.float64
        with h5py.File(os.path.join(folder, "small_000000.h5"), "r") as h5:
            u, lap = h5["u"][...], h5["lap_u"][...]
            self.assertEqual(u.shape, (9, 14, 21))
            self.assertEqual(u.dtype, dtype)
            attrs = h5.attrs
            self.assertEqual(list(attrs["grid_dims"]), [21, 14, 9])
            self.assertEqual(list(attrs["spacing"]), [0.1, 0.2, 0.05])
            self.assertEqual(list(attrs["origin"]), [1.0, -2.0, 0.5])
            self.assertEqual(attrs["step"], 0)
            self.assertEqual(attrs["time"], 0.0)
            for name, want in (("kernel", "laplacian"), ("variant", variant), ("layout", layout),
                               ("precision", precision)):
                value = attrs[name]
                self.assertEqual(value.decode() if isinstance(value, bytes) else value, want)
            deck_text = attrs["deck"]
            deck_text = deck_text.decode() if isinstance(deck_text, bytes) else deck_text
            self.assertEqual(tomllib.loads(deck_text), resolved)
        # u is the analytic field (computed in double, then rounded to the run's precision; libm's
        # sin may differ from numpy's by an ulp), lap_u is the stencil of u in the same order.
        want = sine_field(21, 14, 9).astype(dtype)
        np.testing.assert_allclose(u, want, rtol=0, atol=4 * np.finfo(dtype).eps)
        np.testing.assert_array_equal(lap[1:-1, 1:-1, 1:-1],
                                      stencil(u, (0.1, 0.2, 0.05)))
        self.assertTrue(np.all(lap[0] == 0) and np.all(lap[:, :, -1] == 0))
        return folder

    def test_right_double_blocked(self):
        folder = self.check_run("right", "double", "blocked", "kernel.parts=1")
        with open(os.path.join(folder, "summary.json")) as f:
            self.assertEqual(json.load(f)["parts"], 1)

    def test_left_float_blocked_in_parts(self):
        # 12 updated rows in 3 parts of one block of 4, all in one launch.
        folder = self.check_run("left", "float", "blocked", "kernel.parts=3")
        with open(os.path.join(folder, "summary.json")) as f:
            self.assertEqual(json.load(f)["parts"], 3)

    def check_float_blocked_in_runs(self, nx, run, m_slow, words):
        # Layout left: x is contiguous, nx points (a multiple of the run); the deck's m = 4 is a
        # block of 4 x m_slow points in runs. lap_u against the stencil computed here.
        deck = SMALL_DECK.replace("nx = 21", "nx = %d" % nx)
        r = self.run_deck(deck, "kernel.layout=left", "run.precision=float",
                          "kernel.m_contiguous=%d" % run, "kernel.m_slow=%d" % m_slow)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("verification  PASS", r.stdout)
        self.assertIn("4 x %d points per block (y x slowest axis) in %s along the contiguous axis"
                      % (m_slow, words), r.stdout)
        folder = os.path.join(self.dir, "out", "small")
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["m_contiguous"], run)
        self.assertEqual(summary["points_per_group"][0], run * summary["tile"][0])
        with h5py.File(os.path.join(folder, "small_000000.h5"), "r") as h5:
            u, lap = h5["u"][...], h5["lap_u"][...]
        self.assertEqual(u.dtype, np.float32)
        np.testing.assert_array_equal(lap[1:-1, 1:-1, 1:-1], stencil(u, (0.1, 0.2, 0.05)))
        self.assertTrue(np.all(lap[:, :, 0] == 0) and np.all(lap[:, :, -1] == 0))

    def test_float_blocked_in_pairs(self):
        self.check_float_blocked_in_runs(22, 2, 1, "pairs")

    def test_float_blocked_in_quads(self):
        self.check_float_blocked_in_runs(24, 4, 2, "quads")

    def test_right_double_line(self):
        self.check_run("right", "double", "line")

    def test_left_double_mdrange(self):
        # mdrange updates one point per work item: the deck's m = 4 goes back to auto.
        self.check_run("left", "double", "mdrange", "kernel.m=auto")

    def test_xdmf_describes_the_data(self):
        folder = self.check_run("right", "double", "mdrange", "kernel.m=1")
        root = ET.parse(os.path.join(folder, "small.xdmf")).getroot()
        self.assertEqual(root.tag, "Xdmf")
        series = root.find("Domain/Grid")
        self.assertEqual(series.get("CollectionType"), "Temporal")
        step = series.find("Grid")
        self.assertEqual(float(step.find("Time").get("Value")), 0.0)
        self.assertEqual(step.find("Topology").get("TopologyType"), "3DCoRectMesh")
        self.assertEqual(step.find("Topology").get("Dimensions").split(), ["9", "14", "21"])
        geometry = step.find("Geometry")
        self.assertEqual(geometry.get("GeometryType"), "ORIGIN_DXDYDZ")
        origin, spacing = (list(map(float, d.text.split())) for d in geometry.findall("DataItem"))
        self.assertEqual(origin, [0.5, -2.0, 1.0])
        self.assertEqual(spacing, [0.05, 0.2, 0.1])
        names = {a.get("Name"): a.find("DataItem") for a in step.findall("Attribute")}
        self.assertEqual(set(names), {"u", "lap_u"})
        for name, item in names.items():
            self.assertEqual(item.get("Precision"), "8")
            self.assertEqual(item.text.strip(), f"small_000000.h5:/{name}")

    def test_paraview_opens_the_output(self):
        if os.environ.get("KSTENCIL_SKIP_PARAVIEW") == "1":
            self.skipTest("KSTENCIL_SKIP_PARAVIEW=1")
        folder = self.check_run("left", "double", "blocked")
        self.check_in_paraview(os.path.join(folder, "small.xdmf"), "lap_u")

    def test_paraview_opens_a_run_named_in_unicode(self):
        # A name starting with a multi-byte character: ParaView's reader misread the file names.
        r = self.run_deck(SMALL_DECK, "run.name=\u00fc")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.check_in_paraview(os.path.join(self.dir, "out", "\u00fc", "\u00fc.xdmf"), "lap_u")

    def test_overrides_change_any_key(self):
        r = self.run_deck(SMALL_DECK, "grid.nx=12", "run.name=renamed", "kernel.tile=[2, 3, 4]",
                          "kernel.variant=mdrange", "kernel.m=1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "out", "renamed", "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["grid"], [12, 14, 9])
        self.assertEqual(summary["tile"], [2, 3, 4])

    def test_existing_run_folder_is_refused_then_overwritten_on_request(self):
        self.assertEqual(self.run_deck(SMALL_DECK).returncode, 0)
        h5 = os.path.join(self.dir, "out", "small", "small_000000.h5")
        before = os.path.getmtime(h5)
        r = self.run_deck(SMALL_DECK)
        self.assertEqual(r.returncode, 2)
        self.assertIn("output.overwrite", r.stderr)
        self.assertEqual(os.path.getmtime(h5), before)
        r = run(["run", os.path.join(self.dir, "deck.toml"), "--overwrite"], cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(h5))

    def test_default_deck_runs(self):
        r = run(["run", os.path.join(SOURCE, "inputs", "laplacian.toml"), "grid.nx=32",
                 "grid.ny=32", "grid.nz=32", f"output.root={self.dir}"], cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("PASS", r.stdout)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "laplacian", "laplacian.xdmf")))


class BadDecks(Workdir):
    """Every bad input: a clear message naming file, key and allowed values; exit 2; no output."""

    def test_unknown_section(self):
        self.expect_error(SMALL_DECK + "[solver]\nx = 1\n", [], "deck.toml", "solver", "allowed")

    def test_path_too_long_for_mpi_io(self):
        # Open MPI's MPI-IO aborted (a buffer overflow) on HDF5 files of paths over about 245
        # bytes: refused first, with the keys to change; 223 bytes still write.
        version = subprocess.run(["mpiexec", "--version"], capture_output=True, text=True).stdout
        if "Open MPI" not in version and "OpenRTE" not in version:
            self.skipTest("the limit is Open MPI's")
        self.expect_error(SMALL_DECK, ["run.name=" + "n" * 120], "is too long", "output.root",
                          "run.name", "Open MPI")
        r = self.run_deck(SMALL_DECK, "run.name=" + "n" * 100)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.dir, "out", "n" * 100,
                                                    "n" * 100 + "_000000.h5")))

    def test_unknown_key(self):
        self.expect_error(SMALL_DECK.replace("m = 4", "points = 4"), [], "deck.toml:",
                          "[kernel] points", "layout")

    def test_wrong_type(self):
        self.expect_error(SMALL_DECK.replace("nx = 21", 'nx = "big"'), [], "deck.toml:", "nx",
                          "integer")

    def test_out_of_range(self):
        self.expect_error(SMALL_DECK.replace("nx = 21", "nx = 2"), [], "deck.toml:", "nx", ">= 3")

    def test_bad_choice(self):
        self.expect_error(SMALL_DECK.replace('layout = "right"', 'layout = "diagonal"'), [],
                          "deck.toml:", "layout", '"left"', '"right"')

    def test_bad_launch_bounds(self):
        self.expect_error(SMALL_DECK, ["kernel.launch_bounds=100"], "kernel.launch_bounds=100",
                          "128", "1024")

    def test_retired_variants_name_the_replacement(self):
        for word in ("register-blocked", "subdomain"):
            self.expect_error(SMALL_DECK, [f"kernel.variant={word}"], f"kernel.variant={word}",
                              f'[kernel] variant = "{word}": renamed: use "blocked"')
        for word in ("march", "scratch"):
            self.expect_error(SMALL_DECK.replace('"blocked"', f'"{word}"'), [], "deck.toml:",
                              f'[kernel] variant = "{word}": retired: use "blocked"')

    def test_parts_in_one_launch_was_removed(self):
        self.expect_error(SMALL_DECK, ["kernel.parts_in_one_launch=false"],
                          "[kernel] parts_in_one_launch: removed; blocked always runs its parts "
                          "in one launch")

    def test_key_the_kernel_cannot_use(self):
        # The small deck's m = 4 with mdrange, one point per work item.
        self.expect_error(SMALL_DECK, ["kernel.variant=mdrange"], "deck.toml: [kernel] m = 4",
                          "not valid for kernel mdrange", "one point per work item")
        self.expect_error(SMALL_DECK, ["kernel.variant=line", "kernel.parts=2"],
                          "[kernel] parts = 2", "not valid for kernel line")
        self.expect_error(SMALL_DECK, ["kernel.m=16", "kernel.m_slow=2"], "[kernel] m_slow = 2",
                          "blocked: m x m_slow must be at most 16")
        # Pairs: streaming stores, and rows of whole pairs (layout right: z has 9 points).
        self.expect_error(SMALL_DECK, ["kernel.m_contiguous=2", "kernel.streaming_stores=false"],
                          "[kernel] m_contiguous = 2", "pairs (2) for m x m_slow = 4 or 8",
                          "streaming_stores = true")
        for precision in ("float", "double"):
            self.expect_error(SMALL_DECK, ["kernel.m_contiguous=2", "run.precision=" + precision],
                              "[kernel] m_contiguous = 2", "a multiple of 2 points",
                              "extent, halo included, is 9")
        # Quads: float only.
        self.expect_error(SMALL_DECK, ["kernel.m_contiguous=4", "run.precision=double",
                                       "kernel.m_slow=2"],
                          "[kernel] m_contiguous = 4", "quads (4) for 4 x 2 in float")

    def test_negative_spacing(self):
        self.expect_error(SMALL_DECK.replace("hx = 0.1", "hx = -0.1"), [], "hx", ">= 1e-15")

    def test_tile_of_wrong_length(self):
        self.expect_error(SMALL_DECK, ["kernel.tile=[1, 2]"], "tile", "3")

    def test_malformed_override(self):
        self.expect_error(SMALL_DECK, ["nx=5"], "nx=5", "section.key=value")

    def test_unknown_override_key(self):
        self.expect_error(SMALL_DECK, ["grid.nw=5"], "grid.nw", "nx")

    def test_toml_syntax_error(self):
        self.expect_error(SMALL_DECK + "[grid\n", [], "deck.toml:", "syntax")

    def test_missing_deck(self):
        r = run(["run", os.path.join(self.dir, "nope.toml")], cwd=self.dir)
        self.assertEqual(r.returncode, 2)
        self.assertIn("nope.toml", r.stderr)


# A small FDTD cavity deck: mode (2,1,1) of a 1.2 x 1.0 x 0.8 box, 12 x 10 x 8 cells.
FDTD_DECK = """
[run]
solver = "fdtd"
name = "cavity"
[grid]
nx = 12
ny = 10
nz = 8
hx = 0.1
hy = 0.1
hz = 0.1
origin = [1.0, 2.0, 3.0]
[time]
steps = 40
courant = 0.8
[init]
field = "cavity-mode"
mode = [2, 1, 1]
[diagnostics]
every = 4
probes = [[1.6, 2.5, 3.4], [1.0, 2.0, 3.0]]
[output]
root = "out"
every = 20
"""


def discrete_mode(cells, h, mode, courant):
    """(omega, E shape per component as (z, y, x) arrays) of the discrete PEC cavity mode,
    written independently of kstencil from the Yee dispersion relation."""
    k = [m * np.pi / (n * d) for m, n, d in zip(mode, cells, h)]
    kappa = [2 / d * np.sin(kk * d / 2) for kk, d in zip(k, h)]
    dt = courant / np.sqrt(sum(1 / d ** 2 for d in h))
    omega = 2 / dt * np.arcsin(dt * np.sqrt(sum(q * q for q in kappa)) / 2)
    norm = np.hypot(kappa[0], kappa[1])
    amplitude = [kappa[1] / norm, -kappa[0] / norm, 0.0]
    shapes = []
    for c in range(3):
        axes = []
        for d in range(3):
            n = cells[d] + (0 if c == d else 1)
            x = (np.arange(n) + (0.5 if c == d else 0.0)) * h[d]
            f = np.cos(k[d] * x) if c == d else np.sin(k[d] * x)
            if c != d:
                f[0] = f[-1] = 0.0  # tangential E on the walls
            axes.append(f)
        shapes.append(amplitude[c] * axes[2][:, None, None] * axes[1][None, :, None]
                      * axes[0][None, None, :])
    return omega, dt, shapes


class FdtdRuns(Workdir):
    def run_cavity(self, *overrides):
        r = self.run_deck(FDTD_DECK, *overrides)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("verification  PASS", r.stdout)
        return os.path.join(self.dir, "out", "cavity")

    def check_cavity(self, layout, precision, variant, media):
        folder = self.run_cavity(f"kernel.layout={layout}", f"run.precision={precision}",
                                 f"kernel.variant={variant}", f"media.mode={media}")
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        self.assertTrue(summary["verified"])
        self.assertEqual(summary["variant"], variant)
        self.assertEqual(summary["values_per_cell"], 18 if media == "uniform" else 21)
        self.assertEqual(summary["bytes_per_cell_step"],
                         summary["values_per_cell"] * (4 if precision == "float" else 8))
        self.assertEqual(summary["timed_steps"], 40 - 10)  # every 4th step records energy
        self.assertGreater(summary["mcells_per_s"], 0)
        self.assertAlmostEqual(summary["effective_gbs"],
                               summary["mcells_per_s"] * 1e6 * summary["bytes_per_cell_step"] * 1e-9)
        self.assertAlmostEqual(summary["fom_ratio"], summary["effective_gbs"] / summary["copy_gbs"])
        self.assertEqual(sorted(os.listdir(folder)),
                         ["cavity.xdmf", "cavity_000000.h5", "cavity_000020.h5", "cavity_000040.h5",
                          "deck.toml", "energy.csv", "energy.png", "probes.csv", "summary.json"])
        # The energy is constant to rounding; its records are every 4th step.
        energy = np.genfromtxt(os.path.join(folder, "energy.csv"), delimiter=",", names=True)
        self.assertEqual(list(energy["step"]), list(range(0, 40, 4)))
        eps = np.finfo(np.float32 if precision == "float" else np.float64).eps
        self.assertLess(np.max(np.abs(energy["total"] / energy["total"][0] - 1)), 10 * 40 * eps)
        # E at the last step is the discrete mode times cos(omega t), computed here independently.
        omega, dt, shapes = discrete_mode((12, 10, 8), (0.1, 0.1, 0.1), (2, 1, 1), 0.8)
        self.assertAlmostEqual(summary["dt"], dt, places=15)
        with h5py.File(os.path.join(folder, "cavity_000040.h5"), "r") as h5:
            self.assertAlmostEqual(float(h5.attrs["time"]), 40 * dt, places=12)
            for c, name in enumerate(("ex", "ey", "ez")):
                values = h5[name][...]
                self.assertEqual(values.shape, shapes[c].shape)
                np.testing.assert_allclose(values, np.cos(omega * 40 * dt) * shapes[c], rtol=0,
                                           atol=20 * 41 * eps)
            self.assertEqual(h5["hx"].shape, (8, 10, 13))  # half cells along y and z
            self.assertEqual(list(h5["hz"].attrs["origin"]), [1.05, 2.05, 3.0])
        # Probes: both positions, every component, at each record.
        probes = np.genfromtxt(os.path.join(folder, "probes.csv"), delimiter=",", names=True)
        self.assertEqual(len(probes), 2 * 10)
        self.assertEqual(list(probes.dtype.names),
                         ["step", "time", "probe", "x", "y", "z", "ex", "ey", "ez", "hx", "hy", "hz"])
        return folder

    def test_cavity_right_double_cell_uniform(self):
        self.check_cavity("right", "double", "cell", "uniform")

    def test_cavity_left_float_column_arrays(self):
        self.check_cavity("left", "float", "column", "arrays")

    def test_cavity_xdmf_places_each_component_on_its_lattice(self):
        folder = self.check_cavity("left", "double", "cell", "uniform")
        root = ET.parse(os.path.join(folder, "cavity.xdmf")).getroot()
        steps = root.findall("Domain/Grid/Grid")
        dt = 0.8 * 0.1 / np.sqrt(3)
        np.testing.assert_allclose([float(g.find("Time").get("Value")) for g in steps],
                                   [0.0, 20 * dt, 40 * dt], rtol=1e-14)
        parts = {g.find("Attribute").get("Name"): g for g in steps[0].findall("Grid")}
        self.assertEqual(set(parts), {"ex", "ey", "ez", "hx", "hy", "hz"})
        for name, dims, origin in (("ex", "9 11 12", [3.0, 2.0, 1.05]),
                                   ("hy", "8 11 12", [3.05, 2.0, 1.05])):
            grid = parts[name]
            self.assertEqual(grid.find("Topology").get("Dimensions"), dims)
            got = list(map(float, grid.find("Geometry").findall("DataItem")[0].text.split()))
            np.testing.assert_allclose(got, origin)

    def test_paraview_opens_fdtd_output(self):
        if os.environ.get("KSTENCIL_SKIP_PARAVIEW") == "1":
            self.skipTest("KSTENCIL_SKIP_PARAVIEW=1")
        folder = self.run_cavity()
        self.check_in_paraview(os.path.join(folder, "cavity.xdmf"),
                               "PASS (18 arrays over 3 time steps)")

    def test_example_decks_run(self):
        for name, overrides in (("fdtd_cavity", ["grid.nx=16", "grid.ny=16", "grid.nz=16",
                                                  "grid.hx=0.0625", "grid.hy=0.0625",
                                                  "grid.hz=0.0625", "time.steps=20"]),
                                ("fdtd_dipole", ["grid.nx=24", "grid.ny=24", "grid.nz=24",
                                                 "media.block_lo=[15, 5, 5]",
                                                 "media.block_hi=[20, 19, 19]",
                                                 "source.position=[10, 12, 12]",
                                                 "diagnostics.probes=[[12, 12, 12]]",
                                                 "time.steps=30", "output.every=10"])):
            r = run(["run", os.path.join(SOURCE, "inputs", name + ".toml"),
                     f"output.root={self.dir}"] + overrides, cwd=self.dir)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("PASS", r.stdout)
            self.assertTrue(os.path.exists(os.path.join(self.dir, name, name + ".xdmf")))
            self.assertTrue(os.path.exists(os.path.join(self.dir, name, "energy.png")))


class FdtdBadDecks(Workdir):
    def expect_error(self, overrides, *fragments):
        super().expect_error(FDTD_DECK, overrides, *fragments)

    def test_courant_at_or_above_the_stability_limit(self):
        for value in ("1.0", "1.5"):
            self.expect_error([f"time.courant={value}"], "[time] courant", "real > 0 and < 1",
                              "unstable for Courant numbers >= 1")

    def test_source_outside_the_domain(self):
        self.expect_error(["source.kind=point", "source.position=[0.5, 2.5, 3.5]"],
                          "[source] position", "outside the domain", "[1, 2, 3] .. [2.2, 3, 3.8]")

    def test_negative_size(self):
        path = self.deck(FDTD_DECK.replace("nx = 12", "nx = -4"))
        r = run(["run", path], cwd=self.dir)
        self.assertEqual(r.returncode, 2)
        self.assertIn("deck.toml:6: [grid] nx = -4: out of range; allowed: integer >= 2", r.stderr)

    def test_unknown_material_mode(self):
        self.expect_error(["media.mode=tensor"], "[media] mode", '"uniform"', '"arrays"')

    def test_cavity_mode_needs_two_indices(self):
        self.expect_error(["init.mode=[0, 0, 3]"], "[init] mode", "at least two")

    def test_block_needs_per_cell_media(self):
        self.expect_error(["media.block_hi=[1.5, 2.5, 3.5]"], "[media] block_hi",
                          'media.mode = "arrays"')

    def test_probe_outside_the_domain(self):
        self.expect_error(["diagnostics.probes=[[1.5, 2.5, 9]]"], "[diagnostics] probes",
                          "probe 0")


SEED_004_OUTPUT = """Iteration = 0 error = 0.00272958
Iteration = 10 error = 0.00034546
Iteration = 20 error = 0.000210903
Iteration = 30 error = 0.000157015
Iteration = 40 error = 0.000127122
Iteration = 50 error = 0.00010783
Success!
"""

def assert_plate_harmonic(test, u):
    """The plate's interior satisfies the discrete Laplace equation to the stopping error."""
    lap = u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1]
    test.assertLess(np.max(np.abs(lap)), 1e-3)


JACOBI_2D = """
[run]
solver = "jacobi"
name = "plate"
[grid]
nx = 21
ny = 13
nz = 1
hx = 0.05
hy = 0.05
[jacobi]
tolerance = 1e-6
max_iterations = 5000
print_every = 100
[boundary]
x_low = 1.0
y_high = -1.0
[output]
root = "out"
"""


class JacobiRuns(Workdir):
    def test_classic_deck_prints_the_seeds_output(self):
        # auto: the host's default strategy (reduce; team on GPUs). Under the sanitizers auto only
        # (three repeats of 4M points: the suite's longest case there); make test runs them all,
        # and the unit tests run each strategy on small grids under the sanitizers too.
        norms = ("reduce", "reduce-range", "atomic", "kokkos-kernels", "team", "auto")
        if os.environ.get("KSTENCIL_SANITIZED"):
            norms = ("auto",)
        for norm in norms:
            r = run(["run", os.path.join(SOURCE, "inputs", "jacobi_1d.toml"),
                     f"output.root={self.dir}", f"jacobi.norm={norm}", "output.overwrite=true",
                     "run.repeats=3"], cwd=self.dir)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertTrue(r.stdout.startswith(SEED_004_OUTPUT), r.stdout)
            folder = os.path.join(self.dir, "jacobi_1d")
            with open(os.path.join(folder, "summary.json")) as f:
                summary = json.load(f)
            self.assertEqual(summary["iterations"], 57)
            self.assertTrue(summary["converged"])
            self.assertTrue(summary["verified"])
            self.assertEqual(summary["norm"], "reduce" if norm == "auto" else norm)
            self.assertEqual(summary["norm_requested"], norm)
            self.assertGreater(summary["time_per_iteration_s"], 0)
            self.assertIn("norm_share", summary)
            history = np.genfromtxt(os.path.join(folder, "history.csv"), delimiter=",", names=True)
            self.assertEqual(list(history["iteration"]), list(range(57)))
            self.assertTrue(os.path.exists(os.path.join(folder, "convergence.png")))
            with h5py.File(os.path.join(folder, "jacobi_1d_000057.h5"), "r") as h5:
                u = h5["u"][...]
                self.assertEqual(u.shape, (1, 1, 4194304))
                self.assertEqual(u.dtype, np.float32)
                self.assertEqual((u[0, 0, 0], u[0, 0, -1]), (5.0, 10.0))

    def test_2d_plate_and_paraview(self):
        r = self.run_deck(JACOBI_2D)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Success!", r.stdout)
        folder = os.path.join(self.dir, "out", "plate")
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        with h5py.File(os.path.join(folder, f"plate_{summary['iterations']:06d}.h5"), "r") as h5:
            u = h5["u"][...][0]
        assert_plate_harmonic(self, u)
        # Faces: x first (x_low = 1, x_high = 0), then y (y_high = -1 between the x faces).
        self.assertTrue(np.all(u[:, 0] == 1.0) and np.all(u[:, -1] == 0.0))
        self.assertTrue(np.all(u[-1, 1:-1] == -1.0) and np.all(u[0, 1:-1] == 0.0))
        if os.environ.get("KSTENCIL_SKIP_PARAVIEW") == "1":
            return
        self.check_in_paraview(os.path.join(folder, "plate.xdmf"),
                               "PASS (1 arrays over 1 time steps)")


class CgRuns(Workdir):
    def test_values_past_float_fail_verification(self):
        # ||b||^2 of a boundary at 1e15 overflows float: the solve's numbers are NaN, so the run
        # fails (the operator check alone passed it).
        r = run(["run", os.path.join(SOURCE, "inputs", "poisson_3d.toml"), "run.solver=cg",
                 "run.precision=float", "boundary.x_low=1e15", "grid.nx=17", "grid.ny=17",
                 "grid.nz=17", "output.enabled=false"], cwd=self.dir)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("FAIL (the solve's error is", r.stdout)
        self.assertIn("values past float's range", r.stdout)

    def test_same_deck_with_cg_and_jacobi(self):
        """One deck, two solvers: CG reaches Jacobi's tolerance in far fewer iterations and the two
        solutions agree to within what that tolerance allows."""
        results = {}
        for solver in ("cg", "jacobi"):
            r = self.run_deck(JACOBI_2D, f"run.solver={solver}", "cg.tolerance=1e-9",
                              "jacobi.tolerance=1e-9", "jacobi.max_iterations=20000",
                              f"run.name={solver}", "run.repeats=2")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("Success!", r.stdout)
            self.assertIn("verification  PASS", r.stdout)
            folder = os.path.join(self.dir, "out", solver)
            with open(os.path.join(folder, "summary.json")) as f:
                summary = json.load(f)
            self.assertEqual(summary["kernel"], solver)
            self.assertTrue(summary["converged"] and summary["verified"])
            self.assertLessEqual(summary["error"], 1e-9)
            history = np.genfromtxt(os.path.join(folder, "history.csv"), delimiter=",", names=True)
            self.assertAlmostEqual(history["error"][-1], summary["error"], delta=1e-15)
            self.assertTrue(os.path.exists(os.path.join(folder, "convergence.png")))
            with h5py.File(os.path.join(folder, f"{solver}_{summary['iterations']:06d}.h5"),
                           "r") as h5:
                results[solver] = (summary, h5["u"][...][0])
        cg, jacobi = results["cg"], results["jacobi"]
        # Printed errors: CG's first line is the initial residual, the same as Jacobi's first.
        self.assertAlmostEqual(cg[0]["true_error"], cg[0]["error"], delta=1e-12)
        self.assertLess(cg[0]["iterations"] * 10, jacobi[0]["iterations"])
        # ||u - u*|| <= error d sqrt(N) / lambda_min for each: d = 4 / h^2 = 1600, N = 273 and
        # lambda_min = 4 / h^2 (sin^2(pi / 40) + sin^2(pi / 24)) = 37.1, so 7.1e-7 each for 1e-9.
        self.assertLess(np.max(np.abs(cg[1] - jacobi[1])), 1.5e-6)
        self.assertGreater(np.max(np.abs(cg[1] - jacobi[1])), 0)

    def test_cg_output_opens_in_paraview(self):
        r = self.run_deck(JACOBI_2D, "run.solver=cg", "cg.tolerance=1e-6")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        folder = os.path.join(self.dir, "out", "plate")
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        with h5py.File(os.path.join(folder, f"plate_{summary['iterations']:06d}.h5"), "r") as h5:
            u = h5["u"][...][0]
            self.assertEqual(h5.attrs["kernel"], b"cg" if isinstance(h5.attrs["kernel"], bytes)
                             else "cg")
        assert_plate_harmonic(self, u)
        if os.environ.get("KSTENCIL_SKIP_PARAVIEW") == "1":
            return
        self.check_in_paraview(os.path.join(folder, "plate.xdmf"),
                               "PASS (1 arrays over 1 time steps)")

    def test_keys_lists_cg_keys(self):
        r = run(["keys", "cg"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for key in ("| `[cg]` | `tolerance` |", "| `[poisson]` | `rhs` |", '`"cg"`'):
            self.assertIn(key, r.stdout)


class CgBadDecks(Workdir):
    def expect_error(self, overrides, *fragments):
        super().expect_error(JACOBI_2D, ["run.solver=cg"] + overrides, *fragments)

    def test_tolerance_must_be_positive(self):
        self.expect_error(["cg.tolerance=-1"], "[cg] tolerance", "real > 0")

    def test_iterations_must_be_positive(self):
        self.expect_error(["cg.max_iterations=0"], "[cg] max_iterations", "integer >= 1")

    def test_matrix_too_large_for_int_rows(self):
        self.expect_error(["grid.nx=70000", "grid.ny=70000", "grid.nz=3"], "[grid] nx",
                          "int row indices", "at most 2147483647")

    def test_problem_keys_moved_to_poisson(self):
        self.expect_error(["jacobi.rhs=1.0"], "[jacobi] rhs")


class JacobiBadDecks(Workdir):
    def expect_error(self, overrides, *fragments):
        super().expect_error(JACOBI_2D, overrides, *fragments)

    def test_axis_without_interior(self):
        self.expect_error(["grid.ny=2"], "[grid] ny", "1 (no y axis) or at least 3")

    def test_z_axis_without_y_axis(self):
        self.expect_error(["grid.ny=1", "grid.nz=5"], "[grid] nz", "ny > 1")

    def test_tolerance_must_be_positive(self):
        self.expect_error(["jacobi.tolerance=0"], "[jacobi] tolerance", "real > 0")

    def test_unknown_norm(self):
        self.expect_error(["jacobi.norm=magic"], "[jacobi] norm", '"reduce"', '"atomic"')

    def test_blocked_norm_needs_a_3d_grid(self):
        self.expect_error(["jacobi.norm=blocked"], "[jacobi] norm", "one point along z",
                          '"team" for 1D and 2D grids')


if __name__ == "__main__":
    KSTENCIL = os.path.abspath(sys.argv.pop(1))
    SOURCE = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
