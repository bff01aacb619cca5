"""What a finished run means: passed, tests failed, error of the version, or timed out.

pytest's exit codes: 0 all passed, 1 some tests failed (the traces are still
traces; but without any test count, neither the plugin's nor a summary line,
pytest crashed before running its tests: an error), 2 interrupted, 3 internal error, 4 usage error, 5 no tests collected
(those are errors of the version). For other commands any non-zero exit is a
failure, like failing tests.

A pytest run's test counts are pytest's own, left beside the run's trace by
the tracer's plugin (``histeg.tracing.tally``); only without them are they
read from the final summary line of its output, colour codes removed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from histeg.processes.process import ProcessResult
from histeg.records.runs import NOT_COMPLETE, Outcome, TraceCommand

__all__ = ["NOT_COMPLETE", "Outcome", "Verdict", "judge", "pytest_counts"]

PYTEST_ERRORS = {2: "pytest was interrupted", 3: "pytest hit an internal error", 4: "pytest usage error", 5: "pytest collected no tests"}
_SUMMARY = re.compile(r"^=*\s*((?:\d+ [a-z]+(?: [a-z]+)?(?:, )?)+|no tests ran)(?: in [\d.]+s)?(?: \([^)]*\))?\s*=*$")
_COUNT = re.compile(r"(\d+) ([a-z]+(?: [a-z]+)?)")
_KEYS = {"error": "errors", "warning": "warnings", "subtest": "subtests"}
NO_TEST_REPORTED = "pytest exited with 1 before reporting any test"
"""How a version's error begins when its pytest crashed before any test (an old pytest on a new Python)."""
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
"""The terminal's select-graphic-rendition codes, which ``--color=yes`` puts around every part of the summary line."""


@dataclass
class Verdict:
    outcome: Outcome
    message: str | None
    tests: dict[str, int] | None
    """pytest's summary counts (``passed``, ``failed``, ``errors``, ``skipped``, ``subtestsPassed``, ...)."""


def judge(command: TraceCommand, result: ProcessResult, tally: Mapping[str, int] | None = None) -> Verdict:
    """``tally``: pytest's own counts of the run's tests, in its words (``error``, ``subtests passed``), when the plugin left them."""
    tests = None
    if command.kind == "pytest":
        tests = {_key(words): count for words, count in tally.items()} if tally is not None else pytest_counts(result.stdout_tail)
    if result.exit_code is None:
        return Verdict("error", result.start_error, tests)
    if result.timed_out:
        return Verdict("timeout", "timed out: the process group was stopped", tests)
    code = result.exit_code
    if code == 0:
        return Verdict("passed", None, tests)
    if code < 0:
        return Verdict("error", f"killed by signal {-code}", tests)
    if command.kind == "pytest":
        if code == 1 and tests is None:
            return Verdict("error", f"{NO_TEST_REPORTED}: {_last_line(result)}", tests)
        if code == 1:
            return Verdict("failed", "tests failed", tests)
        return Verdict("error", PYTEST_ERRORS.get(code, f"pytest exited with {code}"), tests)
    if code == 127 and command.kind == "shell":
        return Verdict("error", "command not found", tests)
    return Verdict("failed", f"exited with {code}", tests)


def _last_line(result: ProcessResult) -> str:
    """What the process said last (a crash's exception line), for a one-line reason."""
    for output in (result.stderr_tail, result.stdout_tail):
        lines = [line.strip() for line in _COLOUR.sub("", output).splitlines() if line.strip()]
        if lines:
            return lines[-1][:300]
    return "it printed nothing"


def pytest_counts(output: str) -> dict[str, int] | None:
    """The counts of pytest's final summary line (``3 failed, 10 passed in 0.12s``), if printed."""
    for line in reversed(_COLOUR.sub("", output).strip().splitlines()):
        match = _SUMMARY.match(line.strip())
        if match:
            if match.group(1) == "no tests ran":
                return {}
            return {_key(words): int(n) for n, words in _COUNT.findall(match.group(1))}
    return None


def _key(words: str) -> str:
    """``error`` -> ``errors``, ``subtests passed`` -> ``subtestsPassed``."""
    first, *rest = words.split()
    return _KEYS.get(first, first) + "".join(word.capitalize() for word in rest)
