"""``--fail-on``: a report as a CI gate. A condition that holds for a reported version ends the command with
``EXIT_GATE``, its own code, so a pipeline can tell "the change needs tests" from "histeg could not run"."""

from __future__ import annotations

import re
from dataclasses import dataclass

from histeg.errors import HistegError
from histeg.report.model import Counts, RunReport

EXIT_GATE = 4
"""A ``--fail-on`` condition held."""

_TARGETS = re.compile(r"targets\s*>\s*(\d+)")


@dataclass(frozen=True)
class Condition:
    """``untested``: some changed executable line ran in no entry point; ``targets>N``: more than N ranked targets."""

    text: str
    untested: bool = False
    most_targets: int | None = None

    def fails(self, counts: Counts) -> str | None:
        """Why the version fails the condition, or None."""
        if self.untested and counts.untested:
            return f"{counts.untested} untested change(s)"
        if self.most_targets is not None and counts.targets > self.most_targets:
            return f"{counts.targets} testing targets (more than {self.most_targets})"
        return None


def parse_condition(text: str) -> Condition:
    """A ``--fail-on`` value; anything else is a one-line error naming the forms it can take."""
    cleaned = text.strip().lower()
    if cleaned == "untested":
        return Condition(text, untested=True)
    match = _TARGETS.fullmatch(cleaned)
    if match:
        return Condition(text, most_targets=int(match.group(1)))
    raise HistegError(f"--fail-on {text!r}: expected 'untested' or 'targets>N' (N a whole number)")


def gate_failures(run: RunReport, conditions: list[Condition]) -> list[str]:
    """One line per reported version and condition that held."""
    failures = []
    for summary in run.compared:
        if summary.counts is None:
            continue
        for condition in conditions:
            reason = condition.fails(summary.counts)
            if reason is not None:
                failures.append(f"version {summary.index} ({summary.short_commit}): {reason} [--fail-on {condition.text}]")
    return failures
