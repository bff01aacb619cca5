"""A call's behaviour as positions among its function's code lines.

Raw line offsets change when a comment or blank line is added inside a
function, although nothing else did. The index of an executed line among the
lines that carry code (``co_lines()`` of the compiled function) does not: it
is the true analogue of jHisteg's bytecode instruction indices. Functions
whose source cannot be compiled fall back to offsets from the first line.
"""

from __future__ import annotations

import bisect
import warnings
from pathlib import Path
from types import CodeType

from histeg.traces import Call, Function

_FALLBACK_BASE = 1 << 16  # keeps fallback offsets apart from indices (the tracer records lines below 65520)


def _code_objects(code: CodeType) -> list[CodeType]:
    found, stack = [], [code]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(const for const in current.co_consts if isinstance(const, CodeType))
    return found


class CodeLines:
    """Code lines of every function of one version's snapshot, compiled on demand."""

    def __init__(self, snapshot: Path) -> None:
        self.snapshot = snapshot
        self._files: dict[str, dict[tuple[int, str], list[int]] | None] = {}
        self._calls: dict[int, list[int]] = {}

    def _file(self, relative: str) -> dict[tuple[int, str], list[int]] | None:
        if relative not in self._files:
            table = None
            try:
                source = (self.snapshot / relative).read_bytes()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    module = compile(source, relative, "exec", dont_inherit=True)
                table = {
                    (code.co_firstlineno, code.co_qualname): sorted({line for _, _, line in code.co_lines() if line is not None})
                    for code in _code_objects(module)
                }
            except (OSError, SyntaxError, ValueError):
                table = None
            self._files[relative] = table
        return self._files[relative]

    def lines_of(self, function: Function) -> list[int] | None:
        table = self._file(function.file)
        if table is None:
            return None
        qualname = function.ident.partition(":")[2] or "<module>"
        first = 1 if qualname == "<module>" else function.first_line
        return table.get((first, qualname))

    def positions(self, call: Call) -> list[int]:
        """The call's executed lines as indices among its function's code lines."""
        cached = self._calls.get(id(call))
        if cached is not None:
            return cached
        code_lines = self.lines_of(call.function)
        if code_lines is None:
            result = [_FALLBACK_BASE + offset for offset in call.lines]
        else:
            first = call.function.first_line
            result = []
            for offset in call.lines:
                line = first + offset
                index = bisect.bisect_left(code_lines, line)
                result.append(index if index < len(code_lines) and code_lines[index] == line else _FALLBACK_BASE + offset)
        self._calls[id(call)] = result
        return result
