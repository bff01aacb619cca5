"""Single-function mutants made with ``ast``, and the lines a test suite executes, counted without histeg.

The operators (flipped comparison, negated condition, numeric constant plus
one, ``and``/``or`` swapped, early return) edit one function's own code, not
its decorators, defaults or nested scopes. ``executed_lines`` runs a project's
pytest in a child process under a ``sys.monitoring`` line counter of its own,
independent of histeg's tracer on purpose: it tells which edits a suite can
observe at all.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from real_repos import suite_environment  # noqa: E402

from histeg.naming import identifier, module_name  # noqa: E402

VARIED = ("compare", "condition", "constant", "boolop")
"""The operators that keep a function's shape; ``return`` (an early ``return None``) changes it wholesale."""
MONITORING_TOOL = 5
FLIPPED: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp)
"""Nodes whose code runs under another identifier (nested functions, classes, lambdas, generator expressions)."""


# ---------------------------------------------------------------- executed lines

def collect_lines(output: str, root: str, sources: list[str], pytest_args: list[str]) -> None:
    """Run pytest in this process counting line events per function of the sources; write them as JSON.

    Runs in a child process started by :func:`executed_lines`; independent of histeg's tracer on purpose.
    """
    import pytest

    base = Path(root).resolve()
    prefixes = tuple(str(base / source) + os.sep for source in sources)
    mon = sys.monitoring
    counts: dict[object, dict[int, int]] = {}
    names: dict[object, str] = {}

    def line(code: Any, number: int) -> object:
        per_line = counts.get(code)
        if per_line is None:
            if not code.co_filename.startswith(prefixes) or code.co_qualname == "<module>":
                return mon.DISABLE
            relative = Path(code.co_filename).resolve().relative_to(base).as_posix()
            names[code] = identifier(module_name(relative, sources), code.co_qualname)
            per_line = counts[code] = {}
        per_line[number] = per_line.get(number, 0) + 1
        return None

    mon.use_tool_id(MONITORING_TOOL, "histeg-bench-lines")
    mon.register_callback(MONITORING_TOOL, mon.events.LINE, line)
    mon.set_events(MONITORING_TOOL, mon.events.LINE)
    try:
        exit_code = int(pytest.main(["-q", "-p", "no:cacheprovider", *pytest_args]))
    finally:
        mon.set_events(MONITORING_TOOL, 0)
        mon.free_tool_id(MONITORING_TOOL)
    merged: dict[str, dict[str, int]] = {}
    for code, per_line in counts.items():
        target = merged.setdefault(names[code], {})
        for number, count in per_line.items():
            target[str(number)] = target.get(str(number), 0) + count
    Path(output).write_text(json.dumps({"exitCode": exit_code, "lines": merged}))


@dataclass
class Execution:
    exit_code: int | None
    """pytest's exit code; None when the run timed out."""
    lines: dict[str, dict[str, int]]


def executed_lines(root: Path, sources: Sequence[str], tests: Sequence[str], timeout: float, python: str = sys.executable) -> Execution:
    """``collect_lines`` run by ``python`` (the project's own interpreter where it has one): line counts per function."""
    with tempfile.TemporaryDirectory(prefix="histeg-bench-lines-") as scratch:
        output = Path(scratch) / "lines.json"
        program = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import mutant_edits; "
                   f"mutant_edits.collect_lines({str(output)!r}, {str(root)!r}, {list(sources)!r}, {list(tests)!r})")
        try:
            subprocess.run([python, "-c", program], cwd=root, env=suite_environment(root, sources),
                           capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return Execution(None, {})
        if not output.is_file():
            return Execution(None, {})
        data = json.loads(output.read_text())
    return Execution(data["exitCode"], data["lines"])


# ---------------------------------------------------------------- functions and mutations

@dataclass
class FunctionSite:
    identifier: str
    path: str
    """Relative to the repository root, POSIX."""
    node: ast.FunctionDef | ast.AsyncFunctionDef


def functions_in(root: Path, path: str, sources: Sequence[str]) -> Iterator[FunctionSite]:
    """Every def of one file with its qualname as CPython spells it (``C.m``, ``f.<locals>.g``)."""
    tree = ast.parse((root / path).read_bytes())
    module = module_name(path, sources)

    def walk(node: ast.AST, prefix: str) -> Iterator[FunctionSite]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = prefix + child.name
                yield FunctionSite(identifier(module, qualname), path, child)
                yield from walk(child, qualname + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Nodes of the function's own code in source order: not decorators, defaults or nested scopes."""
    stack = list(reversed(function.body))
    while stack:
        node = stack.pop()
        if isinstance(node, OWN_SCOPES):  # a def in the body is a function of its own
            continue
        yield node
        stack.extend(reversed([c for c in ast.iter_child_nodes(node) if not isinstance(c, OWN_SCOPES)]))


@dataclass
class Edit:
    """Replace bytes [start, end) of the file (line, byte column pairs) by ``text``."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str
    description: str


def _span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _docstring_skipped(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:]
    return body


def candidate_edits(function: ast.FunctionDef | ast.AsyncFunctionDef, operator: str) -> Iterator[Edit]:
    """The edits of one operator inside one function, in source order."""
    if operator == "return":
        body = _docstring_skipped(function.body)
        if body and body[0].lineno > function.lineno and not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(function)):
            first = body[0]
            indent = " " * first.col_offset
            yield Edit((first.lineno, 0), (first.lineno, 0), f"{indent}return None\n", f"return None early (line {first.lineno})")
        return
    for node in own_nodes(function):
        if operator == "compare" and isinstance(node, ast.Compare) and type(node.ops[0]) in FLIPPED:
            flipped = ast.Compare(node.left, [FLIPPED[type(node.ops[0])](), *node.ops[1:]], node.comparators)
            old, new = _op_text(node.ops[0]), _op_text(flipped.ops[0])
            yield Edit(*_span(node), ast.unparse(flipped), f"'{old}' -> '{new}' (line {node.lineno})")
        elif operator == "condition" and isinstance(node, (ast.If, ast.While, ast.IfExp)):
            test = node.test
            yield Edit(*_span(test), f"not ({ast.unparse(test)})", f"negated condition (line {test.lineno})")
        elif (operator == "constant" and isinstance(node, ast.Constant) and type(node.value) in (int, float)
              and not isinstance(node.value, bool)):
            yield Edit(*_span(node), repr(node.value + 1), f"{node.value!r} -> {node.value + 1!r} (line {node.lineno})")
        elif operator == "boolop" and isinstance(node, ast.BoolOp):
            swapped = ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            yield Edit(*_span(node), f"({ast.unparse(swapped)})", f"'{old}' -> '{new}' (line {node.lineno})")


def _op_text(op: ast.cmpop) -> str:
    return {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
            ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}[type(op)]


def apply_edit(source: bytes, edit: Edit) -> bytes:
    """Column offsets of ``ast`` are UTF-8 byte offsets, so the edit works on bytes."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    begin = starts[edit.start[0] - 1] + edit.start[1]
    end = starts[edit.end[0] - 1] + edit.end[1]
    return source[:begin] + edit.text.encode() + source[end:]
