"""Changed code no entry point executed: the changed executable lines of each changed entity in the sources, which of
them ran, and the ranked list of what did not (``changedCode``, ``untestedChanges`` and the diff coverage).

A syntax change spans the whole statement it touched: one entry removed from a keyword table of 540 lines is a change
of the one assignment that holds the table. Its changed lines are those a line diff of the file's two versions added
or changed within that span, and where lines were only removed, the lines either side of the gap: what a test has to
run to see the change, and what diff coverage counts.

A divergence needs a changed line to run; a change the suite never executes cannot diverge and so never shows in the
ranking's values. Executed lines come from the traces' line coverage sidecars (``histeg.tracing.coverage``), which
unlike the traces' own line events are not cut by the line budget and include module and class bodies.

Untested changes are ranked by a fixed rule: entities none of whose changed lines ran come before partly executed
ones; then by value, the unexecuted changed lines each weighted by the most significant syntax change covering it
(low 1, medium 2, high 3, crucial 4); then by identifier.
"""

from __future__ import annotations

import ast
import difflib
import types
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from histeg.impact.targets import MAX_LISTED, Target, change_summary
from histeg.naming import split_identifier
from histeg.records.targets import ChangedCode, CodeState, UntestedChange
from histeg.tracing.coverage import SUFFIX, read_lines

WEIGHTS = {"low": 1.0, "medium": 2.0, "high": 3.0, "crucial": 4.0}
"""An unexecuted changed line's weight by the significance of the change that covers it (``none`` never counts)."""

LineSets = Mapping[str, frozenset[int] | set[int]]


def executable_lines(source: str | bytes, name: str = "<source>") -> frozenset[int]:
    """Lines with bytecode of their own, without def/class headers and docstrings: what a test can run of a change.
    Empty for a file that does not compile (its changes cannot be told executed or not)."""
    try:
        tree = ast.parse(source, name)
        code = compile(tree, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return frozenset()
    lines: set[int] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        lines.update(line for _, _, line in current.co_lines() if line)  # 0: the module's own start
        stack.extend(const for const in current.co_consts if isinstance(const, types.CodeType))
    return frozenset(lines - _not_executable(tree))


def _not_executable(tree: ast.Module) -> set[int]:
    """Header lines of functions and classes (``def`` up to its body) and docstring lines."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.update(range(node.lineno, node.body[0].lineno))
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return found


def touched_lines(old: Sequence[bytes] | None, new: Sequence[bytes]) -> frozenset[int]:
    """New-version lines (from 1) a line diff of a file's two versions added or changed; where lines were only removed,
    the new lines either side of the gap, since the change sits between them. Every line of a file that had no old version."""
    if old is None:
        return frozenset(range(1, len(new) + 1))
    touched: set[int] = set()
    for tag, _, _, start, end in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            touched.update(range(start + 1, end + 1))
        elif tag == "delete":  # new line ``start`` is the one before the gap, ``start + 1`` the one after it
            touched.update(line for line in (start, start + 1) if 1 <= line <= len(new))
    return frozenset(touched)


def changed_executable_lines(
    snapshot: Path, before: Path, old_paths: Mapping[str, str | None], files: Iterable[str]
) -> dict[str, frozenset[int]]:
    """Executable lines the commit added or changed, per file of ``snapshot`` (absent ones have none). ``before``: the
    predecessor's snapshot; ``old_paths``: the changed files' paths there (None: added), a file not listed kept its path."""
    table: dict[str, frozenset[int]] = {}
    for file in sorted(set(files)):
        path = snapshot / file
        if not path.is_file():
            table[file] = frozenset()
            continue
        source = path.read_bytes()
        old_path = old_paths.get(file, file)
        old = before / old_path if old_path is not None else None
        old_lines = old.read_bytes().splitlines() if old is not None and old.is_file() else None
        table[file] = executable_lines(source, file) & touched_lines(old_lines, source.splitlines())
    return table


def executed_lines(traces: Path) -> dict[str, set[int]]:
    """Every line a traced process of the version ran, by version-relative file: the union of the runs' sidecars.
    A sidecar that is not one (a program wrote over it) is skipped, as a damaged trace is."""
    table: dict[str, set[int]] = {}
    for path in sorted(traces.glob(f"run-*/*{SUFFIX}")):
        try:
            found = read_lines(path)
        except (OSError, ValueError):
            continue
        for file, lines in found.items():
            table.setdefault(file, set()).update(lines)
    return table


def changed_files(targets: Iterable[Target]) -> set[str]:
    return {change["newPath"] for target in targets for change in target.syntax_changes if change.get("newPath") and change.get("newLines")}


def changed_lines(target: Target, changeable: LineSets) -> dict[int, float]:
    """Changed executable lines of a target in the new version, each with the weight of its most significant change.
    ``changeable``: the executable lines the commit added or changed, per file (``changed_executable_lines``)."""
    weights: dict[int, float] = {}
    for change in target.syntax_changes:
        span, file = change.get("newLines"), change.get("newPath")
        weight = WEIGHTS.get(change.get("significance", ""), 0.0)
        if not span or not file or not weight:
            continue
        lines = changeable.get(file, frozenset())
        for line in range(span[0], span[1] + 1):
            if line in lines and weights.get(line, 0.0) < weight:
                weights[line] = weight
    return weights


def _file_of(target: Target) -> str | None:
    """The file its changed lines are in: the new path of its changes, else the target's."""
    return next((c["newPath"] for c in target.syntax_changes if c.get("newPath") and c.get("newLines")), target.file)


def changed_code(targets: Iterable[Target], changeable: LineSets, executed: LineSets) -> list[ChangedCode]:
    """Every target with a syntax change (the ranked targets: the sources only), by identifier."""
    found = []
    for target in sorted(targets, key=lambda t: t.identifier):
        if not target.syntax_changes:
            continue
        file = _file_of(target)
        lines = sorted(changed_lines(target, changeable))
        ran = executed.get(file or "", set())
        hit = [line for line in lines if line in ran]
        module, qualname = split_identifier(target.identifier)
        found.append(
            ChangedCode(
                identifier=target.identifier,
                kind=target.kind,  # type: ignore[arg-type]  # one of TargetKind, typed str in Target
                module=module,
                qualname=qualname,
                file=target.file,
                lines=target.lines,
                changed_lines=lines,
                executed_changed_lines=hit,
                state=_state(target, bool(hit)),
            )
        )
    return found


def _state(target: Target, any_executed: bool) -> CodeState:
    if target.divergences():
        return "diverged"
    return "executed" if any_executed else "unexecuted"


def untested_changes(targets: Iterable[Target], changed: Iterable[ChangedCode], changeable: LineSets) -> list[UntestedChange]:
    """The changed code with changed lines no entry point ran, ranked (see the module's docstring)."""
    by_identifier = {t.identifier: t for t in targets}
    rows: list[tuple[tuple[Any, ...], ChangedCode, list[int], float]] = []
    for code in changed:
        executed = set(code.executed_changed_lines)
        missing = [line for line in code.changed_lines if line not in executed]
        if not missing:
            continue
        weights = changed_lines(by_identifier[code.identifier], changeable)
        value = float(sum(weights[line] for line in missing))
        rows.append(((bool(executed), -value, code.identifier), code, missing, value))
    rows.sort(key=lambda row: row[0])
    listed = []
    for rank, (_, code, missing, value) in enumerate(rows, 1):
        target = by_identifier[code.identifier]
        listed.append(
            UntestedChange(
                rank=rank,
                identifier=code.identifier,
                kind=code.kind,
                module=code.module,
                qualname=code.qualname,
                file=code.file,
                lines=code.lines,
                origin="untested change",
                unexecuted_lines=missing,
                changed_line_count=len(code.changed_lines),
                value=value,
                syntax_changes=[change_summary(c) for c in target.syntax_changes[:MAX_LISTED]],
                syntax_change_count=len(target.syntax_changes),
                notes=_notes(target, code, missing),
            )
        )
    return listed


def _notes(target: Target, code: ChangedCode, missing: list[int]) -> list[str]:
    total = len(code.changed_lines)
    if len(missing) == total:
        notes = [f"no entry point executed any of its {total} changed line(s) ({spans(missing)}): the tests cannot see this change"]
    else:
        notes = [f"{len(missing)} of its {total} changed lines never ran ({spans(missing)}): a path of the change no test takes"]
    if target.new:
        notes.append(f"new {target.kind}")
    if target.divergences():
        notes.append("its executed part diverged: see its testing target")
    return notes


def spans(lines: Iterable[int]) -> str:
    """``3-5, 9`` for lines 3, 4, 5 and 9."""
    parts: list[str] = []
    start = end = None
    for line in sorted(lines):
        if start is not None and end is not None and line == end + 1:
            end = line
            continue
        if start is not None:
            parts.append(str(start) if start == end else f"{start}-{end}")
        start = end = line
    if start is not None:
        parts.append(str(start) if start == end else f"{start}-{end}")
    return ", ".join(parts)
