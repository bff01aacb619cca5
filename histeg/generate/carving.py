"""Which recorded calls a carved test repeats: the calls whose result changed, under the top targets.

For each of the top targets, the divergences charged to it (the target and
its affected functions) whose result changed (returned or raised) are
candidates; each is found in the new version's first traced
run by its entry point and call path. Its arguments are the new run's, with
the old values of those that differed, so that the call is the old version's
call. Up to ``calls`` distinct calls are kept per target, shortest call chains
from a test first. Everything that cannot be carved is kept with its reason.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib.util
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from histeg.compare.calls import Tree
from histeg.compare.divergences import VersionComparison, load_run, run_directories
from histeg.generate.literals import (
    NOT_RECORDED,
    Expression,
    Uncarvable,
    exception_arguments,
    is_standard_module,
    literal,
    object_fields,
)
from histeg.records.divergences import EntryKey
from histeg.records.targets import RankedTarget
from histeg.store import OutputStore
from histeg.traces.records import Function, Value

CARVED_KINDS = frozenset({"return"})
"""Divergence kinds a carved test asserts: a changed result, returned or raised (``details.return``)."""
PASSED_ON = "its arguments differed and its result did not: the change is its caller's"
NOT_IN_SOURCES = "not a module of the sources directories (test code or another package)"
IN_TESTS = "test code (a helper of the project's tests)"
TEST_CODE = ast.Module(body=[], type_ignores=[])
"""Stands for a module found in a test folder."""
THE_TEST = "the test itself (its own outcome changed): it already is the test"
NESTED = "a nested function: nothing can import it"
GENERATOR = "a generator or coroutine: its result is what it yields"
NO_DEFINITION = "its definition is not in its module's file"
SIGNATURE = "its recorded parameters do not match its definition"
NAN = "its result holds nan, which equals nothing"


@dataclass(frozen=True)
class Signature:
    """How a function takes its parameters, from its definition in the snapshot."""

    positional_only: tuple[str, ...]
    regular: tuple[str, ...]
    var_positional: str | None
    keyword_only: tuple[str, ...]
    var_keyword: str | None

    @property
    def names(self) -> tuple[str, ...]:
        extra = (
            ((self.var_positional,) if self.var_positional else ()) + self.keyword_only + ((self.var_keyword,) if self.var_keyword else ())
        )
        return self.positional_only + self.regular + extra


@dataclass(frozen=True)
class Candidate:
    """A divergence under a target whose result changed."""

    target: str
    function: str
    entry_point: EntryKey
    call_path: tuple[int, ...]
    chain: int
    """Calls from the entry point down to it."""
    old_parameters: Mapping[str, str]
    """By name, the old version's recorded text (``type repr``) of the parameters that differed."""
    old_outcome: tuple[str, str | None]
    """``returned`` or ``raised``, with the old value's text."""


@dataclass(frozen=True)
class CarvedCall:
    """A recorded call ready to be written as a test."""

    candidate: Candidate
    module: str
    qualname: str
    receiver: Expression | None
    """``Cls.__new__(Cls)`` for a method; its state is in ``state``."""
    state: Mapping[str, Expression]
    owner: Expression | None
    """The class a class or static method is called on."""
    positional: tuple[Expression, ...]
    keywords: tuple[tuple[str, Expression], ...]
    expected: Expression | None
    """The old result; for an object, ``None`` and its fields in ``expected_fields``."""
    expected_type: str | None
    """The old result's type (``module.Qual``) when it was an object: compared by name, so that carving imports
    nothing of the project but the target's module."""
    expected_fields: Mapping[str, Expression]
    raises: str | None
    """The old exception's type (``module.Qual``, or a builtin's name), when the old call raised."""
    raised_args: Expression | None

    def key(self) -> str:
        """What makes two carved calls the same test."""
        parts = [self.qualname, *(e.source for e in self.positional), *(f"{k}={e.source}" for k, e in self.keywords)]
        parts += [f"{k}={e.source}" for k, e in sorted(self.state.items())]
        return "\x00".join(parts)


@dataclass(frozen=True)
class Refusal:
    target: str
    function: str
    entry_point: str
    reason: str
    detail: str = ""


def candidates(target: RankedTarget, comparison: VersionComparison) -> Iterator[Candidate | Refusal]:
    """The divergences charged to ``target`` whose result changed, shortest call chains first; then those whose
    arguments alone changed, as refusals (their caller's result is what changed, if anything)."""
    charged = {*target.affected_functions, target.identifier}
    found: list[Candidate] = []
    passed_on: list[Refusal] = []
    for divergence in comparison.divergences:
        call = divergence.call
        if call.function not in charged:
            continue
        kinds = set(call.kinds)
        if not kinds & CARVED_KINDS:
            if "parameters" in kinds:
                passed_on.append(Refusal(target.identifier, call.function, divergence.entry.label or divergence.entry.root, PASSED_ON))
            continue
        old = {p["name"]: p["old"] for p in call.details.get("parameters", [])}
        outcome = call.details["return"]["old"]
        found.append(
            Candidate(target.identifier, call.function, divergence.entry, call.path, len(call.chain), old, (outcome[0], outcome[1]))
        )
    found.sort(
        key=lambda c: (bool(c.old_parameters), c.chain, c.entry_point.label, c.call_path)
    )  # same arguments first: the call's own change
    yield from found
    yield from passed_on


@dataclass(frozen=True)
class RecordedCall:
    """What carving reads of one recorded call: its function and the values it was called with."""

    function: Function
    params: list[Value | None]


class TraceCalls:
    """The new version's first traced run, decoded one entry point at a time, and only along the path asked for."""

    def __init__(self, store: OutputStore, index: int) -> None:
        self.entries = load_run(run_directories(store, index)[0])
        self._trees: dict[EntryKey, Tree] = {}

    def call(self, entry: EntryKey, path: Sequence[int]) -> RecordedCall | None:
        ref = self.entries.get(entry)
        if ref is None:
            return None
        tree = self._trees.get(entry)
        if tree is None:
            tree = self._trees[entry] = Tree(ref.file.columns(ref.index), ref.file.definitions)
        call = 0
        for position in path:
            children = tree.children(call)
            if position >= len(children):
                return None
            call = children[position]
        columns, definitions = tree.columns, tree.definitions
        params = columns.params[columns.param_start[call] : columns.param_start[call + 1]]
        return RecordedCall(definitions.functions[columns.function[call]], [definitions.value(value) for value in params])


class Carver:
    """Turns candidates into carved calls, reading definitions from one version's snapshot."""

    def __init__(self, snapshot: Path, source_file: Callable[[str], Path | None], tests: Sequence[str], calls: TraceCalls) -> None:
        self.snapshot = snapshot
        self.source_file = source_file
        """A module's file in the sources directories (``VersionSide.source_file``)."""
        self.tests = [Path(folder).parts for folder in tests if Path(folder).parts not in ((), (".",))]
        """Test folders below the snapshot's root: a function defined there is test code, not a target's behaviour."""
        self.calls = calls
        self._trees: dict[str, ast.Module | None] = {}
        self._definitions: dict[str, tuple[Signature, bool] | Uncarvable] = {}

    def carve(self, candidate: Candidate) -> CarvedCall:
        module, _, qualname = candidate.function.partition(":")
        found = self._definitions.get(candidate.function)
        if found is None:
            try:
                found = self._definition(module, qualname)
            except Uncarvable as refusal:
                found = refusal
            self._definitions[candidate.function] = found
        if isinstance(found, Uncarvable):
            raise Uncarvable(found.reason, found.detail)
        signature, in_class = found
        if not candidate.call_path:
            raise Uncarvable(THE_TEST, qualname)
        call = self.calls.call(candidate.entry_point, candidate.call_path)
        if call is None or call.function.ident != candidate.function:
            raise Uncarvable(NOT_RECORDED, "the call is not in the first run's trace")
        if tuple(call.function.params) != signature.names[: len(call.function.params)] or len(call.params) != len(signature.names):
            raise Uncarvable(SIGNATURE)
        types = _TypeReferences(module)
        values = {name: _value(candidate.old_parameters.get(name), value) for name, value in zip(signature.names, call.params, strict=True)}
        receiver, state, owner, skip = self._receiver(qualname, in_class, signature, values, types)
        positional: list[Expression] = []
        keywords: list[tuple[str, Expression]] = []
        for name in signature.names[skip:]:
            value = values[name]
            if value is None:
                raise Uncarvable(NOT_RECORDED, name)
            rebuilt = literal(value.type, value.repr, types)
            if name == signature.var_positional:
                positional.append(Expression(f"*{rebuilt.source}", rebuilt.imports))
            elif name == signature.var_keyword:
                keywords.append(("**", rebuilt))
            elif name in signature.positional_only:
                positional.append(rebuilt)
            else:
                keywords.append((name, rebuilt))
        expected, expected_type, fields, raises, raised_args = _expectation(candidate.old_outcome, types)
        return CarvedCall(
            candidate,
            module,
            qualname,
            receiver,
            state,
            owner,
            tuple(positional),
            tuple(keywords),
            expected,
            expected_type,
            fields,
            raises,
            raised_args,
        )

    def _definition(self, module: str, qualname: str) -> tuple[Signature, bool]:
        """The function's signature and whether a class holds it, or why it cannot be carved (the same for all its calls)."""
        if "<locals>" in qualname or "<lambda>" in qualname:
            raise Uncarvable(NESTED)
        tree = self._module_tree(module)
        if tree is None:
            raise Uncarvable(NOT_IN_SOURCES, module)
        if tree is TEST_CODE:
            raise Uncarvable(IN_TESTS, module)
        definition, in_class = _definition(tree, qualname)
        if definition is None:
            raise Uncarvable(NO_DEFINITION, qualname)
        if isinstance(definition, ast.AsyncFunctionDef) or _is_generator(definition):
            raise Uncarvable(GENERATOR)
        return _signature(definition.args), in_class

    def _receiver(
        self, qualname: str, in_class: bool, signature: Signature, values: Mapping[str, Value | None], types: _TypeReferences
    ) -> tuple[Expression | None, dict[str, Expression], Expression | None, int]:
        if not in_class:
            return None, {}, None, 0
        owner = types.local(qualname.rpartition(".")[0])
        first = signature.names[0] if signature.names else ""
        if first == "cls":
            return None, {}, owner, 1
        if first != "self":
            return None, {}, owner, 0
        value = values["self"]
        if value is None:
            raise Uncarvable(NOT_RECORDED, "self")
        cls = types(value.type)
        state, refused = object_fields(value.repr, types)
        if refused:
            name, reason = next(iter(refused.items()))
            raise Uncarvable(f"its receiver's state: {reason}", f"self.{name}")
        return Expression(f"{cls.source}.__new__({cls.source})", cls.imports), state, None, 1

    def _module_tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            path = self.source_file(module)
            tree = None
            if path is not None and any(path.relative_to(self.snapshot).parts[: len(folder)] == folder for folder in self.tests):
                tree = TEST_CODE
            elif path is not None:
                with contextlib.suppress(SyntaxError, ValueError):  # a file that does not parse has no definitions
                    tree = ast.parse(path.read_bytes())
            self._trees[module] = tree
        return self._trees[module]


def _value(old_text: str | None, recorded: Value | None) -> Value | None:
    """The old version's value where the parameter differed (its text is ``type repr``), else the recorded one."""
    if old_text is None:
        return recorded
    type_name, _, rest = old_text.partition(" ")
    return Value(type_name, rest if rest else None)


def _expectation(
    outcome: tuple[str, str | None], types: _TypeReferences
) -> tuple[Expression | None, str | None, dict[str, Expression], str | None, Expression | None]:
    how, text = outcome
    if text is None:
        raise Uncarvable(NOT_RECORDED, "the old result")
    type_name, _, rest = text.partition(" ")
    value = rest if rest else None
    if how == "raised":
        return None, None, {}, type_name, exception_arguments(value, types)
    try:
        expected = literal(type_name, value, types)
    except Uncarvable as refusal:
        if value is None or not value.startswith("{"):
            raise
        fields, _ = object_fields(value, types)
        if not fields:
            raise Uncarvable(refusal.reason, "no attribute of the old result can be rebuilt") from None
        return None, type_name, fields, None, None
    if "float('nan')" in expected.source:
        raise Uncarvable(NAN)
    return expected, None, {}, None, None


def _definition(tree: ast.Module, qualname: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, bool]:
    """The ``def`` of ``qualname`` (``Class.method``) at module or class level, and whether a class holds it."""
    body: list[ast.stmt] = tree.body
    parts = qualname.split(".")
    in_class = False
    for position, part in enumerate(parts):
        last = position == len(parts) - 1
        found = None
        for node in body:
            kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
            if isinstance(node, kinds) and node.name == part:
                found = node
        if found is None:
            return None, False
        if last:
            return found, in_class  # type: ignore[return-value]  # the last part is a def by the test above
        body, in_class = found.body, True
    return None, False


def _is_generator(definition: ast.FunctionDef) -> bool:
    for node in ast.walk(definition):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and node is not definition:
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
    return False


def _signature(args: ast.arguments) -> Signature:
    return Signature(
        tuple(a.arg for a in args.posonlyargs),
        tuple(a.arg for a in args.args),
        args.vararg.arg if args.vararg else None,
        tuple(a.arg for a in args.kwonlyargs),
        args.kwarg.arg if args.kwarg else None,
    )


class _TypeReferences:
    """Importable expressions for type names: builtins, the standard library, and the target's own module only
    (importing another module of the project could run its code)."""

    def __init__(self, module: str) -> None:
        self.module = module

    def local(self, qualname: str) -> Expression:
        top = qualname.partition(".")[0]
        return Expression(qualname, frozenset({f"from {self.module} import {top}"}))

    def __call__(self, type_name: str) -> Expression:
        if "." not in type_name:
            if isinstance(getattr(builtins, type_name, None), type):
                return Expression(type_name)
            raise Uncarvable("a type that is not a builtin", type_name)
        if type_name.startswith(self.module + "."):
            return self.local(type_name[len(self.module) + 1 :])
        if is_standard_module(type_name):
            parts = type_name.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                module = ".".join(parts[:cut])
                try:
                    spec = importlib.util.find_spec(module)
                except (ImportError, ValueError):
                    spec = None
                if spec is not None:
                    return Expression(type_name, frozenset({f"import {module}"}))
        raise Uncarvable("a type of another module, which carving does not import", type_name)


__all__ = ["CARVED_KINDS", "Candidate", "CarvedCall", "Carver", "Refusal", "TraceCalls", "candidates"]
