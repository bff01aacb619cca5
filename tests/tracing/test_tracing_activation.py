"""Activation through the start-up hook: subprocesses, user sitecustomize, kills, memory, parity with untraced runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import histeg
from histeg.tracing.activation import CONFIG_ENV, TraceConfig, hook_dir, traced_environment, tracer_path
from histeg.traces.reader import TraceFile, read_trace, trace_files
from tests.conftest import run_histeg
from tests.tracing.conftest import base_environment, project_config, write_project

LIB = '''
def step(i):
    return i % 7


def spin(n):
    total = 0
    for i in range(n):
        total += step(i)
    return total
'''

MIXED_TESTS = '''
import pytest

from pkg.lib import spin, step


def test_passes():
    assert spin(10) == 27


def test_fails():
    assert step(3) == 4


@pytest.mark.xfail(reason="known")
def test_xfails():
    assert step(1) == 2


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.fixture
def resource():
    yield step(5)
    step(6)


def test_fixture(resource):
    assert resource == 5
'''

PROJECT = {"src/pkg/__init__.py": "", "src/pkg/lib.py": LIB, "tests/test_mixed.py": MIXED_TESTS}


def test_environment_contract(tmp_path):
    env = traced_environment(tmp_path / "c.json", {"PYTHONPATH": "/elsewhere", "PYTHONHASHSEED": "random", "KEEP": "1"})
    assert env["PYTHONPATH"].split(os.pathsep) == [str(hook_dir()), str(tracer_path()), "/elsewhere"]
    assert sorted(path.name for path in tracer_path().iterdir()) == ["histeg"], "only the package, not its source tree"
    assert (tracer_path() / "histeg").resolve() == Path(histeg.__file__).resolve().parent
    assert env["PYTEST_PLUGINS"] == "histeg_pytest"
    assert env[CONFIG_ENV] == str((tmp_path / "c.json").resolve())
    assert env["PYTHONHASHSEED"] == "0" and env["KEEP"] == "1"
    assert (hook_dir() / "sitecustomize.py").is_file()
    config = TraceConfig(root="/r", sources=["src"], tests=["tests"], trace_dir="/t", label="x")
    config.write(tmp_path / "c.json")
    assert TraceConfig.read(tmp_path / "c.json") == config
    assert TraceConfig.from_json(json.loads((tmp_path / "c.json").read_text())).to_json() == config.to_json()
    written = json.loads((tmp_path / "c.json").read_text())
    assert (written["schemaVersion"], written["traceDir"], written["ignoreFunctions"]) == (3, "/t", config.ignore_functions)


def outcome_lines(stdout: str) -> set[str]:
    return {line.split(" - ")[0] for line in stdout.splitlines() if line.startswith(("PASSED", "FAILED", "XFAIL", "SKIPPED"))}


def test_traced_suite_passes_and_fails_like_the_untraced_one(traced):
    plain = traced(PROJECT, name="plain", trace=False)
    run = traced(PROJECT, name="traced")
    assert plain.traces == []
    assert run.proc.returncode == plain.proc.returncode == 1
    assert outcome_lines(run.proc.stdout) == outcome_lines(plain.proc.stdout) != set()
    (trace,) = run.traces
    assert trace.outcomes["tests/test_mixed.py::test_fails"]["call"] == "failed"
    assert trace.outcomes["tests/test_mixed.py::test_xfails"]["call"] == "xfailed"
    assert trace.outcomes["tests/test_mixed.py::test_skipped"] == {"setup": "skipped", "teardown": "passed"}
    failing = run.entry("::test_fails")
    assert failing.raised is not None and failing.raised.type == "AssertionError"
    fixture = [c for c in run.roots if c.function.ident == "tests.test_mixed:resource"]
    # offsets count from co_firstlineno, which is the decorator line
    assert len(fixture) == 1 and fixture[0].phase == "setup" and fixture[0].label.endswith("::test_fixture")
    assert fixture[0].lines == [2, 3] and fixture[0].ended and fixture[0].yielded[0].repr == "5"
    assert [child.params[0].repr for _, child in fixture[0].children] == ["5", "6"]


def test_subprocesses_trace_into_their_own_files(traced):
    files = {
        **PROJECT,
        "tests/test_mixed.py": "",
        "tests/test_sub.py": '''
            import subprocess, sys

            from pkg.lib import step


            def test_child():
                code = "from pkg.lib import spin; print(spin(3))"
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                assert out.stdout.strip() == str(step(0) + 3)
        ''',
    }
    run = traced(files)
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    assert len(run.traces) == 2
    child = next(t for t in run.traces if t.meta["argv"][:1] == ["-c"])
    (spin,) = child.entry_points
    assert spin.function.ident == "pkg.lib:spin" and spin.label is None and len(spin.children) == 3
    assert all(path.name.startswith(f"{t.meta['pid']}-") for t, path in zip(run.traces, trace_files(run.project / "traces")))


def test_user_sitecustomize_still_runs(traced, tmp_path):
    user_site = tmp_path / "usersite"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text("import os\nos.environ['USER_SITE_RAN'] = 'yes'\n")
    project = tmp_path / "p"
    write_project(project, {**PROJECT, "tests/test_mixed.py": ""})
    env = base_environment(project)
    env["PYTHONPATH"] += os.pathsep + str(user_site)
    env = traced_environment(project_config(project), env)
    code = "import os, sitecustomize; from pkg.lib import spin; spin(2); print(os.environ.get('USER_SITE_RAN'), sitecustomize.__file__)"
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=project, capture_output=True, text=True, check=True)
    ran, path = out.stdout.split()
    assert ran == "yes" and path == str(user_site / "sitecustomize.py")
    (trace,) = [read_trace(p) for p in trace_files(project / "traces")]
    assert [c.function.ident for c in trace.entry_points] == ["pkg.lib:spin"]


def test_hook_is_inert_without_a_config(tmp_path):
    env = base_environment(tmp_path)
    env["PYTHONPATH"] = str(hook_dir())
    code = "import sys, histeg.tracing.session as s; print(s.active(), 'histeg.tracing.monitor' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "False"]


def test_broken_config_is_one_line_and_the_program_still_runs(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    env = traced_environment(tmp_path / "bad.json", base_environment(tmp_path))
    out = subprocess.run([sys.executable, "-c", "print('ran')"], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == "ran\n" and out.stderr.count("\n") == 1 and "histeg: tracing disabled" in out.stderr


def test_a_config_of_another_schema_version_is_refused_whole(tmp_path):
    """An older histeg's config (snake_case keys, configVersion 2) is not half-read: no trace, one line naming both versions."""
    old = {"configVersion": 2, "root": str(tmp_path), "sources": ["src"], "tests": [], "trace_dir": str(tmp_path / "traces")}
    (tmp_path / "old.json").write_text(json.dumps(old))
    with pytest.raises(ValueError, match="schema version None, this histeg reads version 3"):
        TraceConfig.read(tmp_path / "old.json")
    newer = {**TraceConfig(root=str(tmp_path), sources=["src"], tests=[], trace_dir=str(tmp_path / "traces")).to_json(), "schemaVersion": 4}
    with pytest.raises(ValueError, match="schema version 4, this histeg reads version 3"):
        TraceConfig.from_json(newer)
    env = traced_environment(tmp_path / "old.json", base_environment(tmp_path))
    out = subprocess.run([sys.executable, "-c", "print('ran')"], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == "ran\n" and out.stderr.count("\n") == 1
    assert "histeg: tracing disabled" in out.stderr and "schema version None, this tracer reads version 3" in out.stderr
    assert not (tmp_path / "traces").exists()


LONG_RUN = '''
import resource, sys, time
from pkg.lib import spin

rounds = int(sys.argv[1])
for i in range(rounds):
    spin(1000)
    if i == 20:
        print("ready", flush=True)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
if len(sys.argv) > 2:
    time.sleep(60)
'''


def start_long_run(project: Path, *args: str) -> subprocess.Popen:
    write_project(project, {**PROJECT, "tests/test_mixed.py": "", "long_run.py": LONG_RUN})
    env = traced_environment(project_config(project, line_budget=0), base_environment(project))  # every line of every call
    return subprocess.Popen([sys.executable, "long_run.py", *args], cwd=project, env=env, stdout=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_killed_process_leaves_a_readable_truncated_trace(tmp_path):
    project = tmp_path / "p"
    child = start_long_run(project, "400", "sleep")
    assert child.stdout.readline() == "ready\n"
    child.stdout.readline()  # the whole loop ran; the process now sleeps with its trace open
    time.sleep(0.2)
    child.send_signal(signal.SIGKILL)
    child.wait()
    (path,) = trace_files(project / "traces")
    trace = read_trace(path)
    assert trace.truncated
    complete = [c for c in trace.entry_points if c.ended]
    assert len(complete) >= 100
    assert all(c.lines == [1, *[2, 3] * 1000, 2, 4] and len(c.children) == 1000 for c in complete)
    result = run_histeg("trace", "show", str(path))
    assert result.code == 0 and "truncated" in result.stderr


def test_memory_does_not_grow_with_the_length_of_the_run(tmp_path):
    peaks = []
    for rounds in (100, 800):
        child = start_long_run(tmp_path / str(rounds), str(rounds))
        out, _ = child.communicate(timeout=300)
        assert child.returncode == 0
        peaks.append(int(out.split()[-1]))
        (path,) = trace_files(tmp_path / str(rounds) / "traces")
        assert TraceFile(path).line_events == rounds * (1 + 2 * 1000 + 2 + 1000)
    assert peaks[1] - peaks[0] < 8 * 1024, peaks  # KiB: 8 times longer, less than 8 MiB more


def test_exec_runs_a_command_traced(tmp_path):
    project = tmp_path / "p"
    write_project(project, {**PROJECT, "tests/test_mixed.py": ""})
    config = project_config(project, label="by-exec")
    code = "import os; from pkg.lib import spin; print(spin(4), os.environ['PYTHONHASHSEED'])"
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    out = subprocess.run(
        [sys.executable, "-m", "histeg", "exec", str(config), "--", sys.executable, "-c", code],
        env=env, capture_output=True, text=True, check=False,
    )
    assert (out.returncode, out.stdout) == (0, "6 0\n"), out.stderr
    (trace,) = [read_trace(p) for p in trace_files(project / "traces")]
    assert trace.meta["label"] == "by-exec" and trace.entry_points[0].function.ident == "pkg.lib:spin"
    failing = subprocess.run([sys.executable, "-m", "histeg", "exec", str(config), "--", sys.executable, "-c", "raise SystemExit(3)"], capture_output=True, check=False)
    assert failing.returncode == 3
    missing = run_histeg("exec", str(tmp_path / "nowhere"), "--", "true")
    assert missing.code == 2 and "neither a trace config file nor a version directory" in missing.stderr


def test_pytest_plugin_is_inert_unless_tracing(traced):
    files = {
        **PROJECT,
        "tests/test_mixed.py": "",
        "tests/test_plugin.py": '''
            import os


            def test_plugin_state(pytestconfig):
                assert pytestconfig.pluginmanager.has_plugin("histeg")
                labels = pytestconfig.pluginmanager.has_plugin("histeg-trace-labels")
                assert labels == ("HISTEG_TRACE_CONFIG" in os.environ)
        ''',
    }
    assert traced(files, name="plain", trace=False).proc.returncode == 0
    run = traced(files, name="traced")
    assert run.proc.returncode == 0, run.proc.stdout
    assert run.entry("::test_plugin_state").lines == [1, 2, 3]


def test_exec_on_a_version_directory_runs_in_a_fresh_copy_of_its_snapshot(tmp_path):
    version_dir = tmp_path / "out" / "0"
    write_project(version_dir / "snapshot", {**PROJECT, "tests/test_mixed.py": ""})
    version = {
        "schemaVersion": 1, "index": 0, "identifier": "a" * 40, "shortIdentifier": "a" * 12, "author": "A", "date": "2024-01-01T00:00:00+00:00",
        "msg": "m", "comparingAgainstVersion": None, "comparingAgainstIndex": None, "snapshot": "snapshot", "skippedEntries": [],
        "gitDescribe": None, "gitCommits": 1,
        "sourcesIn": ["src"], "testsIn": ["tests"], "commandToBuild": None, "ignoredModulesByPrefix": [],
        "ignoredModulesBySuffix": [], "ignoredDirectories": [], "ignoredFunctionsByName": ["__repr__"],
    }
    (version_dir / "version.json").write_text(json.dumps(version))
    code = "import sys; sys.path.insert(0, 'src'); from pkg.lib import spin; print(spin(2))"
    out = subprocess.run([sys.executable, "-m", "histeg", "exec", str(version_dir), "--", sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (out.returncode, out.stdout) == (0, "1\n"), out.stderr
    config = TraceConfig.read(version_dir / "traceConfig.json")
    assert config.root == str((version_dir / ".run").resolve()) and config.ignore_functions == ["__repr__"]
    assert not (version_dir / ".run").exists(), "the fresh copy is removed after the command"
    (trace,) = [read_trace(p) for p in trace_files(version_dir / "traces")]
    assert [c.function.ident for c in trace.entry_points] == ["pkg.lib:spin"]


def test_forked_child_writes_its_own_trace(tmp_path):
    project = tmp_path / "p"
    script = '''
import os, sys
from pkg.lib import spin, step

step(1)
pid = os.fork()
if pid == 0:
    spin(2)
    sys.exit(0)
os.waitpid(pid, 0)
step(2)
'''
    write_project(project, {**PROJECT, "tests/test_mixed.py": "", "forking.py": script})
    env = traced_environment(project_config(project), base_environment(project))
    subprocess.run([sys.executable, "forking.py"], cwd=project, env=env, check=True)
    traces = {t.meta["pid"]: t for t in (read_trace(p) for p in trace_files(project / "traces"))}
    assert len(traces) == 2 and not any(t.truncated for t in traces.values())
    calls = sorted([(c.function.ident, c.params[0].repr) for c in t.entry_points] for t in traces.values())
    assert calls == [[("pkg.lib:spin", "2")], [("pkg.lib:step", "1"), ("pkg.lib:step", "2")]]
