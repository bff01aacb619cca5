"""The generated tests run on one version, and the outcomes of several runs made into one verdict per test.

Each run works in a fresh copy of the version's snapshot (its sources first on
``PYTHONPATH``, its environment activated) with the tests in a folder of their
own, so neither the snapshot nor ``generated/`` is written to and the
project's own pytest configuration and conftest files play no part. pytest
reports through JUnit XML; a file that cannot be collected on a version (the
module it tests does not exist there) gives each of its tests an error.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from xml.etree import ElementTree

from histeg.atomic import write_bytes
from histeg.generate.sides import VersionSide
from histeg.processes.groups import records_folder
from histeg.processes.process import output_text, pinned_environment, run_process
from histeg.processes.workdir import fresh_copy
from histeg.records.generation import Outcome, Witness
from histeg.runs.runner import base_environment

Role = Literal["old", "new"]
"""Which version of the pair a run is on."""

PASSING = frozenset({"passed", "xfailed"})
FAILING = frozenset({"failed", "error"})
PYTEST_SECONDS = 300.0
"""Time allowed for one pytest run of the generated tests."""
INI = "[pytest]\n"
"""An empty configuration: the tests folder is the root, nothing of the project's configuration applies."""


@dataclass(frozen=True)
class Result:
    """One test's outcome in one run, with the first line of its failure."""

    outcome: Outcome
    failure: str | None = None


@dataclass(frozen=True)
class SideRunResult:
    """One pytest run of the generated tests on one version."""

    side: Role
    index: int
    run: int
    exit_code: int | None
    timed_out: bool
    seconds: float
    log: Path
    results: dict[str, Result]
    """By ``<module folder>/<file>::<test>``; a collection error of a file is under ``<module folder>/<file>``."""


def run_tests(
    side: VersionSide, role: Role, run: int, tests: Path, scratch: Path, log: Path, timeout: float = PYTEST_SECONDS
) -> SideRunResult:
    """Run the tests under ``tests`` (one folder per module) on ``side``; results are keyed by those folders' names."""
    folder = scratch / "tests"
    folder.mkdir(parents=True)
    aliases = {}
    for number, module_dir in enumerate(sorted(path for path in tests.iterdir() if path.is_dir()), 1):
        alias = f"generated_{number}"  # a module's dotted name as a folder would make pytest import a package of that name
        aliases[alias] = module_dir.name
        shutil.copytree(module_dir, folder / alias, ignore=shutil.ignore_patterns("*.log", "__pycache__"))
    ini = folder / "pytest.ini"
    ini.write_text(INI, encoding="utf-8")
    report = scratch / "junit.xml"
    with fresh_copy(side.snapshot, scratch / "project") as work:
        side.runtime.prepare(work)
        env = pinned_environment(base_environment(work, side.settings, side.runtime))
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the version's pytest plugins (random order, reruns) are not the tests' business
        argv = [
            side.runtime.python,
            "-m",
            "pytest",
            "-c",
            str(ini),
            "--rootdir",
            str(folder),
            "-p",
            "no:cacheprovider",
            "--import-mode=importlib",
            "-o",
            "junit_family=xunit1",
            "--junitxml",
            str(report),
            "-q",
            str(folder),
        ]
        result = run_process(argv, work, env, timeout, groups=records_folder(side.store.root))
    results = {_unaliased(test, aliases): found for test, found in (read_junit(report.read_bytes()) if report.is_file() else {}).items()}
    write_bytes(
        log, f"$ {' '.join(argv)}\nexit code: {result.exit_code}{', timed out' if result.timed_out else ''}\n{output_text(result)}".encode()
    )
    code = None if result.timed_out else result.exit_code
    return SideRunResult(role, side.index, run, code, result.timed_out, result.duration, log, results)


def _unaliased(test: str, aliases: Mapping[str, str]) -> str:
    head, slash, rest = test.partition("/")
    return f"{aliases[head]}{slash}{rest}" if slash and head in aliases else test


def read_junit(payload: bytes) -> dict[str, Result]:
    """Outcomes by test id from pytest's JUnit XML (``junit_family=xunit1``, which names each test's file)."""
    try:
        root = ElementTree.fromstring(payload)
    except ElementTree.ParseError:
        return {}
    found: dict[str, Result] = {}
    for case in root.iter("testcase"):
        file = case.get("file") or ""
        name = case.get("name") or ""
        key = f"{file}::{name}" if file and name.startswith("test") else file or (case.get("classname") or "").replace(".", "/") + ".py"
        found[key] = _result(case)
    return found


def _result(case: ElementTree.Element) -> Result:
    failing: tuple[tuple[str, Outcome], ...] = (("failure", "failed"), ("error", "error"))
    for tag, outcome in failing:
        element = case.find(tag)
        if element is not None:
            return Result(outcome, first_line(element.get("message"), element.text))
    skipped = case.find("skipped")
    if skipped is not None:
        return Result("xfailed" if skipped.get("type") == "pytest.xfail" else "skipped")
    return Result("passed")


def first_line(message: str | None, text: str | None) -> str | None:
    """The line that says what went wrong: pytest's first ``E`` line, else the message's first line."""
    for line in (text or "").splitlines():
        if line.startswith("E ") and line[1:].strip():
            return line[1:].strip()[:300]
    for line in (message or "").splitlines():
        if line.strip():
            return line.strip()[:300]
    return None


def outcome_of(test: str, results: Mapping[str, Result]) -> Result:
    """The test's result in one run: its own, its file's collection error, or missing."""
    if test in results:
        return results[test]
    file = test.partition("::")[0]
    if file in results and results[file].outcome in FAILING:
        return Result("error", results[file].failure)
    return Result("missing")


@dataclass(frozen=True)
class Verdict:
    """A test on one version over its runs."""

    outcome: Outcome
    runs: list[Outcome]
    failure: str | None


def verdict(results: Iterable[Result]) -> Verdict:
    """The common outcome of the runs, or flaky when they disagree; the first failure line seen."""
    runs = list(results)
    outcomes = [result.outcome for result in runs]
    agreed: Outcome = outcomes[0] if outcomes and all(outcome == outcomes[0] for outcome in outcomes) else "flaky"
    failure = next((result.failure for result in runs if result.failure is not None), None)
    return Verdict(agreed, outcomes, failure)


def is_witness(old: Verdict, new: Verdict) -> bool:
    """Passes on one version and fails on the other, every run of each agreeing."""
    return (old.outcome in PASSING and new.outcome in FAILING) or (old.outcome in FAILING and new.outcome in PASSING)


def witness_record(test: str, old: Verdict, new: Verdict, source: str | None, carved: bool = False) -> Witness:
    """A witness as ``generation.json`` lists it under its targets."""
    return Witness(
        test=test, old=old.outcome, new=new.outcome, old_failure=old.failure, new_failure=new.failure, carved=carved, source=source
    )


def side_verdicts(tests: Sequence[str], runs: Sequence[SideRunResult]) -> dict[str, Verdict]:
    return {test: verdict(outcome_of(test, run.results) for run in runs) for test in tests}


__all__ = [
    "FAILING",
    "PASSING",
    "Result",
    "SideRunResult",
    "Verdict",
    "first_line",
    "is_witness",
    "outcome_of",
    "read_junit",
    "run_tests",
    "side_verdicts",
    "verdict",
    "witness_record",
]
