"""Running versions' trace commands under the real tracer: outcomes, timeouts, repetitions, trace files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import msgspec
import orjson
import pytest

from histeg.errors import HistegError
from histeg.records.runs import Runs, TraceConfig, TraceHeader
from histeg.runs.commands import (
    command_line,
    main_command,
    pytest_command,
    shell_command,
    trace_commands,
)
from histeg.runs.outcome import pytest_counts
from histeg.runs.runner import (
    RUNS,
    TRACE_CONFIG,
    TraceOptions,
    run_traces,
    write_trace_config,
)
from histeg.store import OutputStore
from histeg.tracing import activation
from histeg.traces.call_tree import Trace
from histeg.tracing.format import read_meta
from histeg.traces.reader import read_trace
from histeg.tracing.tally import read_tally
from tests.conftest import SCHEMAS, validate_output
from tests.statics.versions import make_version

CALC = {
    "src/calc/__init__.py": "",
    "src/calc/ops.py": """
        def add(a, b):
            return a + b


        def twice(a):
            return add(a, a)
    """,
    "src/calc/__main__.py": """
        import sys

        from calc.ops import twice

        print(twice(21))
        sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    """,
}
PASSING = {
    **CALC,
    "tests/test_ops.py": """
        from calc.ops import add, twice


        def test_add():
            assert add(1, 2) == 3


        def test_twice():
            assert twice(2) == 4
    """,
}
FAILING = {
    **PASSING,
    "tests/test_more.py": """
        import unittest

        from calc.ops import add


        def test_wrong():
            assert add(1, 1) == 3


        class Cases(unittest.TestCase):
            def test_each(self):
                for n in range(3):
                    with self.subTest(n=n):
                        self.assertEqual(add(n, 0), n)
    """,
}


def traces_of(store: OutputStore, run: dict) -> list[Trace]:
    return [read_trace(store.version_dir(0) / path) for path in run["traces"]]


def called(trace: Trace) -> set[str]:
    return {call.function.ident for root in trace.entry_points for call in root.walk()}


def test_passing_suite_is_traced_test_by_test(tmp_path: Path) -> None:
    store = make_version(tmp_path, PASSING)
    summary = run_traces(store, 0, timeout=120)
    data = validate_output(store.file(0, RUNS))
    [run] = data["runs"]
    assert (run["outcome"], run["exitCode"], run["timedOut"], run["tests"]) == ("passed", 0, False, {"passed": 2})
    assert run["argv"][1:] == ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    assert summary.errors == [] and summary.failures == []
    [trace] = traces_of(store, run)
    assert trace.meta["label"] == "pytest" and trace.meta["root"] == str((store.version_dir(0) / ".run").resolve())
    assert not trace.truncated
    assert [root.label for root in trace.entry_points] == ["tests/test_ops.py::test_add", "tests/test_ops.py::test_twice"]
    assert {"calc.ops:add", "calc.ops:twice"} <= called(trace)
    log = (store.version_dir(0) / run["log"]).read_text()
    assert "2 passed" in log and "exit code: 0" in log
    assert not list(store.snapshot(0).rglob("__pycache__")), "the snapshot stays as extracted"
    assert not (store.version_dir(0) / ".run").exists(), "the run's fresh copy is removed"


def test_trace_configs_follow_the_version_settings(tmp_path: Path) -> None:
    store = make_version(tmp_path, PASSING, ignore_prefixes=("calc.legacy",), ignore_functions=("__repr__",))
    path = write_trace_config(store, 0, TraceOptions(values="off"))
    config = validate_output(path)
    assert config["root"] == str((store.version_dir(0) / ".run").resolve())
    assert (config["sources"], config["tests"], config["ignorePrefixes"]) == (["src"], ["tests"], ["calc.legacy"])
    assert (config["ignoreFunctions"], config["values"]) == (["__repr__"], "off")
    run_traces(store, 0, [pytest_command(["tests"], label="unit tests")], timeout=120)
    per_command = store.traces(0) / "run-1" / f"unit_tests.{TRACE_CONFIG}"
    schema = orjson.loads((SCHEMAS / "traceConfig.schema.json").read_bytes())
    command_config = orjson.loads(per_command.read_bytes())
    jsonschema.validate(command_config, schema)
    assert command_config["label"] == "unit_tests"
    assert command_config["traceDir"] == str((store.traces(0) / "run-1").resolve())


def test_the_files_the_tracer_shares_with_histeg_round_trip_through_their_records(tmp_path: Path) -> None:
    """traceConfig.json and the trace headers are read and written by the tracer as plain JSON: their records
    must read what the tracer's side reads and writes, key for key."""
    store = make_version(tmp_path, PASSING)
    run_traces(store, 0, [pytest_command(["tests"])], timeout=120, options=TraceOptions(values="repr", repr_types=("calc.ops.Thing",)))
    config_path = store.traces(0) / "run-1" / f"pytest.{TRACE_CONFIG}"
    config = TraceConfig.read(config_path)
    assert config.to_builtins() == orjson.loads(config_path.read_bytes())
    assert config.to_builtins() == activation.TraceConfig.read(config_path).to_json()
    assert (config.values, config.repr_types, config.label) == ("repr", ["calc.ops.Thing"], "pytest")
    [trace_file] = Runs.read(store.file(0, RUNS)).trace_files
    meta = read_meta(str(store.version_dir(0) / trace_file))
    header = msgspec.convert(meta, TraceHeader)
    assert header.sealed and header.label == "pytest" and header.values == "repr"
    assert msgspec.to_builtins(header) == meta
    (tmp_path / "old.json").write_bytes(config_path.read_bytes().replace(b'"schemaVersion": 3', b'"schemaVersion": 2'))
    with pytest.raises(HistegError, match="has schema version 2, this histeg reads version 3"):
        TraceConfig.read(tmp_path / "old.json")
    with pytest.raises(ValueError, match="has schema version 2, this histeg reads version 3"):
        activation.TraceConfig.read(tmp_path / "old.json")


def test_failing_suite_is_tolerated_and_still_traced(tmp_path: Path) -> None:
    store = make_version(tmp_path, FAILING)
    summary = run_traces(store, 0, timeout=120)
    [run] = validate_output(store.file(0, RUNS))["runs"]
    assert (run["outcome"], run["exitCode"], run["message"]) == ("failed", 1, "tests failed")
    assert run["tests"] == {"failed": 1, "passed": 3, "subtestsPassed": 3}
    assert len(summary.failures) == 1 and summary.errors == []
    [trace] = traces_of(store, run)
    assert trace.outcomes["tests/test_more.py::test_wrong"]["call"] == "failed"
    assert "tests.test_more:test_wrong" in called(trace)


def test_a_pytest_that_ends_before_any_test_is_an_error_not_failing_tests(tmp_path: Path) -> None:
    """Exit code 1 with no count at all (an old pytest crashing on a new interpreter, a conftest that exits):
    no test ran, so the version has no traces to compare, and histeg says why instead of reading it as failures."""
    store = make_version(tmp_path, {**PASSING, "tests/conftest.py": "import sys\n\nprint('conftest gives up')\nsys.exit(1)\n"})
    summary = run_traces(store, 0, timeout=120)
    [run] = validate_output(store.file(0, RUNS))["runs"]
    assert (run["outcome"], run["exitCode"], run["tests"]) == ("error", 1, None)
    assert run["message"] == "pytest exited with 1 before reporting any test: conftest gives up"
    assert summary.errors and not summary.failures


COLOURED = {
    **FAILING,
    "pyproject.toml": """
        [tool.pytest.ini_options]
        addopts = ["--color=yes"]
    """,
}


def test_test_counts_are_recorded_whatever_the_output_looks_like(tmp_path: Path) -> None:
    """A project that forces coloured output, and a run so quiet that pytest prints no summary line, still
    get pytest's counts: the plugin leaves them beside the run's trace."""
    store = make_version(tmp_path, COLOURED)
    commands = [pytest_command(["tests"]), pytest_command(["tests"], label="quiet", options=["-qq"])]
    run_traces(store, 0, commands, timeout=120)
    coloured, quiet = validate_output(store.file(0, RUNS))["runs"]
    expected = {"failed": 1, "passed": 3, "subtestsPassed": 3}
    assert (coloured["tests"], quiet["tests"]) == (expected, expected)
    log = (store.version_dir(0) / coloured["log"]).read_text()
    assert "\x1b[32m3 passed\x1b[0m" in log, "the summary line is coloured part by part"
    assert "passed" not in (store.version_dir(0) / quiet["log"]).read_text(), "-qq prints no summary line"
    [trace] = coloured["traces"]
    assert read_tally(store.version_dir(0) / trace) == {"failed": 1, "passed": 3, "subtests passed": 3}


def test_counts_are_read_from_coloured_output_when_the_plugin_left_none(tmp_path: Path) -> None:
    store = make_version(tmp_path, COLOURED)
    snapshot = store.snapshot(0)
    env = {**os.environ, "PYTHONPATH": str(snapshot / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=snapshot, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "\x1b[" in done.stdout.splitlines()[-1]
    assert pytest_counts(done.stdout) == {"failed": 1, "passed": 3, "subtestsPassed": 3}


@pytest.mark.slow
def test_repetitions_write_separate_directories_and_replace_earlier_runs(tmp_path: Path) -> None:
    store = make_version(tmp_path, PASSING)
    run_traces(store, 0, repeat=2, timeout=120)
    runs = validate_output(store.file(0, RUNS))["runs"]
    assert [(r["repetition"], r["outcome"]) for r in runs] == [(1, "passed"), (2, "passed")]
    assert [r["traces"][0].split("/")[1] for r in runs] == ["run-1", "run-2"]
    assert all(len(r["traces"]) == 1 for r in runs)
    run_traces(store, 0, repeat=1, timeout=120)
    assert sorted(p.name for p in store.traces(0).iterdir()) == ["bytecode.zst", "run-1"]
    assert len(validate_output(store.file(0, RUNS))["runs"]) == 1


def test_each_process_of_a_run_writes_its_own_trace(tmp_path: Path) -> None:
    files = {
        **CALC,
        "tests/test_spawn.py": """
            import subprocess
            import sys


            def test_child_process():
                child = subprocess.run([sys.executable, "-m", "calc"], capture_output=True, text=True, check=True)
                assert child.stdout.strip() == "42"
        """,
    }
    store = make_version(tmp_path, files)
    run_traces(store, 0, timeout=120)
    [run] = validate_output(store.file(0, RUNS))["runs"]
    assert run["outcome"] == "passed" and len(run["traces"]) == 2
    traces = traces_of(store, run)
    [parent] = [t for t in traces if [root.label for root in t.entry_points] == ["tests/test_spawn.py::test_child_process"]]
    [child] = [t for t in traces if t is not parent]
    assert "calc.ops:twice" in called(child) and "calc.ops:twice" not in called(parent)
    assert child.meta["pid"] != parent.meta["pid"] and child.meta["label"] == parent.meta["label"] == "pytest"


def test_main_modules_and_shell_commands(tmp_path: Path) -> None:
    store = make_version(tmp_path, PASSING)
    commands = [
        main_command("calc"),
        main_command("calc", ["3"]),
        shell_command(f"{sys.executable} -m calc && echo done"),
        shell_command("no-such-histeg-command"),
    ]
    run_traces(store, 0, commands, timeout=120)
    runs = validate_output(store.file(0, RUNS))["runs"]
    assert [r["command"]["label"] for r in runs] == ["main-calc", "main-calc-2", runs[2]["command"]["label"], "run-no-such-histeg-command"]
    assert [(r["outcome"], r["exitCode"]) for r in runs] == [("passed", 0), ("failed", 3), ("passed", 0), ("error", 127)]
    assert runs[3]["message"] == "command not found" and runs[3]["traces"] == []
    for run in runs[:3]:
        [trace] = traces_of(store, run)
        assert trace.meta["label"] == run["command"]["label"] and "calc.ops:twice" in called(trace)
    assert "done" in (store.version_dir(0) / runs[2]["log"]).read_text()


@pytest.mark.slow
def test_hanging_command_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    files = {**CALC, "src/calc/hang.py": "import time\n\nfrom calc.ops import add\n\nadd(1, 1)\ntime.sleep(60)\n"}
    store = make_version(tmp_path, files)
    started = time.monotonic()
    summary = run_traces(store, 0, [main_command("calc.hang")], timeout=1.5)
    assert time.monotonic() - started < 20
    [run] = validate_output(store.file(0, RUNS))["runs"]
    assert (run["outcome"], run["timedOut"]) == ("timeout", True)
    assert 1.5 <= run["durationSeconds"] < 15
    assert summary.errors and summary.errors[0].outcome == "timeout"
    [trace] = traces_of(store, run)  # interrupted, the process still closed its trace
    assert "calc.ops:add" in called(trace) and not trace.truncated


@pytest.mark.slow
def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    store = make_version(tmp_path, CALC)
    pid_file = tmp_path / "grandchild.pid"
    script = f"trap '' INT; sleep 60 & echo $! > {pid_file}; wait"
    run_traces(store, 0, [shell_command(script)], timeout=1.0, grace=0.5)
    [run] = validate_output(store.file(0, RUNS))["runs"]
    assert (run["outcome"], run["exitCode"], run["timedOut"]) == ("timeout", -9, True)
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(grandchild):
        time.sleep(0.05)
    assert not _alive(grandchild)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_versions_that_cannot_run_are_errors(tmp_path: Path) -> None:
    files = {
        **CALC,
        "tests/test_nothing.py": "def helper():\n    return 1\n",
        "tests/test_broken.py": "import calc.missing\n\n\ndef test_x():\n    pass\n",
    }
    store = make_version(tmp_path, files)
    commands = [pytest_command(["tests/test_nothing.py"], "empty"), pytest_command(["tests/test_broken.py"], "broken")]
    summary = run_traces(store, 0, commands, timeout=120)
    runs = validate_output(store.file(0, RUNS))["runs"]
    assert [(r["outcome"], r["exitCode"], r["message"]) for r in runs] == [
        ("error", 5, "pytest collected no tests"),
        ("error", 2, "pytest was interrupted"),
    ]
    assert runs[0]["tests"] == {} and runs[1]["tests"] == {"errors": 1}
    assert len(summary.errors) == 2
    missing = run_traces(store, 0, commands[:1], timeout=120, python=str(tmp_path / "no-python"))
    [run] = validate_output(store.file(0, RUNS))["runs"]
    assert (run["outcome"], run["exitCode"]) == ("error", None)
    assert run["message"].startswith("cannot start") and missing.errors


def test_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    store = make_version(tmp_path, PASSING)
    with pytest.raises(HistegError, match="repeat"):
        run_traces(store, 0, repeat=0)
    with pytest.raises(HistegError, match="timeout"):
        run_traces(store, 0, timeout=0)
    with pytest.raises(HistegError, match="missing result file"):
        run_traces(store, 1)


def test_command_list_and_labels() -> None:
    commands = trace_commands(["tests", "more_tests"], run_main=["pkg.cli", "pkg.cli"], run=["make check && ./run all"])
    assert [c.label for c in commands] == ["pytest", "main-pkg.cli", "main-pkg.cli-2", "run-make_check_._run_all"]
    assert command_line(commands[0], "py") == ["py", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", "more_tests"]
    assert command_line(commands[1], "py") == ["py", "-m", "pkg.cli"]
    assert command_line(commands[3], "py") == ["/bin/sh", "-c", "make check && ./run all"]
    assert [c.kind for c in trace_commands([], run=["x"], with_tests=False)] == ["shell"]


@pytest.mark.slow
def test_timeout_interrupts_even_when_histeg_runs_with_sigint_ignored(tmp_path: Path) -> None:
    """A background job of a non-interactive shell ignores SIGINT; its traced runs must not."""
    files = {**CALC, "src/calc/hang.py": "import time\n\nfrom calc.ops import add\n\nadd(1, 1)\ntime.sleep(60)\n"}
    store = make_version(tmp_path, files)
    script = (
        "import signal, sys\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "from pathlib import Path\n"
        "from histeg.runs.commands import main_command\n"
        "from histeg.runs.runner import run_traces\n"
        "from histeg.store import OutputStore\n"
        f"run_traces(OutputStore(Path({str(store.root)!r})), 0, [main_command('calc.hang')], timeout=3, grace=20)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    [run] = validate_output(store.file(0, RUNS))["runs"]
    assert run["outcome"] == "timeout" and run["durationSeconds"] < 15, "stopped by SIGINT, not by SIGKILL after the grace"
    [trace] = traces_of(store, run)
    assert "calc.ops:add" in called(trace) and not trace.truncated


def test_command_labels_are_made_alike_every_time() -> None:
    """A label cut at 60 characters just after a '_' must not change when labels are made again (traces are reused by label)."""
    from histeg.runs.commands import TraceCommand, unique_labels

    command = TraceCommand(kind="shell", label="run-" + "x" * 55 + " -m pytest", shell="x")
    once = unique_labels([command])
    assert unique_labels(once) == once and len(once[0].label) <= 60 and not once[0].label.endswith("_")
