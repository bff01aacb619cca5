"""The steps chained on real repositories: instrument and analyze, failures isolated per version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from histeg.statics.observed import observed_call_graph
from histeg.store import OutputStore
from histeg.traces.reader import read_trace
from tests.conftest import GitRepo, validate_output

LIB = "def double(x):\n    if x > 10:\n        return x * 2\n    return x + x\n"
TEST = "from lib import double\n\ndef test_double():\n    assert double(3) == 6\n"


def project(repo: GitRepo) -> list[str]:
    return [
        repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST}),
        repo.commit("broken test", {"tests/test_lib.py": TEST.replace("== 6", "== 7")}),
        repo.commit("hanging import", {"tests/conftest.py": "import time\ntime.sleep(60)\n"}),
        repo.commit("repaired", {"tests/test_lib.py": TEST}, remove=("tests/conftest.py",)),
    ]


@pytest.mark.slow
def test_analyze_traces_every_version_and_isolates_failures(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    project(repo)
    out = tmp_path / "out"
    args = ("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--timeout", "5", "--repeat", "1", "--json")
    result = histeg(*args)
    assert result.code == 1, result.stderr
    summary = json.loads(result.stdout)
    assert [f["index"] for f in summary["failedVersions"]] == [2]
    assert "timeout" in summary["failedVersions"][0]["reason"]
    assert [t["outcomes"] for t in summary["steps"]["traces"]] == [["passed"], ["failed"], ["timeout"], ["passed"]]
    assert "version 1: pytest (run 1) failed" in result.stderr
    for index in range(4):
        for name in ("functions", "callGraph", "syntaxChanges", "runs"):
            validate_output(out / str(index) / f"{name}.json")
    graph = validate_output(out / "0" / "callGraph.json")
    edges = {(e["caller"], e["callee"]): e["kind"] for e in graph["edges"]}
    assert edges[("tests.test_lib:test_double", "lib:double")] == "static"  # the traces' calls are added when it is read
    assert observed_call_graph(OutputStore(out), 0).edges["tests.test_lib:test_double", "lib:double"]["kind"] == "both"
    assert len(list((out / "1" / "traces" / "run-1").glob("*.htrace"))) == 1
    again = json.loads(histeg(*args).stdout)
    assert all(step["reused"] for name in ("build", "statics", "traceConfig", "syntax") for step in again["steps"][name])
    # traces of complete runs are reused; the version whose run timed out is traced again, never taken as good
    assert [step["reused"] for step in again["steps"]["traces"]] == [True, True, False, True]


def test_trace_options_change_only_the_traces(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    out = tmp_path / "out"
    base = ("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert histeg(*base).code == 0
    repeated = json.loads(histeg(*base, "--repeat", "2").stdout)
    assert all(repeated["steps"][name][0]["reused"] for name in ("build", "statics", "traceConfig", "syntax"))
    traces = repeated["steps"]["traces"][0]
    assert traces.pop("seconds")["total"] > 0
    assert traces == {"index": 0, "reused": False, "runs": 2, "outcomes": ["passed"]}
    states = validate_output(out / "0" / "steps.json")["steps"]
    assert states["traces"]["inputs"]["settings"]["repeat"] == 2 and states["traces"]["inputs"]["upstream"] == {"build": states["build"]["result"]}
    assert sorted(p.name for p in (out / "0" / "traces").iterdir() if p.is_dir()) == ["run-1", "run-2"]


def test_nothing_to_trace_fails_the_version(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("no tests", {"lib.py": LIB})
    result = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), "--json")
    assert result.code == 1
    assert "pytest collected no tests" in json.loads(result.stdout)["failedVersions"][0]["reason"]
    result = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), "--json", "--no-tests")
    assert "nothing to trace" in json.loads(result.stdout)["failedVersions"][0]["reason"]
    result = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), "--json", "--no-tests",
                    "--run", "python -c 'import lib; lib.double(20)'")
    assert result.code == 0, result.stderr


def test_tracer_choice_reaches_every_trace_file(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    out = tmp_path / "out"
    base = ("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--json", "--repeat", "1")
    for tracer in ("python", "c"):
        result = histeg(*base, "--override", "--tracer", tracer)
        assert result.code == 0, result.stderr
        assert validate_output(out / "0" / "traceConfig.json")["tracer"] == tracer
        (trace_file,) = (out / "0" / "traces" / "run-1").glob("*.htrace")
        trace = read_trace(trace_file)
        assert trace.meta["tracer"] == tracer
        assert [call.function.ident for call in trace.entry_points] == ["tests.test_lib:test_double"]
    (tmp_path / "histeg.toml").write_text('[tool.histeg]\ntracer = "java"\n', encoding="utf-8")
    result = histeg(*base, "--config", str(tmp_path / "histeg.toml"))
    assert result.code == 2
    assert result.stderr.strip().splitlines()[-1].endswith("setting 'tracer' must be one of auto, c, python, not 'java'")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('values = "false"', "setting 'values' must be one of structural, repr, off, not 'false'"),
        ("values = false", "setting 'values' must be one of structural, repr, off, not False"),
        ('values = "strucural"', "setting 'values' must be one of structural, repr, off, not 'strucural'"),
        ('repr-types = ["pkg.A"]', "setting 'repr-types' needs values = \"repr\""),
        ('values = "repr"\nrepr-types = 5', "setting 'repr-types' must be a list of strings, not 5"),
        ("redact = [1]", "setting 'redact' must be a list of strings, not [1]"),
    ],
)
def test_value_settings_are_typed_and_checked_before_any_work(make_repo, histeg, tmp_path: Path, table: str, message: str) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    config = tmp_path / "histeg.toml"
    config.write_text(f"[tool.histeg]\n{table}\n", encoding="utf-8")
    out = tmp_path / "out"
    result = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--config", str(config))
    assert result.code == 2 and result.stderr.strip().splitlines()[-1].endswith(message), result.stderr
    assert not out.exists(), "nothing was done"


def test_values_flag_reaches_the_trace(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    out = tmp_path / "out"
    result = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--values", "off")
    assert result.code == 0, result.stderr
    (trace_file,) = (out / "0" / "traces" / "run-1").glob("*.htrace")
    assert read_trace(trace_file).meta["values"] == "off"
    assert histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--values", "false").code == 2
