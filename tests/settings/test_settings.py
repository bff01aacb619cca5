"""Settings through the real command line: every type from a flag and from a file, precedence,
origins, and every mistake a one-line error with exit code 2 before anything is written."""

from __future__ import annotations

import json
import re
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import fields
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from histeg.cli import main
from histeg.settings.model import Settings
from histeg.settings.table import OPTIONS
from tests.conftest import CliResult, GitRepo, run_histeg, validate_output

LIB = "def double(x):\n    return x + x\n"
TEST = "from lib import double\n\ndef test_double():\n    assert double(3) == 6\n"


def cli(*args: str) -> CliResult:
    """``histeg.cli.main`` in this process: what a user's shell sees, without a process per case."""
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err), pytest.raises(SystemExit) as exited:
        main(list(args))
    return CliResult(int(exited.value.code or 0), out.getvalue(), err.getvalue())


def effective(*args: str) -> dict[str, dict[str, Any]]:
    result = cli("config", "--json", *args)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def write_config(directory: Path, body: str, name: str = "histeg.toml") -> Path:
    path = directory / name
    path.write_text(body if name == "pyproject.toml" else f"[tool.histeg]\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _own_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ./histeg.toml of whoever runs the tests is read."""
    monkeypatch.chdir(tmp_path)


# key, flags, file line, value expected from both
GOOD = [
    pytest.param("repo", ["--repo", "there"], 'repo = "there"', "there", id="text"),
    pytest.param("branch", ["--branch", "dev"], 'branch = "dev"', "dev", id="text-branch"),
    pytest.param("out", ["--out", "results"], 'out = "results"', "results", id="path"),
    pytest.param("environments", ["--environments", "envs"], 'environments = "envs"', "envs", id="path-environments"),
    pytest.param("repeat", ["--repeat", "3"], "repeat = 3", 3, id="int-min-1"),
    pytest.param("confirm", ["--confirm", "0"], "confirm = 0", 0, id="int-zero-is-a-value"),
    pytest.param("compare-jobs", ["--compare-jobs", "2"], "compare-jobs = 2", 2, id="int-jobs"),
    pytest.param("timeout", ["--timeout", "2.5"], "timeout = 2.5", 2.5, id="float"),
    pytest.param("timeout", ["--timeout", "7"], "timeout = 7", 7.0, id="float-from-int"),
    pytest.param("export-flat", ["--export-flat"], "export-flat = true", True, id="switch"),
    pytest.param("restrict-syntax-mapping", ["--restrict-syntax-mapping"], "restrict-syntax-mapping = true", True, id="switch-2"),
    pytest.param("generate-for-syntax", ["--generate-for-syntax"], "generate-for-syntax = true", True, id="switch-3"),
    pytest.param("generate-for-divergence", ["--generate-for-divergence"], "generate-for-divergence = true", True, id="switch-4"),
    pytest.param("run", ["--run", "echo hi"], 'run = "echo hi"', ["echo hi"], id="string-is-a-list-of-one"),
    pytest.param("run", ["--run", "a", "--run", "b c"], 'run = ["a", "b c"]', ["a", "b c"], id="list"),
    pytest.param("run-main", ["--run-main", "pkg"], 'run-main = ["pkg"]', ["pkg"], id="list-run-main"),
    pytest.param("pytest-args", ["--pytest-arg=--ignore=tests/slow"], 'pytest-args = "--ignore=tests/slow"', ["--ignore=tests/slow"],
                 id="list-pytest-args"),
    pytest.param("sources", ["--sources", "lib"], 'sources = "lib"', ["lib"], id="directories"),
    pytest.param("tests", ["--tests", "t1", "--tests", "t2"], 'tests = ["t1", "t2"]', ["t1", "t2"], id="directories-2"),
    pytest.param("build", ["--build", "make"], 'build = "make"', "make", id="text-build"),
    pytest.param("ignore-prefixes", ["--ignore-prefixes", "pkg.vendor"], 'ignore-prefixes = "pkg.vendor"', ["pkg.vendor"], id="ignore-p"),
    pytest.param("ignore-suffixes", ["--ignore-suffixes", "_pb2"], 'ignore-suffixes = ["_pb2"]', ["_pb2"], id="ignore-s"),
    pytest.param("ignore-directories", ["--ignore-directories", "docs"], 'ignore-directories = ["docs"]', ["docs"], id="ignore-d"),
    pytest.param("ignore-functions", ["--ignore-functions", "C.close"], 'ignore-functions = ["C.close"]', ["C.close"], id="ignore-f"),
    pytest.param("values", ["--values", "off"], 'values = "off"', "off", id="choice"),
    pytest.param("tracer", ["--tracer", "python"], 'tracer = "python"', "python", id="choice-tracer"),
    pytest.param("metric", ["--metric", "distance", "--metric", "sections"], 'metric = ["distance", "sections"]', ["sections", "distance"],
                 id="choices-in-table-order"),
    pytest.param("metric", ["--metric", "coverage"], 'metric = "coverage"', ["coverage"], id="choices-one"),
    pytest.param("versions", ["--versions", "v1", "--versions", "v2"], 'versions = ["v1", "v2"]', ["v1", "v2"], id="versions"),
]


@pytest.mark.parametrize(("key", "flags", "line", "expected"), GOOD)
def test_a_value_from_a_flag_and_from_a_file(tmp_path: Path, key: str, flags: list[str], line: str, expected: Any) -> None:
    from_flag = effective(*flags)[key]
    assert from_flag == {"value": expected, "origin": flags[0].partition("=")[0]}
    config = write_config(tmp_path, line)
    assert effective("--config", str(config))[key] == {"value": expected, "origin": str(config)}


@pytest.mark.parametrize(("key", "body", "expected"), [
    pytest.param("build-timeout", "build-timeout = 60", 60.0, id="float-without-flag"),
    pytest.param("line-budget", "line-budget = 0", 0, id="int-without-flag"),
    pytest.param("repr-types", 'values = "repr"\nrepr-types = "pkg.A"', ["pkg.A"], id="list-without-flag"),
    pytest.param("redact", 'redact = ["pin"]', ["pin"], id="list-replaces-default"),
    pytest.param("run-tests", "run-tests = false", False, id="switch-without-flag"),
    pytest.param("scaling", "[tool.histeg.scaling]\ncall-distance = 2", None, id="table"),
])
def test_keys_without_a_flag_are_read_from_the_file(tmp_path: Path, key: str, body: str, expected: Any) -> None:
    config = tmp_path / "histeg.toml"
    config.write_text(body if body.startswith("[") else f"[tool.histeg]\n{body}\n", encoding="utf-8")
    entry = effective("--config", str(config))[key]
    assert entry["origin"] == str(config)
    if key == "scaling":
        assert entry["value"]["call-distance"] == 2.0 and entry["value"]["new-class"] == 12.0
    else:
        assert entry["value"] == expected


@pytest.mark.parametrize(("flags", "key", "value"), [
    pytest.param(["--no-tests"], "run-tests", False, id="no-tests"),
    pytest.param(["--no-values"], "values", "off", id="no-values"),
    pytest.param(["--values", "repr", "--no-values"], "values", "off", id="no-values-wins"),
])
def test_preset_flags(flags: list[str], key: str, value: Any) -> None:
    assert effective(*flags)[key] == {"value": value, "origin": flags[-1]}


def test_defaults_then_file_then_flags(tmp_path: Path) -> None:
    config = write_config(tmp_path, 'timeout = 5\nrepeat = 2\nrun = "echo hi"')
    settings = effective("--config", str(config), "--timeout", "7")
    assert settings["timeout"] == {"value": 7.0, "origin": "--timeout"}
    assert settings["repeat"] == {"value": 2, "origin": str(config)}
    assert settings["run"] == {"value": ["echo hi"], "origin": str(config)}
    assert settings["confirm"] == {"value": 2, "origin": "default"}
    assert settings["config"] == {"value": str(config), "origin": "--config"}


def test_histeg_toml_in_the_working_directory_unless_another_is_named(tmp_path: Path) -> None:
    local = write_config(tmp_path, "repeat = 4")
    assert effective()["repeat"] == {"value": 4, "origin": str(local)}
    other = tmp_path / "elsewhere"
    other.mkdir()
    named = write_config(other, "confirm = 1")
    settings = effective("--config", str(named))
    assert settings["repeat"]["origin"] == "default" and settings["confirm"] == {"value": 1, "origin": str(named)}


def test_a_pyproject_given_with_config(tmp_path: Path) -> None:
    pyproject = write_config(tmp_path, '[project]\nname = "x"\n\n[tool.histeg]\ntimeout = 9\n\n[tool.other]\nkey = 1\n', "pyproject.toml")
    assert effective("--config", str(pyproject))["timeout"] == {"value": 9.0, "origin": str(pyproject)}


def _repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    return repo


def _assert_one_line(result: CliResult, *fragments: str) -> None:
    assert result.code == 2, (result.code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("histeg: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


FILE_ERRORS = [
    pytest.param("timeout = true", "setting 'timeout' must be a number > 0, not True", id="bool-is-no-number"),
    pytest.param("timeout = -5", "setting 'timeout' must be a number > 0, not -5", id="negative-float"),
    pytest.param("timeout = 0", "setting 'timeout' must be a number > 0, not 0", id="zero-seconds"),
    pytest.param("run = 5", "setting 'run' must be a list of strings, not 5", id="number-is-no-command"),
    pytest.param("run = [1]", "setting 'run' must be a list of strings, not [1]", id="list-of-numbers"),
    pytest.param("repeat = 0", "setting 'repeat' must be a whole number >= 1, not 0", id="int-below-minimum"),
    pytest.param("confirm = -1", "setting 'confirm' must be a whole number >= 0, not -1", id="negative-int"),
    pytest.param("confirm = 2.0", "setting 'confirm' must be a whole number >= 0, not 2.0", id="float-is-no-int"),
    pytest.param("line-budget = -1", "setting 'line-budget' must be a whole number >= 0, not -1", id="negative-budget"),
    pytest.param("export-flat = 1", "setting 'export-flat' must be true or false, not 1", id="int-is-no-switch"),
    pytest.param('tracer = "java"', "setting 'tracer' must be one of auto, c, python, not 'java'", id="bad-choice"),
    pytest.param('metric = ["speed"]', "setting 'metric' must be one or more of sections, coverage, distance, not ['speed']", id="bad-choices"),
    pytest.param('sources = ["/abs"]', "setting 'sources' must be a list of directories relative to the repository root", id="absolute-dir"),
    pytest.param('tests = ["../up"]', "setting 'tests' must be a list of directories relative to the repository root", id="outside-dir"),
    pytest.param('python = ""', "setting 'python' must be a path, not ''", id="empty-path"),
    pytest.param("timout = 5", "unknown setting 'timout'; did you mean 'timeout'?", id="unknown-key-with-suggestion"),
    pytest.param("ignore_prefixes = ['x']", "unknown setting 'ignore_prefixes'; did you mean 'ignore-prefixes'?", id="one-spelling"),
    pytest.param("override = true", "'override' cannot be set in a file, only with --override", id="flag-only"),
    pytest.param('repr-types = ["pkg.A"]', "setting 'repr-types' needs values = \"repr\"", id="contradiction"),
    pytest.param("[tool.histeg.scaling]\nno-such-weight = 1", "unknown scaling 'no-such-weight'", id="unknown-weight"),
]


@pytest.mark.parametrize(("body", "message"), FILE_ERRORS)
def test_file_errors_name_key_and_file_before_any_work(tmp_path: Path, body: str, message: str) -> None:
    repo = _repo(tmp_path)
    config = tmp_path / "histeg.toml"
    config.write_text(body if body.startswith("[") else f"[tool.histeg]\n{body}\n", encoding="utf-8")
    out = tmp_path / "out"
    _assert_one_line(cli("compute", "--repo", str(repo.path), "--out", str(out), "--config", str(config)), f"{config}: ", message)
    assert not out.exists()


FLAG_ERRORS = [
    pytest.param(["--timeout", "-1"], "--timeout: setting 'timeout' must be a number > 0, not '-1'", id="negative-float"),
    pytest.param(["--timeout", "nan"], "--timeout: setting 'timeout' must be a number > 0, not 'nan'", id="nan"),
    pytest.param(["--repeat", "x"], "--repeat: setting 'repeat' must be a whole number >= 1, not 'x'", id="not-a-number"),
    pytest.param(["--confirm", "-1"], "--confirm: setting 'confirm' must be a whole number >= 0, not '-1'", id="negative-int"),
    pytest.param(["--values", "loud"], "--values: setting 'values' must be one of structural, repr, off, not 'loud'", id="bad-choice"),
    pytest.param(["--metric", "speed"], "--metric: setting 'metric' must be one or more of sections, coverage, distance", id="bad-choices"),
    pytest.param(["--sources", "/abs"], "--sources: setting 'sources' must be a list of directories", id="absolute-dir"),
    pytest.param(["--config", "missing.toml"], "configuration file missing.toml does not exist", id="missing-file"),
]


@pytest.mark.parametrize(("flags", "message"), FLAG_ERRORS)
def test_flag_errors_name_the_flag_before_any_work(tmp_path: Path, flags: list[str], message: str) -> None:
    repo = _repo(tmp_path)
    out = tmp_path / "out"
    _assert_one_line(cli("compute", "--repo", str(repo.path), "--out", str(out), *flags), message)
    assert not out.exists()


def test_a_file_holds_only_the_histeg_table(tmp_path: Path) -> None:
    config = tmp_path / "histeg.toml"
    config.write_text("timeout = 5\n", encoding="utf-8")
    _assert_one_line(cli("config", "--config", str(config)), f"{config}: 'timeout' is outside [tool.histeg]")


def test_the_real_process_exits_2_with_one_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = write_config(tmp_path, "timeout = true")
    out = tmp_path / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--out", str(out), "--config", str(config))
    _assert_one_line(result, f"{config}: setting 'timeout' must be a number > 0, not True")
    assert not out.exists()


def test_flags_belong_to_their_commands() -> None:
    assert cli("extract", "--timeout", "5").code == 2  # tracing flags are not the extract step's
    for step, flags in (("extract", ("--repo", "--ignore-functions", "-q")), ("analyze", ("--no-tests", "--pytest-arg")),
                        ("compute", ("--metric", "--confirm", "--compare-jobs")), ("config", ("--metric", "--no-values", "--json"))):
        help_text = cli(step, "--help").stdout
        assert all(flag in help_text for flag in flags), (step, help_text)


def test_the_typed_settings_have_one_field_per_option() -> None:
    assert [f.name for f in fields(Settings) if f.name != "origins"] == [option.name for option in OPTIONS]


def test_config_text_lists_value_and_origin(tmp_path: Path) -> None:
    config = write_config(tmp_path, 'run = "echo hi"')
    result = cli("config", "--config", str(config), "--timeout", "7", "--no-tests")
    assert result.code == 0, result.stderr
    rows = {line.split()[0]: re.split(r"\s{2,}", line.strip())[1:] for line in result.stdout.splitlines()[1:]}
    assert rows["timeout"] == ["7.0", "--timeout"]
    assert rows["run"] == ['["echo hi"]', str(config)]
    assert rows["run-tests"] == ["false", "--no-tests"]
    assert rows["sources"] == ["(src/ if present, else the root)", "default (or the version's pyproject.toml)"]
    assert rows["scaling.call-distance"] == ["3.5", "default"]
    assert "verbosity" not in rows and "json" not in rows


def test_config_checks_the_interpreter_it_is_given(tmp_path: Path) -> None:
    assert effective("--python", sys.executable)["python"] == {"value": sys.executable, "origin": "--python"}
    _assert_one_line(cli("config", "--python", str(tmp_path / "nothing")), "not a Python interpreter or virtual environment")


def _version_json(out: Path, index: int) -> dict[str, Any]:
    return json.loads((out / str(index) / "version.json").read_text(encoding="utf-8"))


def test_a_versions_pyproject_is_read_through_the_same_table(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("project", {
        "lib/mod.py": "X = 1\n", "tests/test_mod.py": "def test():\n    pass\n",
        "pyproject.toml": '[tool.histeg]\nsources = "lib"\nignore-functions = "close"\ntimeout = 5\n',
    })
    out = tmp_path / "out"
    result = cli("extract", "--repo", str(repo.path), "--all", "--out", str(out), "--ignore-suffixes", "_pb2")
    assert result.code == 0, result.stderr
    version = _version_json(out, 0)
    assert (version["sourcesIn"], version["ignoredFunctionsByName"], version["ignoredModulesBySuffix"]) == (["lib"], ["close"], ["_pb2"])
    flagged = cli("extract", "--repo", str(repo.path), "--all", "--out", str(out), "--ignore-functions", "open")
    assert flagged.code == 0 and _version_json(out, 0)["ignoredFunctionsByName"] == ["open"]  # the user's flag wins over the version
    sha = repo.commit("misspelt", {"pyproject.toml": "[tool.histeg]\nsoruces = ['lib']\n"})
    out2 = tmp_path / "out2"
    _assert_one_line(cli("extract", "--repo", str(repo.path), "--all", "--out", str(out2)),
                     f"pyproject.toml of {sha[:12]}: unknown setting 'soruces'; did you mean 'sources'?")


@pytest.mark.slow  # computes a history twice (7 s)
def test_a_ranking_setting_changed_recomputes_the_targets_alone(tmp_path: Path) -> None:
    """Nothing is traced, re-run or compared again for a new weight: the targets step reads the kept comparison."""
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    repo.commit("faster", {"lib.py": LIB.replace("x + x", "2 * x")})
    out = tmp_path / "out"
    common = ("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    first = run_histeg(*common)
    assert first.code == 0, first.stderr
    divergences = (out / "1" / "traceDivergences.json").stat().st_mtime_ns
    again = run_histeg(*common, "--no-evidence-first", "--restrict-syntax-mapping")
    assert again.code == 0, again.stderr
    [_, version] = json.loads(again.stdout)["versions"]
    states = {name: state["status"] for name, state in version["steps"].items()}
    assert states == {"build": "reused", "statics": "reused", "traceConfig": "reused", "syntax": "reused", "traces": "reused",
                      "compare": "reused", "targets": "ran", "merges": "skipped"}, states
    assert (out / "1" / "traceDivergences.json").stat().st_mtime_ns == divergences
    ranked = validate_output(out / "1" / "testingTargets.json")
    assert ranked["options"]["evidenceFirst"] == [] and ranked["options"]["restrictSyntaxMapping"] is True
    assert validate_output(out / "1" / "settings.json")["targets"]["evidence-first"]["origin"] == "--no-evidence-first"


@pytest.mark.slow  # computes a history twice (5 s)
def test_a_damaged_kept_comparison_is_one_line_and_removing_it_makes_the_comparison_anew(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    repo.commit("faster", {"lib.py": LIB.replace("x + x", "2 * x")})
    out = tmp_path / "out"
    common = ("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--confirm", "0")
    assert run_histeg(*common).code == 0
    kept = out / "1" / "comparison.msgpack"
    targets = (out / "1" / "testingTargets.json").read_bytes()
    kept.write_bytes(b"\x93not a comparison")
    damaged = run_histeg(*common, "--no-evidence-first")  # a ranking setting: the targets step reads the kept comparison
    assert damaged.code != 0
    assert f"{kept} is damaged" in damaged.stderr and "remove it and run again" in damaged.stderr
    assert (out / "1" / "testingTargets.json").read_bytes() == targets, "the earlier targets are left as they were"
    kept.unlink()
    again = run_histeg(*common, "--no-evidence-first")
    assert again.code == 0, again.stderr
    assert validate_output(out / "1" / "testingTargets.json")["options"]["evidenceFirst"] == []


def test_settings_json_records_what_traces_and_targets_were_made_with(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    repo.commit("faster", {"lib.py": LIB.replace("x + x", "2 * x")})
    config = write_config(tmp_path, 'timeout = 120\nredact = "pin"')
    out = tmp_path / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--config", str(config), "--confirm", "0")
    assert result.code == 0, result.stderr
    first, second = validate_output(out / "0" / "settings.json"), validate_output(out / "1" / "settings.json")
    assert first["compare"] is None and first["targets"] is None  # the first version is compared with nothing
    assert second["traces"]["timeout"] == {"value": 120.0, "origin": str(config)}
    assert second["traces"]["redact"] == {"value": ["pin"], "origin": str(config)}
    assert second["traces"]["repeat"] == {"value": 1, "origin": "default"}
    assert second["compare"]["confirm"] == {"value": 0, "origin": "--confirm"}
    assert second["targets"]["evidence-first"]["origin"] == "default" and "confirm" not in second["targets"]
    assert "compare-jobs" not in second["compare"]  # results do not depend on it
    before = (out / "1" / "settings.json").stat().st_mtime_ns
    again = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--config", str(config), "--confirm", "0")
    assert again.code == 0 and (out / "1" / "settings.json").stat().st_mtime_ns == before  # a rerun rewrites nothing
