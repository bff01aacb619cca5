"""A target's reasons in one short line, for the text reports (Markdown, terminal) that have no room for the details."""

from __future__ import annotations

from histeg.records.targets import UntestedChange
from histeg.report.model import TargetReport


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def target_reason(target: TargetReport) -> str:
    """What the value is made of: its syntax changes, the divergences charged to it, the entry points that saw them
    and, first, the classes a reviewer acts on (a call that raises only in the new version, a changed test outcome)."""
    parts = []
    classes = target.classes
    if classes.exception_only_in_new:
        parts.append(f"{plural(classes.exception_only_in_new, 'call')} raising only in the new version")
    if classes.exception_only_in_old:
        parts.append(f"{plural(classes.exception_only_in_old, 'call')} raising only in the old version")
    if classes.outcome_changed:
        parts.append(f"{plural(classes.outcome_changed, 'divergence')} changing a test's outcome")
    if target.syntax_change_count:
        parts.append(plural(target.syntax_change_count, "syntax change"))
    divergences = target.local_divergence_count + target.non_local_divergence_count
    if divergences:
        where = []
        if target.local_divergence_count:
            where.append(f"{target.local_divergence_count} local")
        if target.non_local_divergence_count:
            where.append(f"{target.non_local_divergence_count} in callees")
        parts.append(f"{plural(divergences, 'divergence')} ({', '.join(where)}) in {plural(target.entry_point_count, 'entry point')}")
    elif target.origin == "syntax change":
        parts.append("no trace diverged")
    if target.new:
        parts.append("new")
    return "; ".join(parts) or target.origin


def untested_reason(change: UntestedChange) -> str:
    """Which changed lines no entry point ran."""
    lines = change.unexecuted_lines
    shown = ", ".join(map(str, lines[:8])) + (f" and {len(lines) - 8} more" if len(lines) > 8 else "")
    return f"{plural(len(lines), 'changed line')} of {change.changed_line_count} never ran: {shown}"


def left_out(shown: int, total: int, what: str) -> str | None:
    """The line that says a list was cut, or None when nothing was left out."""
    return f"… and {total - shown} more {what}" if total > shown else None
