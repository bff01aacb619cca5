"""Which targets a generated test covers, read from the test's code: the names it uses.

Pynguin calls what it tests by name (``module_.Class(...)``,
``var_0.method()``, ``module_.Class.CONSTANT``), so a target is covered by
the tests that use its last name (a constructor by its class's name). A test
that uses none of its module's targets by name still ran code Pynguin was
told to cover only there: it covers all of them.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from histeg.generate.selection import Chosen


@dataclass(frozen=True)
class GeneratedFunction:
    """A test in a generated file and the names its body uses."""

    name: str
    names: frozenset[str]


def generated_tests(source: str | bytes) -> list[GeneratedFunction]:
    """The module-level ``test_*`` functions of a generated file, in file order."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names = set()
            for inner in ast.walk(node):
                if isinstance(inner, ast.Attribute):
                    names.add(inner.attr)
                elif isinstance(inner, ast.Name):
                    names.add(inner.id)
            found.append(GeneratedFunction(node.name, frozenset(names)))
    return found


def calling_name(target: Chosen) -> str:
    """The name a test uses to reach ``target``: its last part, a constructor's class name."""
    parts = target.qualname.split(".")
    if parts[-1] == "__init__" and len(parts) > 1:
        return parts[-2]
    return parts[-1]


def covered_targets(test: GeneratedFunction, targets: Sequence[Chosen]) -> list[Chosen]:
    """The targets of the test's module that it uses by name; all of them when it uses none."""
    named = [target for target in targets if calling_name(target) in test.names]
    return named or list(targets)


__all__ = ["GeneratedFunction", "calling_name", "covered_targets", "generated_tests"]
