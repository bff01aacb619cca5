"""Attaching each divergence to the syntax change that can explain it (thesis 4.6).

In order: the divergent function itself changed (local impact); a changed
function above it in the call chain (non-local impact of each, or only of the
closest with ``restrict``); beyond the thesis, a changed function it called
that returned or raised something else (the effect travels up through the
return value: non-local impact of the closest such callee); for an evident
divergence (a test's outcome changed, an exception raised in one version only,
calls to a changed function missing or extra), a changed function it called
that is missing or extra (a removed override the old version reached), else
the changed functions executed in its entry point in either version, closest
first in the static call graph; a function at or
above it reads a changed constant, class attribute or module global by any
path (non-local impact of that value; a read through a receiver of unknown
class counts where a method of the class ran in the same entry point); beyond
the thesis again, the changed function that diverged last before it in the
same entry point (the effect travels through state: an attribute or global
written there and read here); a changed value read by any function executed
in the same entry point (a lexer that compiles a changed table into its own
state when it is made, and diverges later in methods that never read it); a
changed value read by any function of the traced runs (state made once per
process: a lexer's default instance built in the first test that lexes);
for an evident divergence again, the changed functions its command's test
modules ran while they were collected (a table or a parametrize list built
before any test ran), then the changed functions the tests before it ran in
its process (state they left, such as a module's list, that the test reads:
it changed outcome there and not when re-run alone); a changed test above it (tests are entry points: their changes explain a
divergence only when the code under test does not); changed test data (files
in the tests directories that are not Python: the entry points' inputs
changed, so nothing in the code is there to test); otherwise the divergent
function becomes an unmapped target.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from histeg.compare.divergences import Divergence, run_at_collection
from histeg.compare.entry_points import EntryKey
from histeg.impact.changes import ChangeIndex
from histeg.settings.evidence import EXCEPTION_ONLY_IN_NEW, EXCEPTION_ONLY_IN_OLD, OUTCOME_CHANGED
from histeg.statics.reads import RECEIVER, FunctionReads

EVIDENT_CLASSES = frozenset({OUTCOME_CHANGED, EXCEPTION_ONLY_IN_NEW, EXCEPTION_ONLY_IN_OLD})
"""Classes of a divergence a test can see: it is always charged to a change that ran under it."""


@dataclass
class Impact:
    """What one target is charged with."""

    local: list[Divergence] = field(default_factory=list)
    non_local: list[tuple[Divergence, int | None]] = field(default_factory=list)
    """Divergences in other functions, with the call distance from this target."""


@dataclass
class ImpactMap:
    targets: dict[str, Impact] = field(default_factory=dict)
    unmapped: set[str] = field(default_factory=set)
    by_test_data: list[Divergence] = field(default_factory=list)
    """Divergences explained by changed test data: reported, not targets."""

    def of(self, identifier: str) -> Impact:
        return self.targets.setdefault(identifier, Impact())


Distance = Callable[[str, str], int | None]


def map_divergences(
    divergences: Iterable[Divergence],
    changes: ChangeIndex,
    reads: Mapping[str, FunctionReads],
    distance: Distance,
    restrict: bool = False,
    tests: frozenset[str] = frozenset(),
    test_data_changed: bool = False,
    entry_functions: Mapping[EntryKey, AbstractSet[str]] | None = None,
    earlier: Mapping[EntryKey, Sequence[str]] | None = None,
) -> ImpactMap:
    """``reads`` maps a function to the values it reads; ``distance`` is the call-graph distance;
    ``tests`` are the functions of the test code; ``test_data_changed``: the version changed
    files in the tests directories that are not Python; ``entry_functions``: the functions called
    under each entry point in either version, which confirm reads through receivers syntax could
    not resolve and say which changes ran under an evident divergence; ``earlier``: per entry point whose outcome
    changed, the changed functions run before it in its process (``VersionComparison.carried``)."""
    divergences = list(divergences)
    mapper = _Mapper(
        changes,
        reads,
        distance,
        restrict,
        tests,
        test_data_changed,
        entry_functions or {},
        _changed_returns(divergences, changes),
        _changed_calls(divergences, changes, tests),
        run_at_collection((entry_functions or {}).items()),
        earlier or {},
    )
    for divergence in divergences:
        mapper.charge(divergence)
    return mapper.result


@dataclass
class _Mapper:
    """The rules of the module docstring, tried in order for each divergence until one charges it."""

    changes: ChangeIndex
    reads: Mapping[str, FunctionReads]
    distance: Distance
    restrict: bool
    tests: frozenset[str]
    test_data_changed: bool
    entry_functions: Mapping[EntryKey, AbstractSet[str]]
    returning: dict[object, list[Divergence]]
    changed_calls: dict[object, list[Divergence]]
    collected: dict[str, set[str]]
    """Per command, the functions its test modules ran while collected (``run_at_collection``)."""
    earlier: Mapping[EntryKey, Sequence[str]]
    """Per entry point whose outcome changed, the changed functions the entry points before it in its process ran."""
    result: ImpactMap = field(default_factory=ImpactMap)
    run_values: list[str] | None = None
    """Changed values read anywhere in the traced runs (computed when first needed)."""
    entry_values: dict[tuple[EntryKey, str | None], list[str]] = field(default_factory=dict)
    """Per entry point and receiver type, the changed values read under it."""
    hops: dict[tuple[str, str], int | None] = field(default_factory=dict)

    def charge(self, divergence: Divergence) -> None:
        function = divergence.call.function
        if function in self.changes.functions:
            self.result.of(function).local.append(divergence)
        elif not self._explained(divergence):
            self.result.of(function).local.append(divergence)
            self.result.unmapped.add(function)

    def _explained(self, divergence: Divergence) -> bool:
        chain = list(reversed(divergence.call.chain))  # closest caller first
        return (
            self._callers(divergence, chain, in_tests=False)
            or self._returns(divergence)
            or self._evident(divergence)
            or self._values(divergence, chain)
            or self._state(divergence)
            or self._read_in_entry(divergence)
            or self._read_in_run(divergence)
            or self._collected(divergence)
            or self._earlier(divergence)
            or self._callers(divergence, chain, in_tests=True)
            or self._test_data(divergence)
        )

    def _callers(self, divergence: Divergence, chain: list[str], in_tests: bool) -> bool:
        """Non-local impact of each changed caller in (or outside) the tests, only the closest when restricted;
        False when there is none."""
        callers = [caller for caller in chain if caller in self.changes.functions and (caller in self.tests) == in_tests]
        for caller in callers[:1] if self.restrict else callers:
            hops = self.distance(caller, divergence.call.function)
            self.result.of(caller).non_local.append((divergence, hops if hops is not None else chain.index(caller) + 1))
        return bool(callers)

    def _returns(self, divergence: Divergence) -> bool:
        below = _closest_below(divergence, self.returning)
        for callee, hops in below:
            self.result.of(callee).non_local.append((divergence, hops))
        return bool(below)

    def _evident(self, divergence: Divergence) -> bool:
        """What a test sees is never left unexplained while a changed function ran under it: first the changed
        functions whose calls are missing or extra (a removed override), else those executed under it."""
        call = divergence.call
        named = self._changed_in_calls(divergence)
        if named:
            for function in named:
                self.result.of(function).non_local.append((divergence, 1))
            return True
        if not EVIDENT_CLASSES.intersection(divergence.classes):
            return False
        executed = []
        for function in sorted(self.entry_functions.get(divergence.entry, frozenset()) & self.changes.functions - self.tests):
            if function != call.function:  # the static distance down to it, else through the entry point at worst
                executed.append((self._down(call.function, function) or len(call.path) + 1, function))
        for hops, function in sorted(executed):
            self.result.of(function).non_local.append((divergence, hops))
        return bool(executed)

    def _collected(self, divergence: Divergence) -> bool:
        """What a test sees, when nothing closer explains it: the changed functions its command's test modules ran while
        they were collected (a table or a parametrize list built before any test ran), past the whole call path."""
        if not divergence.entry.label or not EVIDENT_CLASSES.intersection(divergence.classes):
            return False
        collected = sorted(
            self.collected.get(divergence.entry.command, set()) & self.changes.functions - self.tests - {divergence.call.function}
        )
        for function in collected:
            self.result.of(function).non_local.append((divergence, len(divergence.call.path) + 2))
        return bool(collected)

    def _earlier(self, divergence: Divergence) -> bool:
        """What a test sees, when nothing closer explains it: the changed functions the tests before it ran in its process,
        whose state (a module's list, a cache) it read, past the whole call path and the collection."""
        if not EVIDENT_CLASSES.intersection(divergence.classes):
            return False
        earlier = sorted(set(self.earlier.get(divergence.entry, ())) - self.tests - {divergence.call.function})
        for function in earlier:
            self.result.of(function).non_local.append((divergence, len(divergence.call.path) + 3))
        return bool(earlier)

    def _changed_in_calls(self, divergence: Divergence) -> list[str]:
        details = divergence.call.details
        named = {*details.get("missingCalls", ()), *details.get("additionalCalls", ())}
        return sorted(function for function in named if function in self.changes.functions and function not in self.tests)

    def _down(self, caller: str, callee: str) -> int | None:
        """Calls from ``caller`` down to ``callee`` in the static graph, asked once per pair: a change every test
        reaches makes thousands of evident divergences over the same few pairs."""
        key = (caller, callee)
        if key not in self.hops:
            self.hops[key] = self.distance(caller, callee)
        return self.hops[key]

    def _read_in_entry(self, divergence: Divergence) -> bool:
        """Changed values read anywhere in the entry point, when nothing closer explains the divergence."""
        key = (divergence.entry, divergence.call.receiver)
        values = self.entry_values.get(key)
        if values is None:
            called = self._called(divergence)
            values = self.entry_values[key] = sorted(
                {
                    value
                    for function in called
                    if (found := self.reads.get(function)) is not None
                    for value in found.values(called) & self.changes.values
                }
            )
        for value in values:
            self.result.of(value).non_local.append((divergence, len(divergence.call.path) + 1))
        return bool(values)

    def _read_in_run(self, divergence: Divergence) -> bool:
        """Changed values read by any function the traced runs ran: state made once per process (a lexer's
        default instance compiles the changed table in the first test that lexes, and every later test uses it)."""
        if self.run_values is None:
            called = set().union(*self.entry_functions.values()) if self.entry_functions else set()
            self.run_values = sorted(
                {
                    value
                    for function in called
                    if (found := self.reads.get(function)) is not None
                    for value in found.values(called) & self.changes.values
                }
            )
        for value in self.run_values:
            self.result.of(value).non_local.append((divergence, len(divergence.call.path) + 2))
        return bool(self.run_values)

    def _called(self, divergence: Divergence) -> AbstractSet[str]:
        """The functions run under the divergence's entry point, and the type its own call ran for."""
        called = self.entry_functions.get(divergence.entry, frozenset())
        receiver = divergence.call.receiver
        return called | {RECEIVER + receiver} if receiver else called

    def _values(self, divergence: Divergence, chain: list[str]) -> bool:
        called = self._called(divergence)
        reader = _closest_reader([divergence.call.function, *chain], self.reads, called, self.changes.values)
        if reader is None:
            return False
        hops, values = reader
        for value in sorted(values):
            self.result.of(value).non_local.append((divergence, hops))
        return True

    def _state(self, divergence: Divergence) -> bool:
        earlier = _latest_before(divergence, self.changed_calls)
        if earlier is None:
            return False
        self.result.of(earlier.call.function).non_local.append((divergence, _tree_distance(earlier.call.path, divergence.call.path)))
        return True

    def _test_data(self, divergence: Divergence) -> bool:
        if self.test_data_changed:
            self.result.by_test_data.append(divergence)
        return self.test_data_changed


def _closest_reader(
    functions: list[str], reads: Mapping[str, FunctionReads], called: AbstractSet[str], changed: AbstractSet[str]
) -> tuple[int, set[str]] | None:
    """Hops to the first of ``functions`` (the divergent one, then its callers) reading changed values, and those values.

    Reads through a receiver of unknown class count where the trace shows an instance carrying the
    value existed: a method of its class ran under the same entry point (``called``)."""
    for hops, function in enumerate(functions):
        found = reads.get(function)
        if found is not None and (values := found.values(called) & changed):
            return hops, values
    return None


def _changed_returns(divergences: list[Divergence], changes: ChangeIndex) -> dict[object, list[Divergence]]:
    """Per entry point, divergences of changed functions whose return value or exception differs."""
    found: dict[object, list[Divergence]] = {}
    for divergence in divergences:
        if divergence.call.function in changes.functions and divergence.call.returns:
            found.setdefault(divergence.entry, []).append(divergence)
    return found


def _changed_calls(divergences: list[Divergence], changes: ChangeIndex, tests: frozenset[str]) -> dict[object, list[Divergence]]:
    """Per entry point, divergences of changed functions outside the tests, in execution order."""
    found: dict[object, list[Divergence]] = {}
    for divergence in divergences:
        if divergence.call.function in changes.functions and divergence.call.function not in tests:
            found.setdefault(divergence.entry, []).append(divergence)
    for calls in found.values():
        calls.sort(key=lambda d: d.call.path)
    return found


def _latest_before(divergence: Divergence, changed_calls: Mapping[object, list[Divergence]]) -> Divergence | None:
    """The changed call that started last before this one and is not its caller (callers have their own rule)."""
    path = divergence.call.path
    latest = None
    for other in changed_calls.get(divergence.entry, []):
        if other.call.path >= path:
            break
        if path[: len(other.call.path)] != other.call.path:
            latest = other
    return latest


def _tree_distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Calls from one call to the other through their closest common caller."""
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    return len(a) + len(b) - 2 * common


def _closest_below(divergence: Divergence, returning: Mapping[object, list[Divergence]]) -> list[tuple[str, int]]:
    """Changed functions called (transitively) by this call whose return diverged, nearest first level only."""
    path = divergence.call.path
    candidates = [
        (len(other.call.path) - len(path), other.call.function)
        for other in returning.get(divergence.entry, [])
        if len(other.call.path) > len(path) and other.call.path[: len(path)] == path
    ]
    if not candidates:
        return []
    nearest = min(hops for hops, _ in candidates)
    return sorted({(function, hops) for hops, function in candidates if hops == nearest})
