"""What a report shows, gathered from one output folder's stored records: every renderer (HTML, Markdown, terminal) reads
these dataclasses and nothing else, so they all show the same facts and none of them re-derives one.

Pure reading: nothing here runs a step, and a missing or damaged file is one ``HistegError`` naming it.

    run = load_run(Path("OUT"))                 # every version, with its counts
    for summary in run.compared:
        version = load_version(run.out, summary.index)
        version.targets[0].first_divergence     # why the top target ranks where it does
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from histeg.errors import HistegError
from histeg.records.divergences import (
    DivergenceClass,
    Kind,
    ListedDivergence,
    Metrics,
    NestedDivergence,
    TargetedReruns,
    TraceDivergences,
)
from histeg.records.generation import Generation
from histeg.records.history import FileChange, FileChanges, History, Version
from histeg.records.statics import FunctionRecord, Functions
from histeg.records.targets import (
    ChangedCode,
    DivergenceCounts,
    LocalDivergence,
    NonLocalDivergence,
    RankedTarget,
    RankingOptions,
    TargetChange,
    TestData,
    TestingTargets,
    UnstablePair,
    UntestedChange,
    ValueParts,
)
from histeg.results import VersionResults
from histeg.store import OutputStore

DIFF_CONTEXT = 3
"""Unchanged lines shown around each changed stretch of a file."""
MAX_DIFF_LINES = 2000
"""Diff lines kept per file: a generated or vendored file must not make the page unreadable."""
MAX_VALUE = 400
"""Characters of a recorded value shown; values are capped by the tracer already, this keeps a row on screen."""
MAX_CALLS = 8
"""Distinct callees listed for missing or additional calls."""

Section = Literal["ranked", "test code", "other code"]
DiffKind = Literal["context", "removed", "added", "gap"]
Charged = Literal["local", "non-local"]


@dataclass(frozen=True)
class Counts:
    """A compared version's figures, as its testingTargets.json summary has them."""

    targets: int
    divergences: int
    noise: int
    untested: int
    changed_lines: int
    executed_lines: int
    diff_coverage: float | None
    """Executed share of the changed executable lines; ``None`` when no executable line changed."""


@dataclass(frozen=True)
class VersionSummary:
    """A version as the run's index lists it; ``counts`` is ``None`` when it was not compared (first version, failed)."""

    index: int
    commit: str
    short_commit: str
    subject: str
    message: str
    author: str
    date: str
    against_index: int | None
    against_commit: str | None
    counts: Counts | None

    @property
    def compared(self) -> bool:
        return self.counts is not None


@dataclass(frozen=True)
class ValueRow:
    """One thing that differed at the first divergence, old and new side by side (``None``: absent on that side)."""

    label: str
    old: str | None
    new: str | None


@dataclass(frozen=True)
class SourceLine:
    number: int
    text: str
    changed: bool
    """Added or changed by the version (new side) or removed or changed (old side)."""


@dataclass(frozen=True)
class SourceExcerpt:
    """A function's code in one version's snapshot."""

    file: str
    lines: list[SourceLine]


@dataclass(frozen=True)
class FirstDivergence:
    """The first divergence charged to a target, in the order traceDivergences.json lists them (local before non-local)."""

    entry_point: str
    function: str
    call_chain: list[str]
    charged: Charged
    call_distance: int | None
    kinds: list[Kind]
    classes: list[DivergenceClass]
    metrics: Metrics
    values: list[ValueRow]
    old_source: SourceExcerpt | None
    new_source: SourceExcerpt | None


@dataclass(frozen=True)
class TargetReport:
    """A target with every reason it has: syntax changes, divergences, entry points, classes, notes."""

    section: Section
    rank: int | None
    identifier: str
    kind: str
    module: str
    qualname: str
    file: str | None
    lines: tuple[int, int] | None
    value: float
    parts: ValueParts
    origin: str
    new: bool
    syntax_changes: list[TargetChange]
    syntax_change_count: int
    local_divergences: list[LocalDivergence]
    local_divergence_count: int
    non_local_divergences: list[NonLocalDivergence]
    non_local_divergence_count: int
    affected_functions: list[str]
    entry_points: list[str]
    entry_point_count: int
    new_test_entry_points: list[str]
    new_test_entry_point_count: int
    classes: DivergenceCounts
    notes: list[str]
    first_divergence: FirstDivergence | None
    witnesses: list[WitnessView] = field(default_factory=list)
    """Tests that pass on one version and fail on the other (``histeg generate``), with their source."""


@dataclass(frozen=True)
class WitnessView:
    """A witness of ``generation.json`` as a report shows it: the test, its outcomes and its source."""

    test: str
    old: str
    new: str
    failure: str | None
    carved: bool
    source: str | None


def _witnesses(results: VersionResults) -> dict[str, list[WitnessView]]:
    """By target, the witnesses ``histeg generate`` found for this version (none when it was not run, or ran on another commit)."""
    path = results.directory / Generation.FILE
    if not path.is_file():
        return {}
    generation = Generation.read(path)
    if generation.identifier != results.version.identifier:
        return {}
    return {
        target.identifier: [
            WitnessView(w.test, w.old, w.new, w.new_failure if w.new_failure is not None else w.old_failure, w.carved, w.source)
            for w in target.witnesses
        ]
        for target in generation.targets
        if target.witnesses
    }


@dataclass(frozen=True)
class NoiseReport:
    """What was set aside as noise, with the kinds each (entry point, function) differed in between runs of one version."""

    functions: list[str]
    entry_points: list[str]
    divergences: int
    unstable: list[UnstablePair]
    confirmation: TargetedReruns
    kinds: dict[tuple[str, str], list[Kind]]
    """(entry point label, function) -> kinds, from traceDivergences.json."""


@dataclass(frozen=True)
class DiffLine:
    kind: DiffKind
    old_number: int | None
    new_number: int | None
    text: str


@dataclass(frozen=True)
class FileDiff:
    """A changed file, old against new, in hunks with ``DIFF_CONTEXT`` lines around each change."""

    change: Literal["added", "removed", "modified", "renamed"]
    old_path: str | None
    new_path: str | None
    python: bool
    binary: bool
    lines: list[DiffLine]
    added_lines: list[int]
    """New-version line numbers added or changed."""
    removed_lines: list[int]
    """Old-version line numbers removed or changed."""
    note: str | None
    """Why no lines are shown, or that they were cut."""

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


@dataclass(frozen=True)
class VersionReport:
    """Everything one compared version's page shows."""

    summary: VersionSummary
    options: RankingOptions
    targets: list[TargetReport]
    test_code: list[TargetReport]
    other_code: list[TargetReport]
    changed_code: list[ChangedCode]
    untested: list[UntestedChange]
    noise: NoiseReport
    test_data: TestData
    only_in_old: list[str]
    only_in_new: list[str]
    files: list[FileDiff]


@dataclass(frozen=True)
class RunReport:
    """The versions of one output folder, oldest first, with their counts."""

    out: Path
    repository: str
    branch: str
    versions: list[VersionSummary]

    @property
    def compared(self) -> list[VersionSummary]:
        return [summary for summary in self.versions if summary.compared]

    def version_reports(self) -> Iterator[VersionReport]:
        """Each compared version's report, read when reached."""
        for summary in self.compared:
            yield load_version(self.out, summary.index)


def load_run(out: Path, versions: list[int] | None = None) -> RunReport:
    """The versions ``versions`` (every extracted one when ``None``) of the output folder ``out``."""
    store = OutputStore(out)
    if not store.history_path.is_file():
        raise HistegError(f"no histeg results in {out}: missing {store.history_path}")
    history = History.read(store.history_path)
    known = store.extracted_indices()
    chosen = known if versions is None else versions
    for index in chosen:
        if index not in known:
            raise HistegError(f"no version {index} in {out}")
    return RunReport(
        out, history.repository.location, history.repository.branch, [_summary(VersionResults(store, index)) for index in chosen]
    )


def load_version(out: Path, index: int) -> VersionReport:
    """One compared version; a version without testingTargets.json (not compared) is an error naming the file."""
    store = OutputStore(out)
    if not store.has_version(index):
        raise HistegError(f"no version {index} in {out}: missing {store.file(index, Version.FILE)}")
    results = VersionResults(store, index)
    targets = _targets(results)
    summary = _summary(results, targets)
    against = _predecessor(store, results.version)
    divergences = _divergences(results)
    files = _file_diffs(results, against)
    context = _Context(results, against, divergences.divergences, files)
    return VersionReport(
        summary=summary,
        options=targets.options,
        targets=[context.target(t, "ranked") for t in targets.targets],
        test_code=[context.target(t, "test code") for t in targets.test_code],
        other_code=[context.target(t, "other code") for t in targets.other_code],
        changed_code=list(targets.changed_code),
        untested=list(targets.untested_changes),
        noise=_noise(targets, divergences),
        test_data=targets.test_data,
        only_in_old=[_label(e.label, e.command, e.root, e.occurrence) for e in targets.unmatched_entry_points.only_in_old],
        only_in_new=[_label(e.label, e.command, e.root, e.occurrence) for e in targets.unmatched_entry_points.only_in_new],
        files=files,
    )


def _targets(results: VersionResults) -> TestingTargets:
    found = results.testing_targets
    if found is None:
        raise HistegError(f"version {results.index} was not compared: missing {results.directory / TestingTargets.FILE}")
    return found


def _divergences(results: VersionResults) -> TraceDivergences:
    found = results.divergences
    if found is None:
        raise HistegError(f"missing result file {results.directory / TraceDivergences.FILE}")
    return found


def _predecessor(store: OutputStore, version: Version) -> VersionResults | None:
    index = version.comparing_against_index
    return VersionResults(store, index) if index is not None and store.has_version(index) else None


def _summary(results: VersionResults, targets: TestingTargets | None = None) -> VersionSummary:
    version = results.version
    if targets is None:
        targets = results.testing_targets
    counts = None
    if targets is not None:
        s = targets.summary
        counts = Counts(
            s.targets,
            s.divergences,
            s.noise,
            s.untested,
            s.diff_coverage.changed_lines,
            s.diff_coverage.executed_lines,
            s.diff_coverage.ratio,
        )
    return VersionSummary(
        index=results.index,
        commit=version.identifier,
        short_commit=version.short_identifier,
        subject=version.msg.strip().splitlines()[0] if version.msg.strip() else "",
        message=version.msg,
        author=version.author,
        date=version.date,
        against_index=version.comparing_against_index,
        against_commit=version.comparing_against_version,
        counts=counts,
    )


def _label(label: str, command: str, root: str, occurrence: int) -> str:
    """An entry point as testingTargets.json names it: the pytest node id, or command:root#occurrence outside pytest."""
    return label or f"{command}:{root}#{occurrence}"


def _noise(targets: TestingTargets, divergences: TraceDivergences) -> NoiseReport:
    kinds: dict[tuple[str, str], list[Kind]] = {}
    for noise in divergences.noise:
        e = noise.entry_point
        found = kinds.setdefault((_label(e.label, e.command, e.root, e.occurrence), noise.function), [])
        found.extend(kind for kind in noise.kinds if kind not in found)
    return NoiseReport(
        functions=list(targets.noise.functions),
        entry_points=list(targets.noise.entry_points),
        divergences=targets.noise.divergences,
        unstable=list(targets.noise.unstable),
        confirmation=targets.noise.confirmation,
        kinds=kinds,
    )


def _walk(divergences: list[ListedDivergence]) -> Iterator[tuple[ListedDivergence, ListedDivergence | NestedDivergence]]:
    """Every divergence in file order, depth first, with the listed divergence (and so the entry point) it is under."""

    def below(
        top: ListedDivergence, node: ListedDivergence | NestedDivergence
    ) -> Iterator[tuple[ListedDivergence, ListedDivergence | NestedDivergence]]:
        yield top, node
        for child in node.children:
            yield from below(top, child)

    for top in divergences:
        yield from below(top, top)


class _Context:
    """What building a target's reasons needs from both versions, each read once."""

    def __init__(
        self, results: VersionResults, against: VersionResults | None, divergences: list[ListedDivergence], files: list[FileDiff]
    ) -> None:
        self.results = results
        self.against = against
        self.divergences = divergences
        self.added = {f.new_path: set(f.added_lines) for f in files if f.new_path is not None}
        self.removed = {f.old_path: set(f.removed_lines) for f in files if f.old_path is not None}
        self._functions: dict[int, dict[str, FunctionRecord]] = {}
        self._files: dict[tuple[int, str], list[str] | None] = {}
        self.witnesses = _witnesses(results)

    def target(self, target: RankedTarget, section: Section) -> TargetReport:
        return TargetReport(
            section=section,
            rank=target.rank,
            identifier=target.identifier,
            kind=target.kind,
            module=target.module,
            qualname=target.qualname,
            file=target.file,
            lines=target.lines if target.lines else None,
            value=target.value,
            parts=target.parts,
            origin=target.origin,
            new=target.new,
            syntax_changes=list(target.syntax_changes),
            syntax_change_count=target.syntax_change_count,
            local_divergences=list(target.local_divergences),
            local_divergence_count=target.local_divergence_count,
            non_local_divergences=list(target.non_local_divergences),
            non_local_divergence_count=target.non_local_divergence_count,
            affected_functions=list(target.affected_functions),
            entry_points=list(target.entry_points),
            entry_point_count=target.entry_point_count,
            new_test_entry_points=list(target.new_test_entry_points),
            new_test_entry_point_count=target.new_test_entry_point_count,
            classes=target.divergence_classes,
            notes=list(target.notes),
            first_divergence=self.first_divergence(target),
            witnesses=self.witnesses.get(target.identifier, []),
        )

    def first_divergence(self, target: RankedTarget) -> FirstDivergence | None:
        """The first divergence in the file of the target itself, else of a function charged to it, under an entry point
        that observed it."""
        charged: list[tuple[Charged, str, str, int | None]] = [("local", d.entry_point, d.function, None) for d in target.local_divergences]
        charged += [("non-local", d.entry_point, d.function, d.call_distance) for d in target.non_local_divergences]
        for how, entry_point, function, distance in charged:
            for top, node in _walk(self.divergences):
                e = top.entry_point
                if node.function == function and _label(e.label, e.command, e.root, e.occurrence) == entry_point:
                    return FirstDivergence(
                        entry_point=entry_point,
                        function=function,
                        call_chain=list(node.call_chain),
                        charged=how,
                        call_distance=distance,
                        kinds=list(node.kinds),
                        classes=list(node.classes),
                        metrics=node.metrics,
                        values=_value_rows(node.details),
                        old_source=self._source(self.against, node.function, self.removed),
                        new_source=self._source(self.results, node.function, self.added),
                    )
        return None

    def _source(self, results: VersionResults | None, identifier: str, changed: dict[str, set[int]]) -> SourceExcerpt | None:
        if results is None:
            return None
        function = self._table(results).get(identifier)
        if function is None:
            return None
        text = self._file(results, function.file)
        if text is None:
            return None
        first, last = function.first_line, min(function.last_line, len(text))
        marked = changed.get(function.file, set())
        return SourceExcerpt(function.file, [SourceLine(n, text[n - 1], n in marked) for n in range(first, last + 1)])

    def _table(self, results: VersionResults) -> dict[str, FunctionRecord]:
        if results.index not in self._functions:
            table: Functions | None = results.functions
            self._functions[results.index] = {} if table is None else {f.identifier: f for f in table.functions}
        return self._functions[results.index]

    def _file(self, results: VersionResults, path: str) -> list[str] | None:
        key = (results.index, path)
        if key not in self._files:
            self._files[key] = _text_lines(results.store.snapshot(results.index) / path)
        return self._files[key]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else " ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def _calls(names: list[str]) -> str:
    counted: dict[str, int] = {}
    for name in names:
        counted[name] = counted.get(name, 0) + 1
    shown = [f"{name} ×{count}" if count > 1 else name for name, count in list(counted.items())[:MAX_CALLS]]
    more = len(counted) - MAX_CALLS
    return ", ".join(shown) + (f", and {more} more" if more > 0 else "")


def _stretch(start: int, end: int) -> str:
    return f"{end - start} line event(s), positions {start + 1}–{end}" if end > start else f"none (after position {start})"


def _value_rows(details: dict[str, Any]) -> list[ValueRow]:
    """The details of a divergence as rows of old and new: parameters, return, executed lines, calls."""
    rows = [ValueRow(f"parameter {p.get('name', '?')}", _short(p.get("old")), _short(p.get("new"))) for p in details.get("parameters", [])]
    if "return" in details:
        returned = details["return"]
        rows.append(ValueRow("return", _short(returned.get("old")), _short(returned.get("new"))))
    for old_start, old_end, new_start, new_end in details.get("sections", []):
        rows.append(
            ValueRow("executed lines (a stretch of the call's line events)", _stretch(old_start, old_end), _stretch(new_start, new_end))
        )
    missing, additional = details.get("missingCalls", []), details.get("additionalCalls", [])
    if missing or additional:
        rows.append(ValueRow("calls only in one version", _calls(missing) if missing else None, _calls(additional) if additional else None))
    return rows


def _text_lines(path: Path) -> list[str] | None:
    """A snapshot file's lines; ``None`` when it is not UTF-8 text. A file that should be there and is not is an error."""
    try:
        payload = path.read_bytes()
    except FileNotFoundError:
        raise HistegError(f"missing snapshot file {path}") from None
    except OSError as exc:
        raise HistegError(f"cannot read {path}: {exc.strerror}") from None
    if b"\0" in payload:
        return None
    try:
        return payload.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def _file_diffs(results: VersionResults, against: VersionResults | None) -> list[FileDiff]:
    changes = results.file_changes
    if changes is None:
        raise HistegError(f"missing result file {results.directory / FileChanges.FILE}")
    skipped = {entry.path for entry in results.version.skipped_entries}
    if against is not None:
        skipped |= {entry.path for entry in against.version.skipped_entries}
    return [_file_diff(change, results, against, skipped) for change in changes.changes]


def _file_diff(change: FileChange, results: VersionResults, against: VersionResults | None, skipped: set[str]) -> FileDiff:
    def empty(note: str) -> FileDiff:
        return FileDiff(change.type, change.old_path, change.new_path, change.python, change.binary, [], [], [], note)

    if change.binary:
        return empty("binary file")
    if {change.old_path, change.new_path} & skipped:
        return empty("not in the snapshot (a submodule or a link leaving it)")
    old = [] if change.old_path is None or against is None else _text_lines(against.store.snapshot(against.index) / change.old_path)
    new = [] if change.new_path is None else _text_lines(results.store.snapshot(results.index) / change.new_path)
    if old is None or new is None:
        return empty("not UTF-8 text")
    lines, added, removed = _diff_lines(old, new)
    note = None
    if len(lines) > MAX_DIFF_LINES:
        note = f"{len(lines) - MAX_DIFF_LINES} more diff line(s) not shown"
        lines = lines[:MAX_DIFF_LINES]
    return FileDiff(change.type, change.old_path, change.new_path, change.python, change.binary, lines, added, removed, note)


def _diff_lines(old: list[str], new: list[str]) -> tuple[list[DiffLine], list[int], list[int]]:
    """Hunks of the two texts, with the new line numbers added or changed and the old ones removed or changed."""
    lines: list[DiffLine] = []
    added: list[int] = []
    removed: list[int] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for number, group in enumerate(matcher.get_grouped_opcodes(DIFF_CONTEXT)):
        first = group[0]
        if number > 0 or first[1] > 0 or first[3] > 0:
            lines.append(DiffLine("gap", first[1] + 1, first[3] + 1, ""))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(DiffLine("context", i + 1, j1 + (i - i1) + 1, old[i]) for i in range(i1, i2))
                continue
            for i in range(i1, i2):
                lines.append(DiffLine("removed", i + 1, None, old[i]))
                removed.append(i + 1)
            for j in range(j1, j2):
                lines.append(DiffLine("added", None, j + 1, new[j]))
                added.append(j + 1)
    return lines, added, removed


__all__ = [
    "Counts",
    "DiffLine",
    "FileDiff",
    "FirstDivergence",
    "NoiseReport",
    "RunReport",
    "SourceExcerpt",
    "SourceLine",
    "TargetReport",
    "ValueRow",
    "VersionReport",
    "VersionSummary",
    "load_run",
    "load_version",
]
