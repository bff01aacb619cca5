"""Long line paths on a real run: traced, compared within bounds, marked when capped, and interruptible.

The project's function walks a pseudo-random sequence of branches; its new version walks the same
iterations backwards. Every line runs as often as before, so nothing but a search for an edit script can
tell how far apart the two paths are, and that search gives up at its bound: the comparison of each test
costs about a second, whatever the paths' length.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from histeg.compare.sequences import CUTOFF
from tests.conftest import GitRepo, interruptible_histeg, run_histeg, validate_output

WALK = """
import random


def walk(n):
    rng = random.Random(n)
    steps = [rng.random() < 0.5 for _ in range(n)]
    total = 0
    for step in {order}:
        if step:
            total += 1
        else:
            total += 2
    return total
"""


def _tests(count: int) -> str:
    return "from walker import walk\n" + "".join(f"\n\ndef test_walk_{k}():\n    assert walk(100_000 + {k}) > 0\n" for k in range(count))


def _project(repo: GitRepo, tests: int) -> None:
    repo.commit("walk forwards", {"walker.py": WALK.format(order="steps"), "tests/test_walker.py": _tests(tests)})
    repo.commit("walk backwards", {"walker.py": WALK.format(order="reversed(steps)")})


def _divergences(nodes: list[dict]) -> list[dict]:
    found = []
    for node in nodes:
        found.append(node)
        found.extend(_divergences(node["children"]))
    return found


def test_a_capped_distance_is_written_as_a_lower_bound(make_repo, tmp_path: Path) -> None:
    repo, out = make_repo(), tmp_path / "out"
    _project(repo, tests=1)
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--python", sys.executable, "--confirm", "0", "-q")
    assert result.code == 0, result.stderr
    data = validate_output(out / "1" / "traceDivergences.json")
    [walked] = [d for d in _divergences(data["divergences"]) if d["function"] == "walker:walk"]
    assert walked["metrics"]["capped"] is True and walked["metrics"]["distance"] == CUTOFF
    assert walked["metrics"]["sections"] == 1 and walked["metrics"]["coverage"] == 0
    assert all("capped" not in d["metrics"] for d in _divergences(data["divergences"]) if d is not walked)
    validate_output(out / "1" / "testingTargets.json")
    targets = json.loads((out / "1" / "testingTargets.json").read_text())["targets"]
    assert targets[0]["qualname"] == "walk"


def _workers(pid: int) -> list[int]:
    """The comparison's worker processes: histeg's children started by multiprocessing's spawn."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError):
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[1]) == pid and b"spawn_main" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_the_comparison_ends_histeg_and_its_workers_within_two_seconds(make_repo, tmp_path: Path, signum: int,
                                                                                         code: int) -> None:
    repo, out = make_repo(), tmp_path / "out"
    _project(repo, tests=48)  # more pairs than the comparison does alone: it takes workers, each pair about a second
    common = ("--repo", str(repo.path), "--all", "--out", str(out), "--python", sys.executable)
    traced = run_histeg("analyze", *common, "-q")
    assert traced.code == 0, traced.stderr
    histeg = subprocess.Popen(interruptible_histeg("compute", *common, "--confirm", "0", "--compare-jobs", "2", "-q"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(workers := _workers(histeg.pid)) < 2:
            assert histeg.poll() is None, histeg.communicate()
            assert time.monotonic() < deadline, "the comparison never started its workers"
            time.sleep(0.05)
        time.sleep(1.5)  # the workers are in their first pairs
        assert histeg.poll() is None, "the comparison ended before it was interrupted: its pairs are too short for this test"
        histeg.send_signal(signum)
        sent = time.monotonic()
        _, stderr = histeg.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if histeg.poll() is None:
            histeg.kill()
            histeg.communicate()
        for pid in _workers(histeg.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert histeg.returncode == code, stderr
    assert took < 2.0, f"histeg took {took:.1f} s to end"
    assert not any(_alive(pid) for pid in workers), "the busy workers were ended with it"
    steps = json.loads((out / "1" / "steps.json").read_text())["steps"]
    assert steps["compare"]["status"] == "failed" and "targets" not in steps
    assert not (out / "1" / "traceDivergences.json").exists() and not (out / "1" / "testingTargets.json").exists()
