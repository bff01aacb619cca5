"""One Pynguin run: a module, the targets in it to cover, a search time, a seed; its outcome in one line.

Pynguin runs in its own environment on the version's interpreter
(``histeg.generate.tool``), through ``histeg.generate.launcher``, with the
version's copy of the snapshot as its project path and the version's
packages after its own; the version's environment is only read. Each run is
a process group of its own with a time limit, recorded like every run
(``histeg.processes.process``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from histeg.atomic import write_bytes
from histeg.generate import launcher
from histeg.generate.launcher import PATH_VARIABLE
from histeg.processes.process import (
    ProcessResult,
    output_text,
    pinned_environment,
    run_process,
)
from histeg.records.generation import PynguinStatus

ASSERTION_GENERATION = "MUTATION_ANALYSIS"
"""Pynguin's default: the assertions kept are those that kill a mutant of the code under test."""
OVERHEAD_SECONDS = 120.0
"""Time allowed beyond the search: start-up, assertion generation, writing the tests."""
_LOG_LINE = re.compile(r"\[(?:ERROR|CRITICAL)\].*?:\d+\):\s*(?P<message>.+)")
_EXIT_REASONS = {2: "Pynguin generated no test", 3: "Pynguin could not track its final metrics"}


@dataclass(frozen=True)
class PynguinRun:
    module: str
    status: PynguinStatus
    reason: str | None
    elapsed: float
    test_files: list[Path] = field(default_factory=list)


def pynguin_argv(
    python: str,
    project: Path,
    module: str,
    output: Path,
    report: Path,
    seconds: int,
    cover: Sequence[str],
    seed: int,
    seeds: Path | None = None,
) -> list[str]:
    """The command line in Pynguin's environment ``python``; ``--only_cover`` takes the module-relative qualified names
    as separate words. The launcher runs as a file (``-P``: its folder is not put on the import path). ``seeds``: a folder
    with a ``test_<module>.py`` Pynguin starts its population from (carved tests)."""
    seeding = ["--initial_population_seeding", "True", "--initial_population_data", str(seeds)] if seeds is not None else []
    return [
        python,
        "-P",
        launcher.__file__,
        "--project-path",
        str(project),
        "--module-name",
        module,
        "--output-path",
        str(output),
        "--report-dir",
        str(report),
        "--maximum-search-time",
        str(seconds),
        "--seed",
        str(seed),
        "--assertion-generation",
        ASSERTION_GENERATION,
        "--create-coverage-report",
        "False",
        "--no-rich",
        *seeding,
        "--only_cover",
        *cover,
    ]


def run_pynguin(
    python: str,
    project: Path,
    import_path: Sequence[str],
    module: str,
    cover: Sequence[str],
    seconds: int,
    seed: int,
    *,
    output: Path,
    work: Path,
    log: Path,
    groups: Path,
    seeds: Path | None = None,
) -> PynguinRun:
    """Run Pynguin on ``module`` in ``project`` (also importable: ``import_path``); its tests go to ``output``
    and what it said to ``log``. A failure is a result with a reason, never an exception."""
    work, output = work.resolve(), output.resolve()
    work.mkdir(parents=True, exist_ok=True)
    output.mkdir(parents=True, exist_ok=True)
    argv = pynguin_argv(python, project, module, output, work / "pynguin-report", seconds, cover, seed, seeds)
    env = pinned_environment()
    env.update({"PYNGUIN_DANGER_AWARE": "1", "PYTHONDONTWRITEBYTECODE": "1", PATH_VARIABLE: os.pathsep.join(import_path)})
    result = run_process(argv, work, env, seconds + OVERHEAD_SECONDS, groups=groups)
    files = sorted(output.glob("test_*.py"))
    status, reason = judge(result, files)
    write_bytes(log, f"$ {' '.join(argv[1:])}\nstatus: {status}{f' ({reason})' if reason else ''}\n{output_text(result)}".encode())
    return PynguinRun(module, status, reason, result.duration, files if status == "ok" else [])


def judge(result: ProcessResult, files: Sequence[Path]) -> tuple[PynguinStatus, str | None]:
    """ok with test files, timeout, or failed with the first error Pynguin logged (else what its exit code means)."""
    if result.timed_out:
        return "timeout", f"stopped after {result.duration:.0f} s"
    if result.exit_code == 0 and files:
        return "ok", None
    if result.start_error:
        return "failed", result.start_error
    return "failed", failure_reason(result.stderr_tail + "\n" + result.stdout_tail, result.exit_code)


def failure_reason(output: str, exit_code: int | None) -> str:
    """One line: the first ERROR Pynguin logged, else the last line of a traceback, else the exit code's meaning."""
    for line in output.splitlines():
        found = _LOG_LINE.search(line)
        if found:
            return found["message"].strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception)\b", line):
            return line
    if exit_code == 0:
        return "Pynguin wrote no test file"
    return _EXIT_REASONS.get(exit_code or 0, f"Pynguin exited with code {exit_code}")


__all__ = ["ASSERTION_GENERATION", "PynguinRun", "failure_reason", "pynguin_argv", "run_pynguin"]
