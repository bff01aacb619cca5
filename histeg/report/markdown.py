"""The report as Markdown, short enough for a pull-request comment: per compared version the top targets with their
reasons, the changed code no test ran, and how much was set aside as noise. Nothing is cut without saying how much."""

from __future__ import annotations

from pathlib import Path

from histeg.atomic import write_bytes
from histeg.records.targets import UntestedChange
from histeg.report.model import RunReport, TargetReport, VersionReport
from histeg.report.reasons import left_out, plural, target_reason, untested_reason
from histeg.store import REPORT_DIR

TOP = 10
"""Targets and untested changes listed per version."""
MARKDOWN_FILE = "report.md"


def _cell(text: str) -> str:
    """Table-safe: a pipe or a line break would end the cell or the row."""
    return " ".join(text.replace("|", "\\|").split())


def _code(text: str) -> str:
    """Inline code that survives backticks in the text."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _targets(targets: list[TargetReport], top: int) -> list[str]:
    if not targets:
        return ["No testing targets: no change of the sources showed in the traces or the syntax."]
    lines = ["| # | target | value | why |", "|---:|---|---:|---|"]
    for target in targets[:top]:
        lines.append(f"| {target.rank} | {_cell(_code(target.identifier))} | {target.value:.3g} | {_cell(target_reason(target))} |")
    cut = left_out(min(top, len(targets)), len(targets), "targets")
    return [*lines, *([f"\n{cut}"] if cut else [])]


def _untested(untested: list[UntestedChange], top: int) -> list[str]:
    lines = []
    for change in untested[:top]:
        where = f" ({_code(change.file)})" if change.file else ""
        lines.append(f"- {_code(change.identifier)}{where}: {untested_reason(change)}")
    cut = left_out(min(top, len(untested)), len(untested), "untested changes")
    return [*lines, *([cut] if cut else [])]


def _witnesses(targets: list[TargetReport], top: int) -> list[str]:
    """Each witness of the top targets as its test's source: what a reviewer runs to see the change."""
    lines: list[str] = []
    for target in targets[:top]:
        for witness in target.witnesses:
            how = "carved from a recorded call" if witness.carved else "found by Pynguin"
            failure = f" ({_cell(witness.failure)})" if witness.failure else ""
            lines += [f"- {_code(witness.test)} for {_code(target.identifier)}, {how}: old {witness.old}, new {witness.new}{failure}"]
            if witness.source:
                lines += ["", "  ```python", *(f"  {line}" for line in witness.source.splitlines()), "  ```", ""]
    return ["#### Witnesses", "", *lines, ""] if lines else []


def render_version(report: VersionReport, top: int = TOP) -> str:
    summary, counts = report.summary, report.summary.counts
    title = f"### histeg: version {summary.index} `{summary.short_commit}` {_cell(summary.subject)}"
    against = f"compared with version {summary.against_index} `{(summary.against_commit or '')[:12]}`"
    lines = [title, "", against, ""]
    if counts is not None:
        coverage = (
            "no changed executable line"
            if counts.diff_coverage is None
            else (f"{counts.executed_lines} of {counts.changed_lines} changed lines ran ({counts.diff_coverage:.0%})")
        )
        lines += [
            (
                f"**{plural(counts.targets, 'target')}** · **{plural(counts.untested, 'untested change')}** · {coverage} · "
                f"{plural(counts.noise, 'divergence')} set aside as noise"
            ),
            "",
        ]
    lines += ["#### Top targets", "", *_targets(report.targets, top), ""]
    lines += _witnesses(report.targets, top)
    lines += ["#### Changed code no test ran", ""]
    lines += _untested(report.untested, top) or ["None: every changed executable line ran."]
    if report.noise.functions:
        shown = ", ".join(_code(name) for name in report.noise.functions[:top])
        cut = left_out(min(top, len(report.noise.functions)), len(report.noise.functions), "functions")
        lines += ["", f"Noise ({report.noise.divergences} divergences) in {shown}" + (f" {cut}" if cut else "")]
    return "\n".join(lines).rstrip() + "\n"


def render_markdown(run: RunReport, top: int = TOP) -> str:
    """Every compared version of ``run``, newest first: a pull request cares about its last commit most."""
    sections = [render_version(report, top) for report in reversed(list(run.version_reports()))]
    if not sections:
        return "### histeg\n\nNo compared version: a version is compared with its predecessor from the second one on.\n"
    return "\n---\n\n".join(sections)


def write_markdown(run: RunReport, top: int = TOP) -> Path:
    """``OUT/report/report.md``."""
    path = run.out / REPORT_DIR / MARKDOWN_FILE
    write_bytes(path, render_markdown(run, top).encode())
    return path
