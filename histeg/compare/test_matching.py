"""Matching tests whose node ids changed: renumbered parametrize cases, renamed and moved tests.

Equal keys pair the entry points of an unchanged test. They pair the wrong
ones when pytest renumbers automatic parametrize ids (``test_f[obj0]`` is a
different case once a case is inserted in front) or when cases are
reordered, and nothing when a test was renamed or moved. So tests are
matched as *cases* first: a case is a node id with the call-phase root that
stands for it (the test function, whose parameter values the trace records).
Cases of one test function are paired by those values; a renamed or moved
test function is found through the syntax changes of the new version. Every
other entry point of a case (setup, teardown, further roots) follows the
pairing of its node id.

Values are decoded only where they can decide something: a test with a
single case on each side under the same id, or a case whose entry point has
the same digest on both sides, is paired from the trace index alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from histeg.records.divergences import EntryKey
from histeg.records.syntax import SyntaxChanges
from histeg.traces.records import Value

if TYPE_CHECKING:
    from histeg.compare.entry_points import EntryRef

CALL_PHASE = "call"
MAX_SIMILARITY_PAIRS = 250_000
"""Old × new cases above which the last rule (shared parameter values) is not tried: quadratic."""

Params = tuple[tuple[str, Value | None], ...]
"""A root's parameters: name and value (None: not recorded)."""


def split_node_id(label: str) -> tuple[str, str]:
    """``path::Class::test_f[ids]`` -> (``path::Class::test_f``, ``[ids]``).

    The id is searched after the file part: names of classes and functions
    hold no ``[``, while the id itself may hold anything (``::`` included)."""
    path, sep, rest = label.partition("::")
    cut = rest.find("[")
    if not sep or cut < 0:
        return label, ""
    return f"{path}::{rest[:cut]}", rest[cut:]


def translate(ident: str, renames: Mapping[str, str]) -> str:
    """A function's identifier in the new version: renamed or moved itself, or inside a class
    or module that was (a moved class's methods have no changes of their own)."""
    found = renames.get(ident)
    if found is not None:
        return found
    module, _, qualname = ident.partition(":")
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        outer = renames.get(f"{module}:{'.'.join(parts[:cut])}")
        if outer is not None:
            return f"{outer}.{'.'.join(parts[cut:])}"
    new_module = renames.get(module)
    return f"{new_module}:{qualname}" if new_module is not None else ident


def read_renames(path: Path) -> dict[str, str]:
    """Old identifier -> new identifier of the functions and classes a version's
    ``syntaxChanges.json`` reports renamed or moved, and of the modules of renamed files.

    A missing file (the syntax step did not run) gives no renames: matching falls back to ids."""
    if not path.is_file():
        return {}
    renames: dict[str, str] = {}
    for entry in SyntaxChanges.read(path).files:
        old_module, new_module = entry.old_module, entry.new_module
        if entry.status == "renamed" and old_module and new_module and old_module != new_module:
            renames.setdefault(old_module, new_module)
        for change in entry.changes:
            old, new = change.old_entity, change.entity
            if change.type in ("rename", "move") and change.level in ("function", "class") and old and new and old != new:
                renames[old] = new
    return renames


@dataclass(eq=False)
class Case:
    """One test case of a run: a node id with the call-phase entry point that stands for it."""

    key: EntryKey
    ref: EntryRef | None
    position: int
    """Order in the run (pytest's order of the cases)."""
    _params: Params | None = field(default=None, repr=False)

    @property
    def group(self) -> tuple[str, str]:
        return self.key.command, self.key.label

    @property
    def base(self) -> str:
        return split_node_id(self.key.label)[0]

    @property
    def case_id(self) -> str:
        return split_node_id(self.key.label)[1]

    @property
    def digest(self) -> bytes | None:
        return None if self.ref is None else self.ref.digest

    def params(self) -> Params:
        """The root's parameters, ``self`` left out: a fresh instance per test, no input.

        Decoded on first use; the decoded entry point is not kept."""
        if self._params is None:
            if self.ref is None:
                self._params = ()
            else:
                definitions = self.ref.file.definitions
                columns = self.ref.file.columns(self.ref.index)
                names = definitions.functions[columns.function[0]].params
                values = columns.params[columns.param_start[0] : columns.param_start[1]]
                pairs = tuple(zip(names, (definitions.value(v) for v in values), strict=False))  # values off: no parameters recorded
                self._params = pairs[1:] if pairs and pairs[0][0] == "self" else pairs
        return self._params


def _function_name(ident: str) -> str:
    return ident.rpartition(":")[2].rpartition(".")[2]


def cases_of(entries: Mapping[EntryKey, EntryRef] | Iterable[EntryKey], taken: set[EntryKey]) -> list[Case]:
    """The cases of a run, one per (command, node id), from keys alone.

    Stands for a node id: its first call-phase root named like the test function (a test can
    start threads or have roots of its own), else its first call-phase root."""
    refs = entries if isinstance(entries, Mapping) else None
    chosen: dict[tuple[str, str], tuple[bool, int, EntryKey]] = {}
    for position, key in enumerate(entries):
        if not key.label or key.phase != CALL_PHASE or key in taken:
            continue
        named = _function_name(key.root) == split_node_id(key.label)[0].rpartition("::")[2]
        best = chosen.get((key.command, key.label))
        if best is None or (named and not best[0]):
            chosen[(key.command, key.label)] = (named, position, key)
    return [Case(key, None if refs is None else refs[key], position) for _, position, key in sorted(chosen.values(), key=lambda c: c[1])]


Comparable = tuple[tuple[str, str, str | None], ...]


def _exact(params: Params, loose: bool = False) -> Comparable | None:
    """Parameters comparable for equality, None unless all values were recorded (an unrecorded
    value is unknown). Loose: types by their own name, so a class moved to another module along
    with the tests still compares (nested values keep their full text)."""
    if not params or any(value is None for _, value in params):
        return None
    return tuple((name, _type(value, loose), value.repr) for name, value in params if value is not None)


def _type(value: Value, loose: bool) -> str:
    return value.type.rpartition(".")[2] if loose else value.type


def _loose(params: Params) -> dict[str, tuple[str, str | None]]:
    return {name: (_type(value, True), value.repr) for name, value in params if value is not None}


def _varying(cases: Iterable[Case]) -> set[str]:
    """Parameters whose values differ between the cases of a test: the ones that tell cases apart
    (a fixture's value, equal in every case, says nothing about which case is which)."""
    seen: dict[str, set[tuple[str, str | None]]] = {}
    for case in cases:
        for name, value in _loose(case.params()).items():
            seen.setdefault(name, set()).add(value)
    return {name for name, values in seen.items() if len(values) > 1}


def _shared(old: Params, new: Params, varying: set[str]) -> int:
    """Parameters (by name) that tell cases apart with equal values, loosely."""
    new_values = _loose(new)
    return sum(1 for name, value in _loose(old).items() if name in varying and new_values.get(name) == value)


def pair_cases(old: Sequence[Case], new: Sequence[Case]) -> list[tuple[Case, Case]]:
    """Cases of one test function, paired by what they were run with.

    In order: the same id with identical entry points (no decoding); equal parameter values
    (the same id first among equals, then in pytest's order), then equal up to the modules of
    their types; the same id (a case edited in place); the most equal values among the
    parameters that tell the cases apart (at least one: a case given a new value-derived id).
    Values are decoded only for the cases the first rule leaves, and for all of the test's cases
    when the last rule is needed. Unpaired cases stay unmatched."""
    pairs: list[tuple[Case, Case]] = []
    old_free = {id(case): case for case in old}
    new_free = {id(case): case for case in new}
    new_by_id: dict[str, Case] = {}
    for case in new:
        new_by_id.setdefault(case.case_id, case)

    def take(a: Case, b: Case) -> None:
        pairs.append((a, b))
        del old_free[id(a)], new_free[id(b)]

    def same_id(a: Case) -> Case | None:
        b = new_by_id.get(a.case_id)
        return b if b is not None and id(b) in new_free else None

    if len(old) == len(new) == 1 and old[0].case_id == new[0].case_id:
        take(old[0], new[0])
    for a in list(old_free.values()):
        b = same_id(a)
        if b is not None and a.digest is not None and a.digest == b.digest:
            take(a, b)
    if not old_free or not new_free:
        return pairs
    for loose in (False, True):
        by_values: dict[Comparable, list[Case]] = {}
        for b in new_free.values():
            exact = _exact(b.params(), loose)
            if exact is not None:
                by_values.setdefault(exact, []).append(b)
        for a in list(old_free.values()):
            b = same_id(a)
            if b is not None and _exact(a.params(), loose) is not None and _exact(a.params(), loose) == _exact(b.params(), loose):
                take(a, b)
        for a in list(old_free.values()):
            exact = _exact(a.params(), loose)
            b = next((b for b in by_values.get(exact, ()) if id(b) in new_free), None) if exact is not None else None
            if b is not None:
                take(a, b)
    for a in list(old_free.values()):
        b = same_id(a)
        if b is not None:
            take(a, b)
    if old_free and new_free and len(old_free) * len(new_free) <= MAX_SIMILARITY_PAIRS:
        varying = _varying([*old, *new])
        scored = sorted(
            (-_shared(a.params(), b.params(), varying), i, j)
            for i, a in enumerate(old_free.values())
            for j, b in enumerate(new_free.values())
        )
        olds, news = list(old_free.values()), list(new_free.values())
        for score, i, j in scored:
            if score < 0 and id(olds[i]) in old_free and id(news[j]) in new_free:
                take(olds[i], news[j])
    return pairs


def _renamed_base(base: str, old_root: str, new_root: str) -> tuple[str, ...]:
    """What an old node id (without its case id) should read as after the rename, file part left out:
    the trailing names that the old identifier's qualified name spells are replaced by the new ones."""
    parts = base.split("::")[1:]
    old_names = old_root.partition(":")[2].split(".")
    new_names = new_root.partition(":")[2].split(".")
    if len(old_names) == len(new_names):
        for offset in range(1, min(len(parts), len(old_names)) + 1):
            if parts[-offset] != old_names[-offset]:
                break
            parts[-offset] = new_names[-offset]
    else:
        parts[-1:] = [new_names[-1]]
    return tuple(parts)


def match_test_cases(old: Sequence[Case], new: Sequence[Case], renames: Mapping[str, str] | None = None) -> list[tuple[Case, Case]]:
    """Cases paired across versions: first within each test function that kept its node id and
    root, then for the ones left, across renames and moves of the test function."""
    pairs: list[tuple[Case, Case]] = []

    def same(case: Case) -> tuple[str, str, str]:
        return case.key.command, case.base, case.key.root

    new_groups = _grouped(new, same)
    for group, old_cases in _grouped(old, same).items():
        if group in new_groups:
            pairs.extend(pair_cases(old_cases, new_groups[group]))
    if not renames:
        return pairs
    paired_old, paired_new = {id(a) for a, _ in pairs}, {id(b) for _, b in pairs}
    old_left = [c for c in old if id(c) not in paired_old and translate(c.key.root, renames) != c.key.root]
    if not old_left:
        return pairs
    new_by_root = _grouped((c for c in new if id(c) not in paired_new), lambda c: (c.key.command, c.key.root))
    for (command, new_root), old_cases in _grouped(old_left, lambda c: (c.key.command, translate(c.key.root, renames))).items():
        old_bases = _grouped(old_cases, lambda c: c.base)
        new_bases = _grouped(new_by_root.get((command, new_root), ()), lambda c: c.base)
        for old_base, new_base in _pair_bases(old_bases, new_bases, new_root):
            pairs.extend(pair_cases(old_bases[old_base], new_bases[new_base]))
    return pairs


def _grouped[K](cases: Iterable[Case], key: Callable[[Case], K]) -> dict[K, list[Case]]:
    groups: dict[K, list[Case]] = {}
    for case in cases:
        groups.setdefault(key(case), []).append(case)
    return groups


def _pair_bases(old: Mapping[str, list[Case]], new: Mapping[str, list[Case]], new_root: str) -> list[tuple[str, str]]:
    """Node ids (without case ids) of a renamed test function paired: by their shape after the
    rename (an inherited test method runs under several classes; the file part may have changed),
    else the one left with the one left."""
    shapes: dict[tuple[str, ...], list[str]] = {}
    for base in new:
        shapes.setdefault(tuple(base.split("::")[1:]), []).append(base)
    pairs: list[tuple[str, str]] = []
    for base, cases in old.items():
        found = shapes.get(_renamed_base(base, cases[0].key.root, new_root), [])
        if len(found) == 1 and found[0] not in {b for _, b in pairs}:
            pairs.append((base, found[0]))
    paired_old, paired_new = {a for a, _ in pairs}, {b for _, b in pairs}
    left_old = [b for b in old if b not in paired_old]
    left_new = [b for b in new if b not in paired_new]
    if len(left_old) == len(left_new) == 1:
        pairs.append((left_old[0], left_new[0]))
    return pairs


def follow_cases(
    case_pairs: Iterable[tuple[Case, Case]],
    old: Iterable[EntryKey],
    new: Iterable[EntryKey],
    taken_old: set[EntryKey],
    taken_new: set[EntryKey],
    renames: Mapping[str, str] | None = None,
) -> list[tuple[EntryKey, EntryKey]]:
    """Every entry point of a paired node id with its counterpart under the other node id: same
    phase and occurrence, and the same root (translated when renamed), else a root of the same
    name (pytest finds fixtures by name: one moved to a conftest is still the test's fixture).
    Setup and teardown follow the call."""
    label_map = {a.group: b.group for a, b in case_pairs}
    new_free = {key for key in new if key not in taken_new}
    by_name: dict[tuple[str, str, str, str, int], list[EntryKey]] = {}
    for key in sorted(new_free):
        by_name.setdefault((key.command, key.label, key.phase, _function_name(key.root), key.occurrence), []).append(key)
    pairs = []
    left = []
    for key in old:
        target = label_map.get((key.command, key.label))
        if target is None or key in taken_old:
            continue
        for root in dict.fromkeys((translate(key.root, renames or {}), key.root)):
            candidate = msgspec.structs.replace(key, label=target[1], root=root)
            if candidate in new_free:
                pairs.append((key, candidate))
                new_free.discard(candidate)
                break
        else:
            left.append((key, target[1]))
    for key, label in left:
        found = [k for k in by_name.get((key.command, label, key.phase, _function_name(key.root), key.occurrence), ()) if k in new_free]
        if len(found) == 1:
            pairs.append((key, found[0]))
            new_free.discard(found[0])
    return pairs
