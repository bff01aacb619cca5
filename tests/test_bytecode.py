"""The bytecode a version's full run compiled reaches its re-runs and the next version's full run.

One real history through the real command line. The project's tests look at their own bytecode: a module's ``.pyc``
exists in a re-run (which writes none) only when it was put there, and a test module's rewritten ``.pyc`` older than
the run's ``conftest.py`` import was put there too (pytest writes it when it imports the module, later).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from histeg.runs.bytecode import harvest, overlay, read_kept, rewrites_move
from tests.conftest import GitRepo, run_histeg, validate_output

LIB = "def f(x):\n    return x + 1\n"
CONFTEST = "import time\n\nSTARTED = time.time()\n"
TESTS = '''import glob
import os
import sys

import lib
from tests.conftest import STARTED


def test_f_from_kept_bytecode():
    assert os.path.exists(lib.__cached__), "no bytecode for lib"
    assert lib.f(1) == 2


def test_own_module_placed_before_the_run():
    names = glob.glob(os.path.join(os.path.dirname(__file__), "__pycache__", "test_lib.*-pytest-*.pyc"))
    assert names and os.stat(names[0]).st_mtime < STARTED, names
'''


@pytest.fixture(scope="module")
def computed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bytecode")
    repo = GitRepo.create(root / "repo")
    files = {"lib.py": LIB, "tests/__init__.py": "", "tests/conftest.py": CONFTEST, "tests/test_lib.py": TESTS}
    repo.commit("base", files)
    repo.commit("f adds two", {"lib.py": LIB.replace("x + 1", "x + 2")})
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(root / "out"), "--repeat", "1")
    assert result.code == 0, result.stderr
    return root / "out"


def _python(out: Path, index: int) -> str:
    return json.loads((out / str(index) / "build.json").read_text(encoding="utf-8"))["environment"]["python"]


def test_the_full_run_keeps_what_it_compiled_for_the_snapshot(computed: Path) -> None:
    kept = read_kept(computed / "0" / "traces" / "bytecode.zst")
    tag = sys.implementation.cache_tag
    assert f"__pycache__/lib.{tag}.pyc" in kept
    rewritten = sorted(name.split("/")[-1].split(".")[0] for name in kept if name.startswith("tests/") and "-pytest-" in name)
    assert rewritten == ["conftest", "test_lib"]
    assert all(name.startswith(("__pycache__/", "tests/__pycache__/")) for name in kept), kept


def test_re_runs_start_with_it(computed: Path) -> None:
    """The re-runs write no bytecode: the old version's re-runs of the diverging tests pass only with the kept one."""
    batches = validate_output(computed / "0" / "confirmations.json")["batches"]
    old = [run for batch in batches for run in batch["runs"]]
    assert old and all(run["tests"] == {"passed": 2} for run in old), old
    divergences = validate_output(computed / "1" / "traceDivergences.json")
    confirmed = {d["entryPoint"]["label"].rsplit("::", 1)[-1] for d in divergences["divergences"]}
    assert "test_f_from_kept_bytecode" in confirmed, divergences


def test_the_next_full_run_starts_with_the_test_modules_pytest_rewrote_before(computed: Path) -> None:
    """Only where pytest gives a moved rewritten module its own file name (9.2 and later); elsewhere none is placed."""
    runs = validate_output(computed / "1" / "runs.json")["runs"]
    moved = rewrites_move(_python(computed, 1))
    assert runs[0]["tests"] == ({"passed": 1, "failed": 1} if moved else {"failed": 2}), runs[0]
    first = validate_output(computed / "0" / "runs.json")["runs"]
    assert first[0]["tests"] == {"passed": 1, "failed": 1}, "the first version has no predecessor to start with"


def test_harvest_takes_only_the_snapshots_modules_and_overlay_only_what_is_asked(tmp_path: Path) -> None:
    snapshot, run, fresh = (tmp_path / name for name in ("snapshot", "run", "fresh"))
    archive = tmp_path / "kept" / "bytecode.zst"
    archive.parent.mkdir()
    for folder in (snapshot / "pkg", run / "pkg" / "__pycache__", run / "made" / "__pycache__", fresh / "pkg"):
        folder.mkdir(parents=True)
    (snapshot / "pkg" / "mod.py").write_text("x = 1\n")
    (snapshot / "pkg" / "test_mod.py").write_text("x = 1\n")
    for name in ("mod.cpython-312.pyc", "test_mod.cpython-312-pytest-9.2.0.pyc", "gone.cpython-312.pyc"):
        (run / "pkg" / "__pycache__" / name).write_bytes(name.encode())
    (run / "made" / "__pycache__" / "tmp.cpython-312.pyc").write_bytes(b"pyc")
    assert harvest(run, snapshot, archive) == 2
    assert sorted(read_kept(archive)) == ["pkg/__pycache__/mod.cpython-312.pyc", "pkg/__pycache__/test_mod.cpython-312-pytest-9.2.0.pyc"]
    assert overlay(archive, fresh, rewritten=False) == 1
    assert [p.name for p in (fresh / "pkg" / "__pycache__").iterdir()] == ["mod.cpython-312.pyc"]
    assert overlay(archive, fresh, rewritten=True, only_rewritten=True) == 1
    placed = fresh / "pkg" / "__pycache__" / "test_mod.cpython-312-pytest-9.2.0.pyc"
    assert placed.read_bytes() == b"test_mod.cpython-312-pytest-9.2.0.pyc"
    archive.write_bytes(b"not an archive")
    assert overlay(archive, fresh, rewritten=True) == 0 and overlay(tmp_path / "absent", fresh, rewritten=True) == 0


def test_whether_pytest_names_a_moved_rewritten_module_is_told_from_its_source(tmp_path: Path) -> None:
    """Told by reading pytest's source, without importing it: an environment whose pytest has that code says yes,
    one whose pytest lacks it says no, and so does one without pytest."""
    assert rewrites_move(sys.executable) == (tuple(pytest.version_tuple[:2]) >= (9, 2))
    for kind, code in (("new", "def _fix_code_filename(): pass\n"), ("old", "def _rewrite_test(): pass\n"), ("none", None)):
        site = tmp_path / kind
        site.mkdir()
        if code is not None:
            (site / "_pytest" / "assertion").mkdir(parents=True)
            (site / "_pytest" / "__init__.py").write_text("raise ImportError('never imported')\n")
            (site / "_pytest" / "assertion" / "__init__.py").write_text("raise ImportError('never imported')\n")
            (site / "_pytest" / "assertion" / "rewrite.py").write_text(code)
        python = tmp_path / f"python-{kind}"  # the probe's code, run with only this folder for packages
        python.write_text(f"#!/bin/sh\nexec {sys.executable} -I -S -c \"import sys; sys.path.insert(0, '{site}'); exec(sys.argv[1])\" \"$3\"\n")
        python.chmod(0o755)
        assert rewrites_move(str(python)) == (kind == "new"), kind
