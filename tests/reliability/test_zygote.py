"""A re-run forked from a zygote is the run a fresh ``python -m pytest`` would be, or is refused.

Real processes throughout: a real zygote (the interpreter running these tests, pytest imported once), runs forked from
it through ``run_process``, and the same runs started fresh, each writing what its test saw of its own process.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path

import pytest

from histeg.processes.process import Refused, run_process
from histeg.processes.zygote import Zygote
from histeg.tracing.activation import TraceConfig, hook_dir, traced_environment, tracer_path
from tests.conftest import GitRepo, run_histeg, validate_output

STATE_TEST = """
import gc
import inspect
import json
import os
import random
import signal
import stat
import sys
import threading

import __main__


class Cycle:
    finalized = 0

    def __del__(self):
        Cycle.finalized += 1


def test_state():
    cycle = Cycle()
    cycle.itself = cycle
    del cycle
    gc.collect()
    here = os.getcwd()
    seen = {
        "cwd_first": sys.path[0] == here,
        "path": [entry.replace(here, "<cwd>") for entry in sys.path],
        "argv": sys.argv[1:],
        "orig_argv": sys.orig_argv[1:],
        "environ": {key: value.replace(here, "<cwd>") for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"},
        "session_leader": os.getsid(0) == os.getpid() == os.getpgid(0),
        "signals": {name: str(signal.getsignal(getattr(signal, name))) for name in ("SIGINT", "SIGCHLD", "SIGPIPE", "SIGTERM", "SIGHUP")},
        "modules": sorted(sys.modules),
        "main": sorted(vars(__main__)),
        "stdin_is_null": stat.S_ISCHR(os.fstat(0).st_mode) and os.fstat(0).st_rdev == os.stat(os.devnull).st_rdev,
        "depth": len(inspect.stack()),
        "threads": threading.active_count(),
        "flags": str(sys.flags),
        "recursion": sys.getrecursionlimit(),
        "random": random.random(),
        "lib": __import__("lib").__file__.replace(here, "<cwd>"),
        "gc": [gc.isenabled(), gc.get_threshold(), Cycle.finalized],
        "gc_listed": len(gc.get_objects()),
    }
    with open("state.json", "w") as handle:
        json.dump(seen, handle)
    print("stdout reached")
    sys.stderr.write("stderr reached\\n")
"""

SLEEPING_TEST = """
import subprocess
import sys
import time


def test_sleeps():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # left behind in the run's group
    time.sleep(60)
"""


def _environment(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "HISTEG_", "COV_"))}
    env["PYTHONPATH"] = str(hook_dir())
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return {**env, **extra}


def _project(folder: Path, name: str, text: str) -> Path:
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def _state_project(folder: Path) -> tuple[Path, str]:
    """A project whose test writes what it saw, and the ``PYTHONPATH`` of its runs (its sources after the hook)."""
    work = _project(folder, "test_state.py", STATE_TEST)
    _project(work / "src", "lib.py", "")  # the project's sources: on its runs' PYTHONPATH, never on the zygote's
    return work, os.pathsep.join([str(hook_dir()), str(work / "src")])


def _argv(test: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", test]


@pytest.fixture
def zygote(tmp_path: Path):
    made = Zygote(sys.executable, _environment(), tmp_path, tmp_path / "zygote.log")
    assert made.why_not is None, (tmp_path / "zygote.log").read_text()
    yield made
    made.close()


def _states(tmp_path: Path, zygote: Zygote, traced: bool) -> dict[str, dict]:
    """What the state test saw in a fresh run and in two forked ones, each in a folder of its own."""
    states = {}
    for kind in ("fresh", "forked", "forked-again"):
        work, path = _state_project(tmp_path / kind)
        env = _environment(PYTHONPATH=path)
        if traced:
            config = TraceConfig(root=str(work), sources=["src"], tests=["."], trace_dir=str(work / "traces"))
            config.write(work / "trace.json")
            env = traced_environment(work / "trace.json", env)
        start = {"start": zygote.start} if kind != "fresh" else {}
        result = run_process(_argv("test_state.py"), work, env, 60, **start)
        assert result.exit_code == 0, result.stdout_tail + result.stderr_tail
        assert "stdout reached" in result.stdout_tail and "stderr reached" in result.stderr_tail
        assert traced == any((work / "traces").glob("*.htrace"))
        states[kind] = json.loads((work / "state.json").read_text())
    return states


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "traced"])
def test_a_forked_run_sees_what_a_fresh_one_sees(tmp_path: Path, traced: bool) -> None:
    env = _environment()
    if traced:  # the zygote of traced runs: made from such a run's environment, as histeg makes it
        env = {**traced_environment(tmp_path / "trace.json", env), "PYTHONPATH": os.pathsep.join([str(hook_dir()), str(tracer_path())])}
    zygote = Zygote(sys.executable, env, tmp_path, tmp_path / "zygote.log")
    try:
        assert zygote.why_not is None, (tmp_path / "zygote.log").read_text()
        states = _states(tmp_path, zygote, traced)
    finally:
        zygote.close()
    fresh, forked, again = states["fresh"], states["forked"], states["forked-again"]
    assert fresh.pop("random") != forked.pop("random") != again.pop("random")  # each run draws its own
    listed = fresh.pop("gc_listed"), forked.pop("gc_listed"), again.pop("gc_listed")
    assert listed[1] < listed[0] / 2 and listed[2] < listed[0] / 2, listed  # the zygote's objects: frozen, not traversed
    assert fresh["gc"] == [True, list(gc.get_threshold()), 1]
    assert fresh["cwd_first"] and fresh["session_leader"] and fresh["stdin_is_null"] and fresh["lib"] == "<cwd>/src/lib.py"
    assert traced == ("histeg.tracing.monitor" in fresh["modules"])
    assert forked == fresh
    assert again == fresh


def test_a_run_whose_environment_differs_in_more_than_its_path_or_whose_tracing_differs_is_refused(tmp_path: Path, zygote: Zygote) -> None:
    work, path = _state_project(tmp_path / "work")
    other = "C.UTF-8" if os.environ.get("LANG") != "C.UTF-8" else "C"
    with pytest.raises(Refused, match="LANG"):
        run_process(_argv("test_state.py"), work, _environment(PYTHONPATH=path, LANG=other), 60, start=zygote.start)
    assert not (work / "state.json").exists()
    with pytest.raises(Refused, match="PYTHONPATH lacks"):  # the zygote's own entries (the hook's) are every run's
        run_process(_argv("test_state.py"), work, _environment(PYTHONPATH=str(work / "src")), 60, start=zygote.start)
    with pytest.raises(Refused, match="it is traced"):
        run_process(
            _argv("test_state.py"),
            work,
            _environment(PYTHONPATH=path, HISTEG_TRACE_CONFIG=str(work / "trace.json")),
            60,
            start=zygote.start,
        )
    assert not (work / "state.json").exists()


def test_a_run_whose_folder_shadows_a_module_pytest_imported_is_refused(tmp_path: Path, zygote: Zygote) -> None:
    work, path = _state_project(tmp_path / "work")
    (work / "textwrap.py").write_text("raise ImportError('shadowed')\n", encoding="utf-8")  # a fresh start would import this one
    with pytest.raises(Refused, match="textwrap"):
        run_process(_argv("test_state.py"), work, _environment(PYTHONPATH=path), 60, start=zygote.start)


@pytest.mark.slow
def test_a_forked_run_that_times_out_is_stopped_with_what_it_left_behind(tmp_path: Path, zygote: Zygote) -> None:
    work = _project(tmp_path / "work", "test_sleeps.py", SLEEPING_TEST)
    started = time.monotonic()
    result = run_process(_argv("test_sleeps.py"), work, _environment(), 3, grace=2, start=zygote.start)
    assert result.timed_out
    assert time.monotonic() - started < 20
    assert result.exit_code is not None and result.exit_code != 0
    leftovers = [line for line in os.popen("ps -eo args").read().splitlines() if "time.sleep(60)" in line and "ps -eo" not in line]
    assert not leftovers


@pytest.mark.parametrize("broken", ["no pytest", "no hook"])
def test_a_zygote_that_cannot_serve_refuses_every_run(tmp_path: Path, broken: str) -> None:
    """A pytest that cannot be imported says why in the log; without the hook on its path the zygote is a plain pytest
    run (of an empty folder), and what it prints is no answer."""
    bad = _project(tmp_path / "bad", "pytest.py", "raise ImportError(1)")
    path = f"{hook_dir()}{os.pathsep}{bad}" if broken == "no pytest" else ""
    made = Zygote(sys.executable, _environment(PYTHONPATH=path), tmp_path, tmp_path / "zygote.log")
    try:
        assert made.why_not is not None
        with pytest.raises(Refused):
            made.start(_argv("x.py"), tmp_path, _environment())
    finally:
        made.close()
    assert broken == "no hook" or "ImportError" in (tmp_path / "zygote.log").read_text()


PIPELINE_TESTS = """import os

import lib


def test_f():
    assert lib.f(1) == 2


def test_g():
    assert lib.g(1) == 1


def test_parent():
    assert os.getppid() != 1
"""


@pytest.mark.slow
def test_a_versions_re_runs_are_forked_from_one_zygote_and_run_only_the_tests_that_diverged(tmp_path: Path) -> None:
    """Through the command line: every re-run's log names the zygote it was forked from, and runs the selection alone;
    the middle version's re-runs, in its comparison with the version before and with the one after, share one."""
    repo = GitRepo.create(tmp_path / "repo")
    lib = "def f(x):\n    return x + {f}\n\n\ndef g(x):\n    return x + {g}\n"
    repo.commit("base", {"lib.py": lib.format(f=1, g=0), "tests/test_lib.py": PIPELINE_TESTS})
    repo.commit("f adds two", {"lib.py": lib.format(f=2, g=0)})
    repo.commit("g adds one", {"lib.py": lib.format(f=2, g=1)})
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), "--repeat", "1")
    assert result.code == 0, result.stderr

    def runs(index: int) -> list[dict]:
        batches = validate_output(tmp_path / "out" / str(index) / "confirmations.json")["batches"]
        return [run for batch in batches for run in batch["runs"]]

    def zygotes(index: int) -> set[str]:
        logs = [(tmp_path / "out" / str(index) / run["log"]).read_text(encoding="utf-8") for run in runs(index)]
        started = [line for log in logs for line in log.splitlines() if line.startswith("started as ")]
        assert len(started) == len(logs) and all("forked from zygote" in line for line in started), logs
        return {line.split()[-1] for line in started}

    assert sorted(json.dumps(run["tests"], sort_keys=True) for run in runs(1)) == [
        '{"deselected": 2, "failed": 1}',
        '{"deselected": 2, "failed": 1}',
        '{"deselected": 2, "passed": 1}',
        '{"deselected": 2, "passed": 1}',
    ]  # test_f against version 0 (it fails here), test_g against version 2 (it passes here)
    assert all(run["tests"] == {"passed": 1, "deselected": 2} for run in runs(0))
    assert len(zygotes(1)) == 1
    environments = {
        json.loads((tmp_path / "out" / str(index) / "build.json").read_text(encoding="utf-8"))["environment"]["python"]
        for index in range(3)
    }
    assert len(zygotes(0) | zygotes(1) | zygotes(2)) == len(environments)  # a zygote holds nothing of a version: one per environment


ORDER_TEST = """
class Node:
    pass


def test_order():
    nodes = [Node() for _ in range(2000)]
    index = {id(node): number for number, node in enumerate(nodes)}
    print("ORDER", hash(tuple(index[id(node)] for node in set(nodes))))
"""


def test_objects_hashed_by_identity_iterate_in_another_order_in_each_forked_run(tmp_path: Path, zygote: Zygote) -> None:
    """As in fresh processes: a set of objects larger than a page's worth of slots is no more stable in forked runs, so
    the re-runs of one version still tell such a test's noise (forked runs share the zygote's heap, not its future)."""
    work = _project(tmp_path / "work", "test_order.py", ORDER_TEST)
    orders = set()
    for _ in range(3):
        result = run_process(_argv("test_order.py"), work, _environment(), 60, start=zygote.start)
        assert result.exit_code == 0, result.stderr_tail
        orders.add(next(line for line in result.stdout_tail.splitlines() if "ORDER" in line))
    assert len(orders) > 1


@pytest.mark.slow
def test_a_zygote_closed_while_a_run_is_under_way_exits_after_it(tmp_path: Path) -> None:
    """Closing only ends the zygote's input: the run forked from it ends as it would have, with its exit code."""
    made = Zygote(sys.executable, _environment(), tmp_path, tmp_path / "zygote.log")
    work = _project(tmp_path / "work", "test_slow.py", "import time\n\n\ndef test_slow():\n    time.sleep(2)\n")
    child = made.start(_argv("test_slow.py"), work, _environment())
    made.close(wait=0)
    assert made.process.poll() is None  # still serving its run
    started = time.monotonic()
    while not child.exited() and time.monotonic() - started < 60:
        child.output.read(0.1)
    assert child.reap() == 0
    made.process.wait(timeout=10)
