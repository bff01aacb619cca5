"""Which ranked targets Pynguin is pointed at, and how the search budget is split over their modules.

Pure functions: the ranking, the sources' scope names and the budget in,
the choice out. Pynguin covers functions, methods and classes, named as
``--only-cover`` names them (``Class.method``, from the module's own AST); a
class-level value (a changed constant) is handed over as the class holding
it, whose methods are what the change reaches first. A module's top level
and module-level values have nothing Pynguin could call and are passed over.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from histeg.records.targets import TargetKind

CALLABLE_KINDS = frozenset({"function", "method", "class"})
ScopeKind = str
"""``class`` or ``function``, for a scope name of a module's AST."""


class Ranked(Protocol):
    """What selection reads of a ranked target (``histeg.records.targets.RankedTarget``)."""

    @property
    def rank(self) -> int | None: ...
    @property
    def identifier(self) -> str: ...
    @property
    def kind(self) -> TargetKind: ...
    @property
    def module(self) -> str: ...
    @property
    def qualname(self) -> str: ...


@dataclass(frozen=True)
class Chosen:
    """A target Pynguin is pointed at."""

    rank: int
    identifier: str
    kind: TargetKind
    module: str
    qualname: str
    cover: str
    """The ``--only-cover`` name."""


@dataclass(frozen=True)
class Passed:
    """A target ranked among the first ones that Pynguin cannot be pointed at, and why."""

    rank: int
    identifier: str
    reason: str


@dataclass(frozen=True)
class Selection:
    chosen: list[Chosen]
    passed: list[Passed]

    def modules(self) -> dict[str, list[Chosen]]:
        """The chosen targets by module, modules in the order of their best target."""
        grouped: dict[str, list[Chosen]] = {}
        for target in self.chosen:
            grouped.setdefault(target.module, []).append(target)
        return grouped


def scope_names(source: str | bytes) -> dict[str, ScopeKind]:
    """Qualified names of a module's classes and functions as Pynguin's ``--only-cover`` reads them
    (``Outer.Inner.method``, no ``<locals>``); a file that does not parse has none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, ScopeKind] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}.{child.name}" if prefix else child.name
                found.setdefault(name, "class" if isinstance(child, ast.ClassDef) else "function")
                visit(child, name)
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def cover_name(target: Ranked, scopes: Mapping[str, ScopeKind]) -> tuple[str | None, str]:
    """The ``--only-cover`` name of ``target`` in a module with ``scopes``, or ``None`` and why not."""
    if target.kind == "module":
        return None, "a module's top level: nothing to call"
    if target.kind == "value":
        owner, _, _ = target.qualname.rpartition(".")
        if owner and scopes.get(owner) == "class":
            return owner, ""
        if owner:
            return None, f"a value inside {owner}, which is not a class"
        return None, "a module-level value: nothing to call"
    if target.kind not in CALLABLE_KINDS:
        return None, f"a {target.kind}: nothing to call"
    if "<locals>" in target.qualname:
        return None, "a nested function: Pynguin cannot call it"
    if target.qualname not in scopes:
        return None, f"{target.qualname} is not defined in its module's file"
    return target.qualname, ""


def select(
    targets: Sequence[Ranked],
    top: int,
    scopes_of: Mapping[str, Mapping[str, ScopeKind] | str],
) -> Selection:
    """The first ``top`` targets, in rank order, that Pynguin can be pointed at; the ones passed over on the way.

    ``scopes_of``: per module, its scope names, or why it cannot be used (not in the sources directories,
    not a file of the snapshot, not an importable name)."""
    chosen: list[Chosen] = []
    passed: list[Passed] = []
    for position, target in enumerate(targets, 1):
        if len(chosen) >= top:
            break
        rank = target.rank if target.rank is not None else position
        scopes = scopes_of.get(target.module, "not a module of the sources directories")
        if isinstance(scopes, str):
            passed.append(Passed(rank, target.identifier, scopes))
            continue
        cover, reason = cover_name(target, scopes)
        if cover is None:
            passed.append(Passed(rank, target.identifier, reason))
            continue
        chosen.append(Chosen(rank, target.identifier, target.kind, target.module, target.qualname, cover))
    return Selection(chosen, passed)


def split_budget(modules: Mapping[str, Iterable[int]], budget: float) -> dict[str, int]:
    """Whole seconds per module from ``budget``: one each, the rest in proportion to the module's weight.

    ``modules``: per module, the positions (1 = best) of its targets among the ``n`` chosen ones; a target at
    position ``p`` weighs ``n - p + 1``, a module the sum of its targets. The seconds left after the one each
    are shared in proportion to the weights, rounded down, and the seconds rounding left over go one by one
    to the largest remainders (the better module first on a tie). The total is the budget rounded down, and
    never less than one second per module."""
    positions = {module: list(found) for module, found in modules.items()}
    if not positions:
        return {}
    count = sum(len(found) for found in positions.values())
    weights = {module: sum(count - position + 1 for position in found) for module, found in positions.items()}
    spare = max(0, int(budget) - len(weights))
    total = sum(weights.values())
    shares = {module: spare * weight / total for module, weight in weights.items()}
    seconds = {module: 1 + int(share) for module, share in shares.items()}
    left = spare - sum(int(share) for share in shares.values())
    best = {module: min(found) for module, found in positions.items()}
    order = sorted(weights, key=lambda module: (-(shares[module] - int(shares[module])), best[module]))
    for module in order[:left]:
        seconds[module] += 1
    return seconds


__all__ = ["Chosen", "Passed", "Ranked", "Selection", "cover_name", "scope_names", "select", "split_budget"]
