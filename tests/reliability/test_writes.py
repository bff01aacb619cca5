"""Writes that fail: one line naming the file and the reason, no temporary file left, the earlier result intact.

A full disk is simulated without root by a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) in a child
process: a write beyond the limit fails with EFBIG, as one on a full disk fails with ENOSPC. Tests run as
root on CI, where permission bits do not stop a write, so "cannot write here" is a file in place of a folder.
"""

from __future__ import annotations

import os
import pickle
import resource
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from histeg.atomic import write_bytes, write_json
from histeg.errors import EXIT_BAD_INPUT, EXIT_CANNOT_WRITE, WriteError
from histeg.records.steps import StepStates
from histeg.store import OutputStore
from histeg.tracing import format as fmt
from histeg.traces.reader import read_trace
from tests.conftest import CliResult, GitRepo

LIMIT = 16 * 1024
"""Bytes a child may write into one file: more than any file of a small repository's extraction."""

LIB = "def double(x):\n    return x + x\n"
TEST = "from lib import double\n\n\ndef test_double():\n    assert double(3) == 6\n"


def run_limited(argv: list[str], *, fsize: int | None = LIMIT, umask: int | None = None) -> CliResult:
    """Run ``python ARGV`` with every file it writes limited to ``fsize`` bytes and, if given, the umask."""

    def limits() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        if umask is not None:
            os.umask(umask)

    result = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300, check=False,
                            preexec_fn=limits)
    return CliResult(result.returncode, result.stdout, result.stderr)


def run_program(body: str, *args: str, fsize: int | None = LIMIT, umask: int | None = None) -> CliResult:
    """A small program using histeg's writers, reporting a HistegError the way the command line does."""
    program = "import sys\nfrom pathlib import Path\nfrom histeg.errors import HistegError\ntry:\n" + textwrap.indent(
        textwrap.dedent(body), "    ") + (
        "except HistegError as exc:\n    print(f'histeg: error: {exc}', file=sys.stderr)\n    sys.exit(exc.exit_code)\n")
    return run_limited(["-c", program, *args], fsize=fsize, umask=umask)


def histeg_limited(*args: str, fsize: int | None = LIMIT, umask: int | None = None) -> CliResult:
    return run_limited(["-m", "histeg", *args], fsize=fsize, umask=umask)


def contents(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder`` with its bytes (None for a folder or link): what "left intact" compares."""
    return {str(path.relative_to(folder)): (path.read_bytes() if path.is_file() and not path.is_symlink() else None)
            for path in sorted(folder.rglob("*"))}


def leftovers(folder: Path) -> list[str]:
    """Temporary files and scratch folders a failed write must not leave behind."""
    return [str(path) for path in folder.rglob("*") if path.name.endswith(".tmp") or path.name.startswith(".building-")]


def one_error_line(result: CliResult) -> str:
    """The run's stderr is one ``histeg: error:`` line and nothing else (no traceback, no warnings)."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("histeg: error: "), result.stderr
    return lines[0].removeprefix("histeg: error: ")


# --- histeg.atomic ----------------------------------------------------------------------------------


def test_a_record_over_the_limit_fails_in_one_line_and_keeps_the_earlier_file(tmp_path: Path) -> None:
    path = tmp_path / "3" / "steps.json"
    StepStates(steps={}).write(path)
    before = path.read_bytes()
    result = run_program("""
        from histeg.records.steps import StepState, StepStates
        state = StepState(fingerprint="0" * 64, result="1" * 64, status="ok", seconds=1.0, inputs={"big": "x" * int(sys.argv[2])},
                          summary={})
        StepStates(steps={"build": state}).write(Path(sys.argv[1]))
    """, str(path), str(2 * LIMIT))
    assert result.code == EXIT_CANNOT_WRITE
    assert one_error_line(result) == f"cannot write {path}: File too large"
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == [] and sorted(p.name for p in path.parent.iterdir()) == ["steps.json"]


def test_a_file_in_place_of_a_folder_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "out" / "3"
    blocker.parent.mkdir()
    blocker.write_bytes(b"not a folder")
    with pytest.raises(WriteError) as caught:
        write_json(blocker / "traces" / "runs.json", {"runs": []})
    assert str(caught.value) == f"cannot write {blocker}/traces/runs.json: {blocker} is not a folder"
    assert caught.value.exit_code == EXIT_CANNOT_WRITE
    assert blocker.read_bytes() == b"not a folder" and leftovers(tmp_path) == []


def test_a_write_error_crosses_a_process_pool_intact(tmp_path: Path) -> None:
    error = pickle.loads(pickle.dumps(WriteError(tmp_path / "runs.json", "No space left on device")))
    assert (str(error), error.path, error.reason) == (f"cannot write {tmp_path}/runs.json: No space left on device", tmp_path / "runs.json",
                                                      "No space left on device")


def test_a_folder_in_place_of_the_file_is_left_alone_with_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "runs.json"
    (target / "inside").mkdir(parents=True)
    with pytest.raises(WriteError, match=f"^cannot write {target}: Is a directory$"):
        write_bytes(target, b"{}\n")
    assert [p.name for p in tmp_path.iterdir()] == ["runs.json"] and (target / "inside").is_dir()


def test_written_files_and_folders_are_private_whatever_the_umask(tmp_path: Path) -> None:
    result = run_program("""
        from histeg.atomic import write_json
        from histeg.store import OutputStore
        root = Path(sys.argv[1])
        write_json(root / "a" / "b" / "c.json", {"x": 1})
        store = OutputStore(root)
        with store.building_version(7, replace=True) as scratch:
            write_json(scratch / "traces" / "runs.json", {"runs": []})
    """, str(tmp_path / "out"), fsize=None, umask=0)
    assert result.code == 0, result.stderr
    modes = {str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "out").rglob("*")}
    assert modes == {"out/a": 0o700, "out/a/b": 0o700, "out/a/b/c.json": 0o600,
                     "out/7": 0o700, "out/7/traces": 0o700, "out/7/traces/runs.json": 0o600}


def test_an_identical_file_readable_by_others_is_written_again_private(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    write_json(path, {"versions": []})
    os.chmod(path, 0o644)
    write_json(path, {"versions": []})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and leftovers(tmp_path) == []


# --- store.building_version -------------------------------------------------------------------------


@pytest.mark.parametrize(("write", "named"), [
    ("write_json(scratch / 'fileChanges.json', {'changes': 'x' * size})", "/0/fileChanges.json"),
    ("(scratch / 'snapshot').mkdir(); (scratch / 'snapshot' / 'data.bin').write_bytes(b'x' * size)", "/0"),
])
def test_a_version_being_built_when_writing_fails_leaves_no_scratch_and_the_earlier_version(tmp_path: Path, write: str, named: str) -> None:
    out = tmp_path / "out"
    store = OutputStore(out)
    store.prepare()
    with store.building_version(0, replace=True) as scratch:
        write_json(scratch / "version.json", {"index": 0})
        (scratch / "snapshot").mkdir()
        (scratch / "snapshot" / "lib.py").write_text(LIB)
    before = contents(out)
    result = run_program(f"""
        from histeg.atomic import write_json
        from histeg.store import OutputStore
        size = int(sys.argv[2])
        with OutputStore(Path(sys.argv[1])).building_version(0, replace=True) as scratch:
            write_json(scratch / "version.json", {{"index": 0, "again": True}})
            {write}
    """, str(out), str(2 * LIMIT))
    assert result.code == EXIT_CANNOT_WRITE
    assert one_error_line(result) == f"cannot write {out}{named}: File too large"
    assert contents(out) == before and leftovers(out) == []


def test_a_file_where_the_scratch_folder_has_a_folder_is_named_where_it_was_to_be(tmp_path: Path) -> None:
    out = tmp_path / "out"
    store = OutputStore(out)
    store.prepare()
    with pytest.raises(WriteError) as caught, store.building_version(4, replace=True) as scratch:
        (scratch / "traces").write_text("")
        write_json(scratch / "traces" / "runs.json", {})
    assert str(caught.value) == f"cannot write {out}/4/traces/runs.json: {out}/4/traces is not a folder"
    assert sorted(p.name for p in out.iterdir()) == []


# --- the command line -------------------------------------------------------------------------------


def test_extract_under_a_full_disk_stops_in_one_line_and_keeps_earlier_versions(make_repo, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    out = tmp_path / "out"
    first = histeg_limited("extract", "--repo", str(repo.path), "--all", "--out", str(out), fsize=None)
    assert first.code == 0, first.stderr
    before = {name: contents(out / name) for name in os.listdir(out) if name.isdigit()}
    repo.commit("data", {"data.json": "[" + "1, " * LIMIT + "1]\n"})
    result = histeg_limited("extract", "--repo", str(repo.path), "--all", "--out", str(out))
    assert result.code == EXIT_CANNOT_WRITE
    line = one_error_line(result)
    assert line.startswith(f"cannot write {out}/") and line.endswith(": File too large"), line
    assert {name: contents(out / name) for name in before} == before
    assert leftovers(out) == [] and sorted(name for name in os.listdir(out) if name.isdigit()) == sorted(before)


def _compute_then_grow(repo: GitRepo, out: Path) -> tuple[dict[str, dict[str, bytes | None]], CliResult]:
    """A computed history, then a new version whose functions.json outgrows the limit its extraction stays within."""
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    repo.commit("faster", {"lib.py": LIB.replace("x + x", "x * 2")})
    first = histeg_limited("compute", "--repo", str(repo.path), "--all", "--out", str(out), fsize=None)
    assert first.code == 0, first.stderr
    before = {name: contents(out / name) for name in os.listdir(out) if name.isdigit()}
    many = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(300))
    assert len(many) < LIMIT
    repo.commit("many functions", {"many.py": many})
    return before, histeg_limited("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--quiet")


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, bytes | None]], CliResult]:
    folder = tmp_path_factory.mktemp("grown")
    out = folder / "out"
    before, result = _compute_then_grow(GitRepo.create(folder / "repo"), out)
    return out, before, result


@pytest.mark.slow
def test_compute_under_a_full_disk_keeps_earlier_versions_and_names_the_file(grown) -> None:
    out, before, result = grown
    assert "Traceback" not in result.stderr, result.stderr
    assert "cannot write " in result.stderr and "/functions.json: File too large" in result.stderr, result.stderr
    assert {name: contents(out / name) for name in before} == before
    assert leftovers(out) == []


@pytest.mark.slow
def test_compute_under_a_full_disk_stops_with_its_exit_code_and_one_line(grown) -> None:
    out, _, result = grown
    assert result.code == EXIT_CANNOT_WRITE, result.stderr
    line = one_error_line(result)
    assert line.startswith(f"cannot write {out}/") and line.endswith("/functions.json: File too large"), line


def test_out_pointing_to_a_file_is_one_line(make_repo, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB})
    target = tmp_path / "results"
    target.write_bytes(b"mine")
    result = histeg_limited("extract", "--repo", str(repo.path), "--all", "--out", str(target), fsize=None)
    assert result.code == EXIT_BAD_INPUT
    assert str(target) in one_error_line(result)
    assert target.read_bytes() == b"mine" and sorted(os.listdir(tmp_path)) == ["repo", "results"]


def test_out_inside_a_path_whose_parent_is_a_file_is_one_line(make_repo, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB})
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"mine")
    result = histeg_limited("extract", "--repo", str(repo.path), "--all", "--out", str(blocker / "deeper" / "out"), fsize=None)
    assert result.code == EXIT_BAD_INPUT
    assert str(blocker) in one_error_line(result)
    assert blocker.read_bytes() == b"mine"


# --- privacy ----------------------------------------------------------------------------------------


def exposed(out: Path) -> list[str]:
    """Files and folders of ``out`` (the snapshots' own files and the mirror aside) that group or others may read."""
    found = []
    for folder, folders, files in os.walk(out):
        folders[:] = [name for name in folders if name not in ("repository.git", "snapshot")]
        for path in [Path(folder), *(Path(folder) / name for name in files)]:
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o077 and not path.is_symlink():
                found.append(f"{path.relative_to(out.parent)} {mode:o}")
    return sorted(found)


def test_nothing_extract_writes_is_readable_by_group_or_others(make_repo, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    repo.commit("faster", {"lib.py": LIB.replace("x + x", "x * 2")})
    result = histeg_limited("extract", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), fsize=None, umask=0o022)
    assert result.code == 0, result.stderr
    assert [entry for entry in exposed(tmp_path / "out") if entry not in UNDER_THE_LOCK] == []


UNDER_THE_LOCK = ("out 755", "out/.histeg.lock 644")
"""Made by ``store.locked()`` before the run sets its umask."""


@pytest.fixture(scope="module")
def computed_with_open_umask(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("private")
    repo = GitRepo.create(folder / "repo")
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    repo.commit("faster", {"lib.py": LIB.replace("x + x", "x * 2")})
    result = histeg_limited("compute", "--repo", str(repo.path), "--all", "--out", str(folder / "out"), fsize=None, umask=0o022)
    assert result.code == 0, result.stderr
    return folder / "out"


@pytest.mark.slow
def test_nothing_compute_writes_in_the_versions_is_readable_by_group_or_others(computed_with_open_umask: Path) -> None:
    assert [entry for entry in exposed(computed_with_open_umask) if entry not in UNDER_THE_LOCK] == []


@pytest.mark.slow
def test_the_output_folder_and_its_lock_file_are_private(computed_with_open_umask: Path) -> None:
    assert exposed(computed_with_open_umask) == []


# --- the tracer -------------------------------------------------------------------------------------


def test_a_trace_that_outgrows_the_disk_stops_quietly_and_reads_as_truncated(tmp_path: Path) -> None:
    path = tmp_path / "t.htrace"
    result = run_program("""
        import os
        from array import array
        from histeg.tracing import format as fmt
        writer = fmt.TraceWriter(sys.argv[1], {"pid": 1}, level=0, batch_bytes=1)
        writer.function(1, "m:f", "m.py", 1, 0, (), [])
        writer.thread(0, 1, "MainThread")
        for n in range(int(sys.argv[2])):
            writer.chunk(0, array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 0, 0, 0, 2, fmt.OP_RETURN, 0, 0]).tobytes())
        writer.close()
        print(writer.failure)
    """, str(path), str(LIMIT))
    assert result.code == 0, result.stderr
    assert result.stdout == f"cannot write {path}: File too large\n"
    assert result.stderr == f"histeg: tracing stopped: cannot write {path}: File too large\n"
    assert 0 < path.stat().st_size <= LIMIT
    assert fmt.read_status(str(path)) == "truncated" and fmt.read_meta(str(path)) == {"pid": 1, "stream": "raw"}
    trace = read_trace(path)
    assert trace.truncated and len(trace.entry_points) > 100
    assert all((call.lines, call.ended) == ([1], True) for call in trace.entry_points)
