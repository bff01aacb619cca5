"""``-j N``: versions built, traced and compared in Dask worker processes give what the serial loop gives."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from histeg.console import Console
from histeg.engine.executor import Outcome, Work, executor_for
from histeg.settings.load import load_settings, python_arguments
from tests.conftest import GitRepo, run_histeg, validate_output

LIB = "def price(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n\n\ndef label(n):\n    return f'#{n}'\n"
TEST = ("from lib import label, price\n\n\ndef test_price():\n    assert price(4) >= 0\n\n\n"
        "def test_label():\n    assert label(2).startswith('#')\n")
BROKEN = 5
"""The version whose suite cannot even start: it fails, and so does the comparison with it; the version after that is
compared again, with a predecessor whose comparison failed but whose traces are good, as in the serial loop."""
VERSIONS = 8


def history(repo: GitRepo) -> None:
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    repo.commit("price counts down", {"lib.py": LIB.replace("for i in range(n):", "for i in range(n - 1, -1, -1):")})
    repo.commit("label in brackets", {"lib.py": LIB.replace("f'#{n}'", "f'#[{n}]'")})
    repo.commit("price doubles", {"lib.py": LIB.replace("total += i", "total += 2 * i")})
    repo.commit("a test of zero", {"tests/test_zero.py": "from lib import price\n\n\ndef test_zero():\n    assert price(0) == 0\n"})
    repo.commit("conftest breaks", {"tests/conftest.py": "raise RuntimeError('no database')\n"})
    repo.commit("conftest mended", remove=("tests/conftest.py",))
    repo.commit("label in braces", {"lib.py": LIB.replace("f'#{n}'", "f'#{{{n}}}'")})


def compute(repo: Path, out: Path, *more: str) -> dict[str, Any]:
    result = run_histeg("compute", "--repo", str(repo), "--all", "--out", str(out), "--json", *more)
    assert result.code == 1, result.stderr  # the broken version fails
    assert "Traceback" not in result.stderr and "distributed" not in result.stderr, result.stderr  # workers say nothing
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path, dict[str, Any]]:
    base = tmp_path_factory.mktemp("executor")
    repo = GitRepo.create(base / "repo")
    history(repo)
    serial, parallel = base / "serial", base / "parallel"
    return serial, compute(repo.path, serial, "-j", "1"), parallel, compute(repo.path, parallel, "-j", "2")


def _statuses(out: Path, index: int) -> dict[str, str]:
    return {name: state["status"] for name, state in validate_output(out / str(index) / "steps.json")["steps"].items()}


@pytest.mark.slow
def test_two_workers_give_the_serial_results_byte_for_byte(runs: tuple[Path, dict[str, Any], Path, dict[str, Any]]) -> None:
    serial, _, parallel, _ = runs
    compared = [index for index in range(VERSIONS) if (serial / str(index) / "testingTargets.json").is_file()]
    assert compared == [1, 2, 3, 4, BROKEN + 2]
    for index in compared:
        validate_output(parallel / str(index) / "testingTargets.json")
        assert (parallel / str(index) / "testingTargets.json").read_bytes() == (serial / str(index) / "testingTargets.json").read_bytes()
        assert (parallel / str(index) / "traceDivergences.json").read_bytes() == (serial / str(index) / "traceDivergences.json").read_bytes()
    for index in range(VERSIONS):
        assert _statuses(parallel, index) == _statuses(serial, index)
    targets = json.loads((parallel / "1" / "testingTargets.json").read_bytes())["targets"]
    assert "lib:price" in [target["identifier"] for target in targets]  # a real comparison, not two empty ones


def _without_times(summary: dict[str, Any]) -> dict[str, Any]:
    """A step's summary without its times, nor whether the shared environment was made then (the serial run made it)."""
    return {key: value for key, value in summary.items() if key not in ("seconds", "created")}


@pytest.mark.slow
def test_a_failing_version_fails_as_in_the_serial_loop(runs: tuple[Path, dict[str, Any], Path, dict[str, Any]]) -> None:
    serial_out, serial, parallel_out, parallel = runs
    assert json.dumps(parallel["failedVersions"]).replace(str(parallel_out), "OUT") == \
        json.dumps(serial["failedVersions"]).replace(str(serial_out), "OUT")
    assert [failure["index"] for failure in parallel["failedVersions"]] == [BROKEN, BROKEN + 1]
    assert "trace run pytest" in parallel["failedVersions"][0]["reason"]
    assert f"its predecessor, version {BROKEN}, failed" in parallel["failedVersions"][1]["reason"]
    for name in ("build", "statics", "traceConfig", "syntax", "traces", "compare", "targets"):
        assert [_without_times(item) for item in parallel["steps"][name]] == [_without_times(item) for item in serial["steps"][name]]
    assert [v["status"] for v in parallel["versions"]] == ["ok"] * BROKEN + ["failed", "failed", "ok"]


def test_jobs_and_scheduler_are_no_inputs_of_any_result(tmp_path: Path) -> None:
    """The number of workers is how, not what: it is in no step's fingerprint and in no settings.json."""
    from histeg.engine.inputs import settings_values

    settings = load_settings(python_arguments({"jobs": 3, "scheduler": "tcp://127.0.0.1:8786"}), read_file=False)
    assert (settings.jobs, settings.scheduler) == (3, "tcp://127.0.0.1:8786")
    for step in ("traces", "compare", "targets"):
        assert not {"jobs", "scheduler"} & set(settings_values(settings, step))


def test_bad_jobs_is_one_line(tmp_path: Path) -> None:
    result = run_histeg("compute", "--repo", str(tmp_path), "--all", "--out", str(tmp_path / "out"), "-j", "0")
    assert result.code == 2
    assert result.stderr.strip() == "histeg: --jobs: setting 'jobs' must be an integer >= 1, not '0'" or \
        len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_two_jobs_without_dask_is_one_line(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    program = ("import sys; sys.modules['distributed'] = None\n"  # as if the 'cluster' extra were not installed
               "from histeg.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", program, "build", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"),
                           "-j", "2"], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cluster" in lines[0] and "Dask" in lines[0], done.stderr


def _stay(folder: str, prefix: str, index: int, seconds: float = 0.3) -> Outcome:
    """A task that records when it ran, by the clock every worker of this machine shares."""
    started = time.monotonic()
    time.sleep(seconds)
    Path(folder, f"{prefix}{index}.json").write_text(json.dumps([started, time.monotonic()]), encoding="utf-8")
    return Outcome({"targets": [{"index": index}]}, {}, {}, [f"version {index}: done"])


@pytest.mark.slow
def test_a_comparison_starts_once_its_two_versions_are_traced_not_every_version(tmp_path: Path) -> None:
    """Traces (stage 0, the last version's slow) and comparisons (stage 1, each after the traces of its version and its
    predecessor): with two workers, comparisons of early versions run while the last version is still traced, none
    before its two versions' traces are done, and a work whose task is None is not run and holds nothing up."""
    settings = load_settings(python_arguments({"jobs": 2}), read_file=False)
    count = 5
    traces = [Work(0, index, frozenset({index})) for index in range(count)]
    comparisons = [Work(1, index, frozenset({index, index - 1}), frozenset({(0, index), (0, index - 1)})) for index in range(1, count)]
    works = [work for index in range(count) for work in (*traces, *comparisons) if work.index == index]

    def task_for(work: Work) -> Any:
        if work.key == (1, 2):
            return None
        seconds = 2.0 if work.key == (0, count - 1) else 0.3
        return functools.partial(_stay, str(tmp_path), f"{work.stage}-", seconds=seconds)

    with executor_for(settings, tmp_path / "out", Console(0)) as executor:
        assert executor is not None
        finished = list(executor.map("pipelined", works, task_for))
    assert sorted(work.key for work, _ in finished) == sorted(work.key for work in works)
    assert [outcome for work, outcome in finished if work.key == (1, 2)] == [None]
    spans = {(stage, index): json.loads((tmp_path / f"{stage}-{index}.json").read_text()) for stage, index in
             [work.key for work, _ in finished if work.key != (1, 2)]}
    for index in (1, 3, 4):
        assert spans[(1, index)][0] >= max(spans[(0, index)][1], spans[(0, index - 1)][1]), (index, spans)
    assert spans[(1, 1)][1] <= spans[(0, count - 1)][1] and spans[(1, 3)][1] <= spans[(0, count - 1)][1], spans


@pytest.mark.slow
def test_comparisons_sharing_a_version_never_run_at_once(tmp_path: Path) -> None:
    settings = load_settings(python_arguments({"jobs": 3}), read_file=False)
    works = [Work(0, index, frozenset({index, index - 1}) if index else frozenset({index})) for index in range(6)]
    with executor_for(settings, tmp_path / "out", Console(0)) as executor:
        assert executor is not None
        finished = list(executor.map("targets", works, lambda work: functools.partial(_stay, str(tmp_path), "")))
    assert sorted(work.index for work, _ in finished) == list(range(6))
    assert all(isinstance(outcome, Outcome) and outcome.warnings == [f"version {work.index}: done"] for work, outcome in finished)
    spans = {index: json.loads((tmp_path / f"{index}.json").read_text()) for index in range(6)}
    for index in range(1, 6):
        assert spans[index][0] >= spans[index - 1][1] or spans[index - 1][0] >= spans[index][1], (index, spans)
    assert any(spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1] for a in range(6) for b in range(a + 2, 6))  # some ran at once


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _dask(*args: str, cwd: Path, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    """A Dask process started apart, in ``cwd`` with a TMPDIR of its own there."""
    command = [*prefix, str(Path(sys.executable).parent / "dask"), *args]
    (cwd / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(cwd / "tmp")}
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


@pytest.mark.slow
def test_a_scheduler_without_workers_or_a_worker_that_does_not_share_the_folder_is_one_line(tmp_path: Path) -> None:
    """A scheduler and workers started apart, as the README shows, each worker in its own working directory and TMPDIR:
    no worker, then a worker with its own view of the output folder, are one line each instead of a wait or failures."""
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    shared = tmp_path / "shared"
    out = shared / "out"
    address = f"tcp://127.0.0.1:{_free_port()}"
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", address.rpartition(":")[2], "--dashboard-address", ":0", cwd=tmp_path)
    workers: list[subprocess.Popen[str]] = []
    try:
        time.sleep(3)
        lonely = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--scheduler", address, timeout=120)
        assert lonely.code == 2 and lonely.stderr.strip().splitlines() == [lonely.stderr.strip()], lonely.stderr
        assert "has no worker" in lonely.stderr

        apart = shared  # the worker sees an empty folder of its own at the same path: no shared file system
        view = ("unshare", "-m", "--propagation", "private", "sh", "-c", f'mount -t tmpfs none "{apart}" && exec "$0" "$@"')
        if subprocess.run([*view[:-1], "true"], capture_output=True, check=False).returncode != 0:
            pytest.skip("this machine does not let a process have a mount namespace of its own")
        (tmp_path / "w1").mkdir()
        workers.append(_dask("worker", address, "--nthreads", "1", "--local-directory", str(tmp_path / "w1"), cwd=tmp_path / "w1", prefix=view))
        time.sleep(3)
        blind = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--scheduler", address, timeout=120)
        assert blind.code == 2 and blind.stderr.strip().splitlines() == [blind.stderr.strip()], blind.stderr
        assert "does not see the output folder" in blind.stderr and "shares" in blind.stderr
    finally:
        for process in (*workers, scheduler):
            process.terminate()
            process.wait(timeout=30)


def test_a_task_runs_a_versions_steps_in_data_flow_order_and_reads_no_other_versions_step_of_its_stage() -> None:
    """With ``-j N`` a task takes its version through a whole stage: every step it runs must find what it reads made
    already, by a step before it in the stage (its own version) or by an earlier stage (every version)."""
    from histeg.pipeline import FUSED, PIPELINE, stages

    for command, steps in PIPELINE.items():
        grouped = stages(steps)
        assert [step for stage in grouped for step in stage] == list(steps), command
        done: set[str] = set()
        for stage in grouped:
            assert len(stage) == 1 or any({step.name for step in stage} <= group for group in FUSED), stage
            for position, step in enumerate(stage):
                assert set(step.upstream) <= done | {earlier.name for earlier in stage[:position]}, (command, step.name)
            done |= {step.name for step in stage}
    assert [tuple(step.name for step in stage) for stage in stages(PIPELINE["compute"])] == [
        ("build", "statics", "traceConfig", "syntax", "traces"),
        ("compare", "targets"),
        ("merges",),
    ]
