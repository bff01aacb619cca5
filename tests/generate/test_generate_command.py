"""``histeg generate`` end to end on a small computed repository: a module that raises at import fails with one line
while the other gets its tests and witness; bad versions are one-line errors that leave earlier results intact."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from histeg.generate.verdicts import FAILING, PASSING
from tests.conftest import GitRepo, interruptible_histeg, run_histeg, validate_output

pytestmark = pytest.mark.slow  # a compute of four versions, then Pynguin twice

GOOD = "def double(x: int) -> int:\n    return x * 2\n"
BAD = 'raise RuntimeError("this module cannot be imported")\n\n\ndef triple(x: int) -> int:\n    return x * 3\n'
TEST = "from pkg.good import double\n\n\ndef test_double():\n    assert double(2) > 0\n"


@pytest.fixture(scope="module")
def computed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Version 1 changes a function in a good module and one in a module that raises at import; version 2 only its
    docs (no target); version 3 declares a build that fails."""
    base = tmp_path_factory.mktemp("generate")
    repo = GitRepo.create(base / "repo")
    repo.commit("one", {"pkg/__init__.py": "", "pkg/good.py": GOOD, "pkg/bad.py": BAD, "tests/__init__.py": "", "tests/test_good.py": TEST})
    repo.commit("two", {"pkg/good.py": GOOD.replace("x * 2", "x * 2 + 1"), "pkg/bad.py": BAD.replace("x * 3", "x * 3 + 1")})
    repo.commit("three", {"README.md": "# docs\n"})
    repo.commit("four", {"pyproject.toml": '[tool.histeg]\nbuild = "exit 3"\n'})
    out = base / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--python", sys.executable, "-q")
    assert result.code == 1, result.stderr  # version 3's build fails
    return out


def test_the_bad_module_fails_in_one_line_and_the_good_one_gets_a_witness(computed: Path) -> None:
    snapshots = {index: _listing(computed / index / "snapshot") for index in ("0", "1")}
    result = run_histeg("generate", "1", "--out", str(computed), "--budget", "4", "--top", "2", "--seed", "7", "--no-carve")
    assert result.code == 0, result.stderr
    document = validate_output(computed / "1" / "generation.json")
    modules = {m["module"]: m for m in document["modules"]}
    assert modules["pkg.bad"]["status"] == "failed"
    assert "this module cannot be imported" in modules["pkg.bad"]["reason"] and "\n" not in modules["pkg.bad"]["reason"]
    assert modules["pkg.good"]["status"] == "ok" and modules["pkg.good"]["testFiles"]
    assert document["settings"]["moduleSeconds"] == {"pkg.good": 2, "pkg.bad": 2}
    assert document["settings"]["seed"] == 7
    good = next(t for t in document["targets"] if t["identifier"] == "pkg.good:double")
    assert good["witnesses"], document["tests"]
    witness = good["witnesses"][0]
    sides = {witness["old"] in PASSING, witness["new"] in PASSING}
    assert sides == {True, False} and {witness["old"], witness["new"]} <= PASSING | FAILING
    test_file = computed / "1" / witness["test"].partition("::")[0]
    assert "double" in test_file.read_text()
    assert (computed / "1" / modules["pkg.bad"]["log"]).is_file()
    assert "Pynguin failed on pkg.bad: " in result.stdout and "pkg.good:double" in result.stdout
    assert not list((computed / "1").glob(".run-generate*"))
    assert {index: _listing(computed / index / "snapshot") for index in ("0", "1")} == snapshots  # both run from copies


def _listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(path.relative_to(folder)), path.stat().st_mtime_ns) for path in folder.rglob("*"))


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("0", "version 0 has no predecessor to compare with"),
        ("2", "version 2 has no testing targets"),
        ("3", "version 3 cannot be run: its build failed"),
        ("9", "no version 9 in"),
    ],
)
def test_bad_versions_are_one_line_errors_and_leave_results_intact(computed: Path, version: str, message: str) -> None:
    earlier = {path: path.read_bytes() for path in computed.glob("*/generation.json")}
    result = run_histeg("generate", version, "--out", str(computed))
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert message in result.stderr
    assert {path: path.read_bytes() for path in computed.glob("*/generation.json")} == earlier


def test_an_output_folder_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    result = run_histeg("generate", "1", "--out", str(tmp_path / "nowhere"))
    assert result.code == 2 and "run histeg compute first" in result.stderr


def test_json_is_the_record(computed: Path) -> None:
    result = run_histeg("generate", "1", "--out", str(computed), "--budget", "2", "--top", "1", "--json", "-q", "--no-carve")
    assert result.code == 0, result.stderr
    printed = orjson.loads(result.stdout)
    assert printed == orjson.loads((computed / "1" / "generation.json").read_bytes())
    assert [m["module"] for m in printed["modules"]] == ["pkg.good"]  # --top 1: only the best target's module
    assert result.stderr == ""


def test_carving_comes_first_and_pynguin_runs_only_for_the_target_left_without_a_witness(computed: Path) -> None:
    """double's recorded call (2 -> 4) is carved and witnesses its change; the module that raises at import was never
    traced, so Pynguin is pointed at it alone, on the budget carving left."""
    result = run_histeg("generate", "1", "--out", str(computed), "--budget", "4", "--top", "2", "--seed", "7", "--json", "-q")
    document = validate_output(computed / "1" / "generation.json")
    assert result.code == 0, result.stderr
    assert document["settings"]["stages"] == ["carve", "pynguin"]
    assert [m["module"] for m in document["modules"]] == ["pkg.bad"]
    good = next(t for t in document["targets"] if t["identifier"] == "pkg.good:double")
    assert [w["carved"] for w in good["witnesses"]] == [True]
    assert "double(x=2)" in good["witnesses"][0]["source"] and "assert result == 4" in good["witnesses"][0]["source"]
    assert (computed / "1" / good["witnesses"][0]["test"].partition("::")[0]).is_file()
    assert document["carved"]["witnesses"] == 1 and document["summary"]["witnesses"] >= 1


def test_an_interrupted_generation_leaves_the_earlier_results(computed: Path) -> None:
    assert run_histeg("generate", "1", "--out", str(computed), "--budget", "2", "--top", "1", "--no-carve").code == 0
    version = computed / "1"
    earlier = (version / "generation.json").read_bytes(), _listing(version / "generated")
    process = subprocess.Popen(
        interruptible_histeg("generate", "1", "--out", str(computed), "--budget", "60", "--seed", "5", "--no-carve"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (version / ".run-generate" / "pynguin").is_dir():  # Pynguin is running
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "histeg: interrupted"
    assert ((version / "generation.json").read_bytes(), _listing(version / "generated")) == earlier
    assert not list(version.glob(".run-generate*"))
    assert not list((computed / ".histeg" / "processes").glob("*.json"))  # Pynguin's group ended and released


def test_without_pynguin_generate_is_one_line(computed: Path, tmp_path: Path) -> None:
    """Pynguin's environment cannot be made (uv offline, no cache, a fresh environments root): one line, results kept."""
    earlier = _listing(computed)
    env = {**os.environ, "UV_OFFLINE": "1", "UV_NO_CACHE": "1", "HISTEG_ENVIRONMENTS": str(tmp_path / "environments")}
    result = subprocess.run(
        [sys.executable, "-m", "histeg", "generate", "1", "--out", str(computed)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()[-1:]
    assert (
        line.startswith("histeg: error: cannot install pynguin==0.48.0 with uv: ")
        and str(tmp_path / "environments" / "tools") in line
        and line.endswith(".log)")
    )
    assert _listing(computed) == earlier
