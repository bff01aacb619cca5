"""Which module globals and class attributes each function reads.

Needed to map divergences to value-only changes (``WIN = 750`` -> ``800``),
which jHisteg's syntax differencing missed entirely: a divergence in a
function that reads a changed value, or below such a function, is attributed
to that value. A read counts by any path: plain names (own globals, names
imported from project modules, re-exports), ``module.NAME``, ``Cls.NAME``,
``self.NAME``/``cls.NAME`` along the class's project bases, ``obj.NAME`` for
an ``obj`` whose class the resolver knows, and an instance held in an
attribute (``self.locale.NAMES`` where the class's methods assign
``self.locale = Locale()``). All of it is ``histeg.statics.resolve``.

Where syntax cannot tell the receiver's class (a parameter, a returned object,
``self`` of a base class whose subclasses define the attribute), the read is a
*candidate* of every project class holding a value of that name. The trace can
tell: a candidate counts under an entry point where one of its witnesses (a
method of a class whose instances carry the value) ran, since an instance
then existed (``histeg.impact.mapping``). ``self.NAME`` in a method of a class
is also a candidate read of every subclass's own ``NAME``, witnessed by the
subclass's methods or by the receiver's type the trace records for the call.
"""

from __future__ import annotations

import ast
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Literal

from histeg.statics.functions import Definition, FunctionTable
from histeg.statics.resolve import UNKNOWN, ProjectIndex, class_of, identifier_of, scoped_nodes

Resolution = Literal["name", "attribute", "instance attribute"]
"""How a read was resolved statically: a plain name, ``<resolved receiver>.NAME``, ``<instance attribute>.NAME``."""


@dataclass
class FunctionReads:
    """The values one function reads."""

    resolved: dict[str, Resolution] = field(default_factory=dict)
    """Values read for certain, with how the read was resolved."""
    candidates: dict[str, frozenset[str]] = field(default_factory=dict)
    """Values read through a receiver of unknown class -> their witnesses: the methods of the classes
    whose instances carry the value. A candidate is read where a witness ran."""

    def values(self, called: AbstractSet[str] = frozenset()) -> set[str]:
        """The values read when the functions ``called`` ran alongside: the resolved ones and the confirmed candidates."""
        return set(self.resolved) | {value for value, witnesses in self.candidates.items() if not witnesses.isdisjoint(called)}


RECEIVER = "instance of "


def receiver_witness(klass: str) -> str:
    """The witness that a call ran on an instance of ``klass`` (``pkg.mod:Cls``), as the trace tells
    by its receiver's type (``pkg.mod.Cls``): ``instance of pkg.mod.Cls``."""
    return RECEIVER + klass.replace(":", ".")


ValueReads = dict[str, FunctionReads]
"""Function identifier -> what it reads."""


def value_reads(table: FunctionTable) -> ValueReads:
    """Every function of the table with the values (``mod:NAME``, ``mod:Class.NAME``) it reads."""
    index = ProjectIndex(table)
    candidates = _Candidates(index)
    reads: ValueReads = {}
    for parsed in table.modules:
        for definition in parsed.definitions:
            if definition.record is not None:
                reads[definition.record.identifier] = _reads_of(index, candidates, definition)
    return reads


def _reads_of(index: ProjectIndex, candidates: _Candidates, definition: Definition) -> FunctionReads:
    found = FunctionReads()
    for node, scope in scoped_nodes(definition, index.scopes[id(definition.node)]):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.resolved.update(dict.fromkeys(index.name_places(node.id, scope), "name"))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            receiver, held = index.receiver(node, scope)
            how: Resolution = "instance attribute" if held else "attribute"
            if places := index.member_places(receiver, node.attr):
                found.resolved.update(dict.fromkeys(places, how))
                if _on_self(node) and (receiver_class := class_of(receiver)) is not None:  # a subclass may override NAME
                    found.candidates.update(candidates.overriding(node.attr, receiver_class, set(places)))
            elif receiver is UNKNOWN:
                found.candidates.update(candidates.holding(node.attr))
            elif (receiver_class := class_of(receiver)) is not None:
                found.candidates.update(candidates.holding(node.attr, below=receiver_class))
    for value in found.resolved:
        found.candidates.pop(value, None)
    return found


def _on_self(node: ast.Attribute) -> bool:
    """``self.NAME`` or ``cls.NAME``: read on whatever instance or class the method runs for."""
    return isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")


class _Candidates:
    """Per attribute name, the values of that name a receiver of unknown class may read, with their witnesses."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index

    def holding(self, name: str, below: str | None = None) -> dict[str, frozenset[str]]:
        """Value -> witnesses (methods of the carrying classes), for the values ``name`` may read; only
        those carried by subclasses of ``below`` when given (``self.NAME`` in a base class, say)."""
        found: dict[str, frozenset[str]] = {}
        for value, classes in self.index.carriers(name).items():
            if below is not None:
                classes = [klass for klass in classes if below in self.index.mro(klass)[0]]
            if classes:
                found[value] = frozenset(witness for klass in classes for witness in self._witnesses(klass))
        return found

    def overriding(self, name: str, below: str, read: set[str]) -> dict[str, frozenset[str]]:
        """Value -> witnesses, for the values of ``name`` that project subclasses of ``below`` bind
        themselves (a locale subclass's own ``PHRASES``): ``self.NAME`` in a method of ``below`` reads
        them when it runs on such an instance. Witnesses: the subclasses' own methods, and the
        receiver's type the trace records for the call (``receiver_witness``); never the base's methods,
        which run for the base's instances and every sibling's too."""
        found: dict[str, frozenset[str]] = {}
        for value, classes in self.index.carriers(name).items():
            below_it = [klass for klass in classes if klass != below and below in self.index.mro(klass)[0]]
            if value in read or not below_it:
                continue
            witnesses = {receiver_witness(klass) for klass in below_it}
            witnesses.update(
                identifier_of(method.definition)
                for klass in below_it
                for method in self.index.methods(klass)
                if method.definition is not None
            )
            found[value] = frozenset(witnesses)
        return found

    def _witnesses(self, klass: str) -> list[str]:
        """The methods whose running shows an instance of ``klass``: its own, or, for a class that only
        overrides data, those of its nearest base that has some (they run for its instances, and for its siblings' too)."""
        order, _ = self.index.mro(klass)
        for owner in order:
            if methods := self.index.methods(owner):
                return [identifier_of(method.definition) for method in methods if method.definition is not None]
        return []
