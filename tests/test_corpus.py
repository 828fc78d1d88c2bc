#!/usr/bin/python3
"""kstencil's hostile-input corpus (tests/corpus/cases.toml): every case is refused with its exit
status and message, without a crash, and nothing is written.

Usage: test_corpus.py KSTENCIL_BINARY SOURCE_DIR
"""
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import unittest

KSTENCIL = None
SOURCE = None
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


# Decks made at run time: too big to keep in the repository, or not files at all. Each writes (or
# names) the deck in the case's folder and returns its path.
def _text(text):
    def make(folder):
        path = os.path.join(folder, "deck.toml")
        with open(path, "w") as f:
            f.write(text)
        return path
    return make


def _directory(folder):
    path = os.path.join(folder, "deck.toml")
    os.mkdir(path)
    return path


def _fifo(folder):
    path = os.path.join(folder, "fifo.toml")
    os.mkfifo(path)
    return path


def _sparse_65_mib(folder):
    path = os.path.join(folder, "huge.toml")
    with open(path, "wb") as f:
        f.truncate(65 << 20)
    return path


def _random_bytes(folder):
    path = os.path.join(folder, "random.toml")
    with open(path, "wb") as f:
        f.write(random.Random(20261125).randbytes(4096))
    return path


def _elf_head(folder):
    # kstencil's own executable, its first MiB: sanitized and debug builds exceed the 64 MiB limit.
    path = os.path.join(folder, "kstencil.elf")
    with open(KSTENCIL, "rb") as src, open(path, "wb") as f:
        f.write(src.read(1 << 20))
    return path


MEGABYTES = 4_000_000
GENERATORS = {
    "directory": _directory,
    "missing": lambda folder: os.path.join(folder, "missing.toml"),
    "dev_zero": lambda folder: "/dev/zero",  # never ends
    "fifo": _fifo,
    "too_large": _sparse_65_mib,
    "random_bytes": _random_bytes,
    "elf": _elf_head,
    "long_line": _text("# " + "x" * MEGABYTES + "\n[grid]\nny = 8\nnx = 2\n"),
    "long_value": _text('[run]\nname = "' + "v" * MEGABYTES + '"\n'),
    "long_key": _text("[grid]\n" + "k" * MEGABYTES + " = 1\n"),
    "long_section": _text("[" + "s" * MEGABYTES + "]\n"),
    "long_number": _text("[grid]\nnx = " + "1" * MEGABYTES + "\n"),
}


def expand(text, folder):
    """{tmp}: the case's folder; {c*N}: N copies of the character c; {0xHH*N}: of the byte HH
    (as the surrogate-escaped character that stands for it in arguments and decoded output)."""
    text = text.replace("{tmp}", folder)

    def repeat(m):
        unit = m.group(1)
        if unit.startswith("0x"):
            unit = bytes([int(unit, 16)]).decode("utf-8", "surrogateescape")
        return unit * int(m.group(2))
    return re.sub(r"\{(0x[0-9a-fA-F]{2}|.)\*(\d+)\}", repeat, text)


def snapshot(folder):
    """Every path under folder with its kind, size and modification time."""
    seen = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            seen[os.path.relpath(path, folder)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return seen


def run(args, cwd):
    env = dict(os.environ, OMP_PROC_BIND="false", KOKKOS_DISABLE_WARNINGS="1")
    r = subprocess.run([KSTENCIL] + args, cwd=cwd, env=env, capture_output=True, timeout=300)
    return r.returncode, r.stdout.decode("utf-8", "surrogateescape"), \
        r.stderr.decode("utf-8", "surrogateescape")


def execute(case, command):
    """Runs one case in a fresh folder; what the checks need, the folder removed again."""
    folder = tempfile.mkdtemp(prefix="kstencil-corpus-")
    try:
        for name in case.get("files", []):
            path = os.path.join(folder, expand(name, folder))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write("kept\n")
        if "generate" in case:
            deck = GENERATORS[case["generate"]](folder)
        else:
            deck = os.path.join(folder, expand(case.get("deck_as", case["deck"]), folder))
            shutil.copyfile(os.path.join(CORPUS, "decks", case["deck"]), deck)
        overrides = [expand(o, folder) for o in case.get("overrides", [])]
        if not case.get("own_root", False):
            overrides.append("output.root=" + os.path.join(folder, "out"))
        # Roots outside the folder that do not exist must not appear either.
        roots = [o.split("=", 1)[1] for o in overrides if o.startswith("output.root=")]
        absent = [r for r in roots if r.startswith("/") and not os.path.lexists(r)]
        before = snapshot(folder)
        status, out, err = run([command, deck] + overrides, cwd=folder)
        return {"status": status, "out": out, "err": err, "deck": deck, "folder": folder,
                "written": before != snapshot(folder),
                "made": [r for r in absent if os.path.lexists(r)]}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


RESULTS = {}


def setUpModule():
    # Each run is mostly kstencil's start-up (MPI, Kokkos): several at once, even on two cores.
    jobs = [(c, k) for c in CASES for k in ("run", "sweep") if k == "run" or c.get("sweep", True)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        futures = {(c["name"], k): pool.submit(execute, c, k) for c, k in jobs}
        for key, future in futures.items():
            RESULTS[key] = future.result()


class Corpus(unittest.TestCase):
    def check(self, case, command):
        r = RESULTS[(case["name"], command)]
        status, out, err = r["status"], r["out"], r["err"]
        what = f"{command} {case['name']}: status {status}, stdout {out[:300]!r}, " \
               f"stderr {err[:600]!r}"
        self.assertTrue(0 <= status < 128, "crashed: " + what)
        self.assertEqual(status, case["status"], what)
        if case["status"] == 2:
            self.assertEqual(out, "", "bad input prints nothing on stdout: " + what)
            self.assertTrue(err.startswith("kstencil: error: "), what)
            self.assertEqual(err.count("\n"), 1, "one line: " + what)
            self.assertLess(len(err), 2000, "a message, not an echo of the input: " + what)
            if case.get("names_deck", True):
                # The deck, or the override the bad value comes from.
                self.assertTrue(r["deck"] in err or "command-line override '" in err,
                                "the message names the deck: " + what)
        for fragment in case["stderr"]:
            self.assertIn(expand(fragment, r["folder"]), err, what)
        self.assertFalse(r["written"], "something was written: " + what)
        self.assertEqual(r["made"], [], "an output root was made: " + what)


def load_cases():
    with open(os.path.join(CORPUS, "cases.toml"), "rb") as f:
        cases = tomllib.load(f)["case"]
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    for case in cases:
        assert ("deck" in case) != ("generate" in case), case["name"]
        assert "generate" not in case or case["generate"] in GENERATORS, case["name"]
        for command in ("run", "sweep"):
            if command == "sweep" and not case.get("sweep", True):
                continue
            test = (lambda c, k: lambda self: self.check(c, k))(case, command)
            setattr(Corpus, f"test_{command}_{case['name'].replace('-', '_')}", test)
    return cases


class Manifest(unittest.TestCase):
    def test_every_deck_file_is_a_case(self):
        """No deck in tests/corpus/decks/ is left out of the manifest (they also seed the fuzzer)."""
        with open(os.path.join(CORPUS, "cases.toml"), "rb") as f:
            used = {c["deck"] for c in tomllib.load(f)["case"] if "deck" in c}
        self.assertEqual(sorted(set(os.listdir(os.path.join(CORPUS, "decks"))) - used), [])


CASES = load_cases()

if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    KSTENCIL = os.path.abspath(sys.argv[1])
    SOURCE = os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1] + sys.argv[3:], verbosity=1)
