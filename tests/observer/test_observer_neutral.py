"""The observer must not change the observed: real repositories, the real CLI and the real tracer.

Tracing a suite may not change its outcome (no project code runs to record a
value, each run gets a fresh copy of the snapshot), recorded values may not
depend on where the output directory is, and runs whose traces cannot be
trusted (tool id lost, process ended by ``os._exit``) must fail their version
instead of passing silently. Coverage measurement must keep working under the
tracer and measure the same lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CliResult, GitRepo, run_histeg, validate_output

from histeg.traces.call_tree import Call, Trace
from histeg.traces.reader import read_trace
from histeg.traces.records import Value

pytestmark = pytest.mark.slow  # traces real suites with and without histeg, coverage.py alongside

PYTEST = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")


def dedent(files: dict[str, str]) -> dict[str, str]:
    return {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}


OBSERVED = dedent({
    "src/neutral/__init__.py": "",
    "src/neutral/core.py": """
        import datetime
        import os
        import tempfile
        import time


        class Feed:
            \"\"\"Its repr drains the generator it holds.\"\"\"

            def __init__(self, n):
                self._items = (i for i in range(n))

            def __repr__(self):
                return f"Feed({list(self._items)})"

            def take(self):
                return next(self._items)


        class Meter:
            \"\"\"Counts the reads of its property.\"\"\"

            def __init__(self):
                self.reads = 0

            @property
            def value(self):
                self.reads += 1
                return 42


        class Spy:
            \"\"\"Notes every protocol method run on it.\"\"\"

            touched = []

            def __init__(self, payload):
                self.payload = payload

            def __repr__(self):
                Spy.touched.append("__repr__")
                return "Spy()"

            def __eq__(self, other):
                Spy.touched.append("__eq__")
                return self is other

            def __hash__(self):
                Spy.touched.append("__hash__")
                return 1

            def __len__(self):
                Spy.touched.append("__len__")
                return 1

            def __iter__(self):
                Spy.touched.append("__iter__")
                return iter(())

            def __bool__(self):
                Spy.touched.append("__bool__")
                return True

            def __getattr__(self, name):
                Spy.touched.append("__getattr__")
                raise AttributeError(name)


        def first(feed):
            return feed.take()


        def echo(obj):
            return obj


        def record(line, name="out.txt"):
            with open(name, "a") as handle:
                handle.write(line + "\\n")
            with open(name) as handle:
                return handle.read().splitlines()


        def now():
            return time.time()


        def today():
            return datetime.datetime.now()


        def here():
            return __file__


        def under_cwd(name):
            return os.path.join(os.getcwd(), name)


        def scratch():
            with tempfile.NamedTemporaryFile(delete=False) as handle:
                name = handle.name
            os.unlink(name)
            return name
    """,
    "tests/test_core.py": """
        import os
        import time

        from neutral.core import Feed, Meter, Spy, echo, first, here, now, record, scratch, today, under_cwd


        def test_feed_is_not_drained():
            feed = echo(Feed(3))
            assert first(feed) == 0
            assert first(feed) == 1


        def test_property_is_read_once():
            meter = echo(Meter())
            assert meter.value == 42
            assert meter.reads == 1


        def test_no_protocol_method_runs():
            spy = echo(Spy([1, 2]))
            assert echo([spy, {"k": spy}]) is not None
            assert Spy.touched == []


        def test_writes_one_line():
            assert record("hello") == ["hello"]


        def test_writes_one_line_elsewhere():
            assert record("again", "other.txt") == ["again"]


        def test_clock():
            before = time.time()
            assert now() >= before
            assert today().year >= 2024


        def test_paths():
            assert os.path.isfile(here())
            assert under_cwd("x.txt").startswith(os.getcwd())
            assert not os.path.exists(scratch())
    """,
    "README.md": "# neutral\n",
})
CLOCK = "neutral.core:now"
"""Returns a float that differs from run to run by nature: noise, never a divergence."""
CLOCKS = frozenset({CLOCK, "neutral.core:today"})
"""Every function that reads the clock: the values recorded for them may differ between runs."""
TESTS = 7




def clean_environment(**extra: str) -> dict[str, str]:
    """The environment without the outer pytest's and coverage's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HISTEG_", "COV_", "COVERAGE_"))}
    return {**env, "PYTHONDONTWRITEBYTECODE": "1", **extra}


@contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """Run histeg children with exactly ``env`` (run_histeg inherits the process environment)."""
    with pytest.MonkeyPatch.context() as patch:
        for key in list(os.environ):
            if key not in env:
                patch.delenv(key)
        for key, value in env.items():
            patch.setenv(key, value)
        yield


def histeg_in(env: dict[str, str], *args: str) -> CliResult:
    with environment(env):
        return run_histeg(*args)


def untraced_pytest(repo: GitRepo, checkout: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    """The suite of the repository's HEAD, run in a clone of it without histeg."""
    subprocess.run(["git", "clone", "-q", str(repo.path), str(checkout)], check=True, capture_output=True)
    env = {**env, "PYTHONPATH": str(checkout / "src")}
    return subprocess.run([*PYTEST, *extra], cwd=checkout, env=env, capture_output=True, text=True, timeout=120, check=False)


def junit_outcomes(path: Path) -> dict[str, str]:
    """``classname::name`` -> passed, failed or skipped, from a JUnit XML report."""
    outcomes = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        tags = {child.tag for child in case}
        outcome = "failed" if tags & {"failure", "error"} else "skipped" if "skipped" in tags else "passed"
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = outcome
    return outcomes


def tree_digest(directory: Path) -> dict[str, str]:
    """Every entry under ``directory`` with a digest of its content (link target for links)."""
    digests = {}
    for path in sorted(directory.rglob("*")):
        name = path.relative_to(directory).as_posix()
        if path.is_symlink():
            digests[name] = "link:" + os.readlink(path)
        elif path.is_file():
            digests[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            digests[name] = "dir"
    return digests


def run_traces(out: Path, index: int, repetition: int) -> list[Trace]:
    runs = validate_output(out / str(index) / "runs.json")["runs"]
    return [read_trace(out / str(index) / path) for run in runs if run["repetition"] == repetition for path in run["traces"]]


CallValues = tuple[str, tuple[Value | None, ...], Value | None, Value | None]


def recorded(traces: list[Trace], skip: frozenset[str] = frozenset()) -> dict[tuple[str | None, str | None], list[CallValues]]:
    """Per entry point, every call's function, parameters, return value and exception, in order."""
    values: dict[tuple[str | None, str | None], list[CallValues]] = {}
    for trace in traces:
        for root in trace.entry_points:
            values[(root.label, root.phase)] = [
                (call.function.ident, tuple(call.params), call.returned, call.raised)
                for call in root.walk() if call.function.ident not in skip
            ]
    return values


def calls_of(traces: list[Trace], ident: str) -> list[Call]:
    return [call for trace in traces for root in trace.entry_points for call in root.walk() if call.function.ident == ident]


@dataclass
class Observed:
    root: Path
    repo: GitRepo
    commits: list[str]
    out_a: Path
    out_b: Path
    snapshots_before: dict[int, dict[str, str]]
    snapshots_after: dict[int, dict[str, str]]
    untraced: subprocess.CompletedProcess
    untraced_junit: Path
    traced: CliResult
    traced_junit: Path
    exec_traces: list[Trace]
    exec_left_run_dir: bool
    compute_a: CliResult
    compute_b: CliResult


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> Observed:
    """One project, two commits (the second changes only the README), computed into two output folders.

    Between extraction and the snapshots' second digest, the suite runs traced via ``histeg exec``
    and four more times under ``histeg compute`` (two versions, two repetitions).
    """
    root = tmp_path_factory.mktemp("observed")
    repo = GitRepo.create(root / "repo")
    commits = [repo.commit("project", OBSERVED), repo.commit("readme only", {"README.md": "# neutral\n\nNo code changed.\n"})]
    env = clean_environment()
    out_a, out_b = root / "A", root / "B"
    versions = ("--repo", str(repo.path), "--versions", f"{commits[0]}..{commits[1]}")
    extracted = histeg_in(env, "extract", *versions, "--out", str(out_a), "--json")
    assert extracted.code == 0, extracted.stderr
    before = {index: tree_digest(out_a / str(index) / "snapshot") for index in (0, 1)}
    untraced_junit, traced_junit = root / "untraced.xml", root / "traced.xml"
    untraced = untraced_pytest(repo, root / "checkout", env, f"--junitxml={untraced_junit}")
    traced = histeg_in(env, "exec", str(out_a / "1"), "--", *PYTEST, f"--junitxml={traced_junit}")
    exec_traces = [read_trace(path) for path in sorted((out_a / "1" / "traces").glob("*.htrace"))]
    exec_left_run_dir = (out_a / "1" / ".run").exists()
    compute_a = histeg_in(env, "compute", *versions, "--out", str(out_a), "--repeat", "2", "--json")
    after = {index: tree_digest(out_a / str(index) / "snapshot") for index in (0, 1)}
    compute_b = histeg_in(env, "compute", *versions, "--out", str(out_b), "--repeat", "2", "--json")
    return Observed(
        root, repo, commits, out_a, out_b, before, after, untraced, untraced_junit, traced, traced_junit, exec_traces, exec_left_run_dir,
        compute_a, compute_b,
    )


def test_tracing_changes_no_test_outcome(observed: Observed) -> None:
    """Every test that passes untraced in a checkout passes traced, although several fail if observed."""
    assert observed.untraced.returncode == 0, observed.untraced.stdout
    assert observed.traced.code == 0, observed.traced.stdout + observed.traced.stderr
    untraced = junit_outcomes(observed.untraced_junit)
    assert len(untraced) == TESTS and set(untraced.values()) == {"passed"}
    assert junit_outcomes(observed.traced_junit) == untraced


def test_exec_traced_the_suite_in_a_copy_it_removed(observed: Observed) -> None:
    """The outcomes above come from a run that was really traced, in a copy that is gone."""
    [trace] = observed.exec_traces
    assert not trace.truncated and trace.broken is None
    assert len({root.label for root in trace.entry_points}) == TESTS
    assert {"neutral.core:Feed.take", "neutral.core:Meter.value", "neutral.core:record"} <= {
        call.function.ident for root in trace.entry_points for call in root.walk()
    }
    assert not observed.exec_left_run_dir


def test_every_repetition_passes_in_a_fresh_copy(observed: Observed) -> None:
    """Each repetition appends to out.txt: only a fresh working directory lets the second pass."""
    for out in (observed.out_a, observed.out_b):
        for index in (0, 1):
            runs = validate_output(out / str(index) / "runs.json")["runs"]
            assert [(r["repetition"], r["outcome"], r["tests"]) for r in runs] == [
                (1, "passed", {"passed": TESTS}), (2, "passed", {"passed": TESTS})
            ]
            assert not (out / str(index) / ".run").exists()


def test_snapshots_stay_as_extracted(observed: Observed) -> None:
    assert observed.snapshots_after == observed.snapshots_before
    for digest in observed.snapshots_after.values():
        assert "src/neutral/core.py" in digest
        assert not {"out.txt", "other.txt", "x.txt"} & set(digest)
        assert not any("__pycache__" in name or name.endswith(".pyc") for name in digest)


def test_readme_commit_has_no_targets(observed: Observed) -> None:
    assert observed.compute_a.code == 0, observed.compute_a.stderr
    summary = json.loads(observed.compute_a.stdout)
    assert summary["failedVersions"] == []
    assert summary["steps"]["extract"]["commits"] == 2
    targets = validate_output(observed.out_a / "1" / "testingTargets.json")
    assert targets["comparingAgainstVersion"] == observed.commits[0] and targets["identifier"] == observed.commits[1]
    assert targets["targets"] == []


def test_values_do_not_depend_on_the_output_folder(observed: Observed) -> None:
    """Same commit, same repetition, two output folders: every value but the clock readers' is equal."""
    assert observed.compute_b.code == 0, observed.compute_b.stderr
    for index in (0, 1):
        for repetition in (1, 2):
            in_a = recorded(run_traces(observed.out_a, index, repetition), CLOCKS)
            in_b = recorded(run_traces(observed.out_b, index, repetition), CLOCKS)
            assert len(in_a) == TESTS
            assert in_a == in_b, f"version {index}, run {repetition}"


def test_values_do_not_depend_on_the_run(observed: Observed) -> None:
    """Two repetitions of one version (same run directory, new temporary names): equal values but the clock readers'."""
    for out in (observed.out_a, observed.out_b):
        for index in (0, 1):
            assert recorded(run_traces(out, index, 1), CLOCKS) == recorded(run_traces(out, index, 2), CLOCKS)


def test_paths_are_recorded_as_placeholders(observed: Observed) -> None:
    traces = run_traces(observed.out_a, 1, 1)
    [here] = calls_of(traces, "neutral.core:here")
    assert here.returned == Value("str", repr("<root>/src/neutral/core.py"))
    [under_cwd] = calls_of(traces, "neutral.core:under_cwd")
    assert under_cwd.returned == Value("str", repr("<root>/x.txt"))
    [scratch] = calls_of(traces, "neutral.core:scratch")
    assert scratch.returned is not None and scratch.returned.repr is not None
    assert scratch.returned.repr.startswith("'<tmp>/"), scratch.returned
    real = (str(observed.root), str(observed.out_a.resolve()), os.path.realpath(tempfile.gettempdir()) + os.sep)
    texts = [value.repr for value in _all_values(traces) if value.repr is not None]
    assert not [text for text in texts if any(path in text for path in real)]


def _all_values(traces: list[Trace]) -> Iterator[Value]:
    for trace in traces:
        for root in trace.entry_points:
            for call in root.walk():
                yield from (value for value in (*call.params, call.returned, call.raised, *call.yielded) if value is not None)


def test_values_are_read_without_project_code(observed: Observed) -> None:
    """The generator is still unstarted and the property unread where the tracer recorded them."""
    traces = run_traces(observed.out_a, 1, 1)
    feeds = [call.returned for call in calls_of(traces, "neutral.core:echo") if call.returned is not None]
    assert {value.type for value in feeds} == {"neutral.core.Feed", "neutral.core.Meter", "neutral.core.Spy", "list"}
    assert all("Feed(" not in (value.repr or "") for value in feeds)
    [meter] = [value for value in feeds if value.type == "neutral.core.Meter"]
    assert meter.repr is not None and "reads=0" in meter.repr


def test_readme_commit_diverges_nowhere_in_either_folder(observed: Observed) -> None:
    """Only the clock is noise: paths under the run, temporary and home directories are not."""
    for out in (observed.out_a, observed.out_b):
        divergences = validate_output(out / "1" / "traceDivergences.json")
        assert divergences["entryPoints"]["matched"] == TESTS
        assert divergences["summary"]["divergences"] == 0 and divergences["divergences"] == []
        noisy = set(divergences["summary"]["noisyFunctions"])
        assert CLOCK in noisy and noisy <= CLOCKS, noisy
        assert validate_output(out / "1" / "testingTargets.json")["targets"] == []


LIBRARY = dedent({
    "src/calc/__init__.py": "",
    "src/calc/ops.py": """
        def double(x):
            if x > 10:
                return x * 2
            return x + x


        def unused(x):
            return -x
    """,
})


def analyze_one_commit(root: Path, files: dict[str, str]) -> tuple[CliResult, Path]:
    repo = GitRepo.create(root / "repo")
    repo.commit("project", {**LIBRARY, **dedent(files)})
    out = root / "out"
    result = histeg_in(clean_environment(), "analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--json")
    return result, out


RELEASES = {
    "free": "mon.free_tool_id(tool)",
    "clear": "clear(mon, tool)",
    "take over": "mon.free_tool_id(tool); mon.use_tool_id(tool, 'intruder')",
}


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_lost_tool_id_fails_the_version(release: str, tmp_path: Path) -> None:
    """A suite that frees, clears or takes over every tool id leaves traces with holes: never a pass."""
    test = f"""
        import sys

        from calc.ops import double


        def clear(mon, tool):
            if hasattr(mon, "clear_tool_id"):
                mon.clear_tool_id(tool)
            elif mon.get_tool(tool) is not None:
                mon.set_events(tool, 0)
                mon.register_callback(tool, mon.events.PY_START, None)


        def test_before():
            assert double(2) == 4


        def test_releases_every_tool_id():
            mon = sys.monitoring
            for tool in range(6):
                {RELEASES[release]}
            assert double(20) == 40


        def test_after():
            assert double(3) == 6
    """
    result, out = analyze_one_commit(tmp_path, {"tests/test_ops.py": test})
    assert result.code == 1, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    assert [failed["index"] for failed in summary["failedVersions"]] == [0]
    assert "tool id" in summary["failedVersions"][0]["reason"]
    [run] = validate_output(out / "0" / "runs.json")["runs"]
    assert run["outcome"] == "broken"
    assert run["message"] and "tool id" in run["message"]
    assert run["traces"] == [] and run["incompleteTraces"]
    assert "tool id" in result.stderr
    log = (out / "0" / run["log"]).read_text(encoding="utf-8")
    assert (run["exitCode"], run["tests"]) == (0, {"passed": 3}), f"the tracer changed the suite's outcome:\n{log}"


@pytest.mark.parametrize("hook", ["pytest_sessionfinish(session, exitstatus)", "pytest_unconfigure(config)"],
                         ids=["sessionfinish", "unconfigure"])
def test_os_exit_truncates_and_fails_the_version(hook: str, tmp_path: Path) -> None:
    """pytest ends through os._exit(0): exit code 0, but the trace was never closed."""
    files = {
        "tests/conftest.py": f"""
            import os


            def {hook}:
                os._exit(0)
        """,
        "tests/test_ops.py": """
            from calc.ops import double


            def test_double():
                assert double(3) == 6
        """,
    }
    result, out = analyze_one_commit(tmp_path, files)
    assert result.code == 1, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    assert [failed["index"] for failed in summary["failedVersions"]] == [0]
    [run] = validate_output(out / "0" / "runs.json")["runs"]
    assert (run["outcome"], run["exitCode"]) == ("truncated", 0)
    assert run["message"] and "os._exit" in run["message"]
    assert run["traces"] == [] and len(run["incompleteTraces"]) == 1
    assert "truncated" in result.stderr and "os._exit" in result.stderr


COVERED = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        addopts = "--cov=calc"
    """,
    "tests/test_ops.py": """
        from calc.ops import double


        def test_small():
            assert double(3) == 6


        def test_large():
            assert double(20) == 40
    """,
}


def coverage_numbers(report: Path) -> dict[str, Any]:
    """The measured lines and totals of a ``coverage json`` report, without its timestamped meta."""
    data = json.loads(report.read_text(encoding="utf-8"))
    return {"files": data["files"], "totals": data["totals"]}


@pytest.mark.parametrize("core", ["sysmon", "default"])
def test_coverage_measures_the_same_under_the_tracer(core: str, tmp_path: Path) -> None:
    """pytest-cov (with coverage on sys.monitoring or not) and histeg share the process: both see everything."""
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("project", {**LIBRARY, **dedent(COVERED)})
    env = clean_environment(**({"COVERAGE_CORE": "sysmon"} if core == "sysmon" else {}))
    out = tmp_path / "out"
    assert histeg_in(env, "extract", "--repo", str(repo.path), "--all", "--out", str(out)).code == 0
    untraced_report, traced_report = tmp_path / "untraced.json", tmp_path / "traced.json"
    untraced = untraced_pytest(repo, tmp_path / "checkout", env, f"--cov-report=json:{untraced_report}")
    assert untraced.returncode == 0, untraced.stdout + untraced.stderr
    assert "2 passed" in untraced.stdout
    traced = histeg_in(env, "exec", str(out / "0"), "--", *PYTEST, f"--cov-report=json:{traced_report}")
    assert traced.code == 0, traced.stdout + traced.stderr
    assert "2 passed" in traced.stdout
    numbers = coverage_numbers(untraced_report)
    assert numbers["totals"]["covered_lines"] > 0 and numbers["files"]["src/calc/ops.py"]["missing_lines"] == [8]
    assert coverage_numbers(traced_report) == numbers
    [trace] = [read_trace(path) for path in (out / "0" / "traces").glob("*.htrace")]
    assert not trace.truncated and trace.broken is None
    assert [root.label for root in trace.entry_points] == ["tests/test_ops.py::test_small", "tests/test_ops.py::test_large"]
    doubles = [call for root in trace.entry_points for call in root.walk() if call.function.ident == "calc.ops:double"]
    assert [(call.params, call.returned) for call in doubles] == [
        ([Value("int", "3")], Value("int", "6")), ([Value("int", "20")], Value("int", "40"))
    ]
