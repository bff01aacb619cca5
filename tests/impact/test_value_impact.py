"""Changed constants, globals and class attributes charged with the divergences of functions reading them by any path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from histeg.compare.divergences import compare_with_predecessor
from histeg.impact.mapping import ImpactMap, map_divergences
from histeg.impact.compute import load_changes
from histeg.statics.functions import read_function_table
from histeg.statics.reads import value_reads
from histeg.store import SYNTAX_CHANGES, OutputStore
from tests.conftest import GitRepo, run_histeg, validate_output

TEXTS = '''GREETING = "hello"
FAREWELL = "bye"


class Locale:
    NAMES = {"red": "rouge", "blue": "bleu"}


class Palette:
    COLOURS = {"red": "#f00", "blue": "#00f"}

    def __init__(self, name):
        self.name = name
'''
PAINT = '''import texts
from texts import FAREWELL as BYE
from texts import Locale


class Painter:
    def __init__(self):
        self.locale = Locale()

    def label(self, key):
        return self.locale.NAMES[key].upper()


def greet(name):
    return texts.GREETING + " " + name


def leave(name):
    return BYE + " " + name


def colour(palette, key):
    return palette.COLOURS[key]
'''
TESTS = '''from paint import Painter, colour, greet, leave
from texts import Palette


def test_label():
    assert Painter().label("red")


def test_greet():
    assert greet("ada")


def test_leave():
    assert leave("ada")


def test_colour():
    assert colour(Palette("warm"), "red")
'''
CHANGED = (TEXTS.replace('"red": "rouge"', '"red": "vermillon"').replace('GREETING = "hello"', 'GREETING = "hi"')
           .replace('FAREWELL = "bye"', 'FAREWELL = "ciao"').replace('"red": "#f00"', '"red": "#e00"'))


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two versions whose only change is the values of ``texts.py``, computed by the real command line."""
    root = tmp_path_factory.mktemp("values")
    repo = GitRepo.create(root / "repo")
    repo.commit("base", {"texts.py": TEXTS, "paint.py": PAINT, "tests/test_paint.py": TESTS})
    repo.commit("new words", {"texts.py": CHANGED})
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(root / "out"), "--repeat", "1")
    assert result.code == 0, result.stderr
    return root / "out"


def charged(document: dict[str, Any], identifier: str) -> set[tuple[str, int | None]]:
    target = next(t for t in document["targets"] if t["identifier"] == identifier)
    assert target["localDivergences"] == []
    return {(d["function"], d["callDistance"]) for d in target["nonLocalDivergences"]}


def test_values_read_through_an_instance_a_module_and_an_import_are_targets(out: Path) -> None:
    document = validate_output(out / "1" / "testingTargets.json")
    assert charged(document, "texts:Locale.NAMES") == {("paint:Painter.label", 0)}  # self.locale.NAMES[key]
    assert charged(document, "texts:GREETING") == {("paint:greet", 0)}  # texts.GREETING
    assert charged(document, "texts:FAREWELL") == {("paint:leave", 0)}  # from texts import FAREWELL as BYE
    assert charged(document, "texts:Palette.COLOURS") == {("paint:colour", 0)}  # palette.COLOURS, the trace shows a Palette
    unmapped = {t["identifier"] for t in document["targets"] if t["origin"] == "unmapped divergence"}
    assert not unmapped & {"paint:Painter.label", "paint:greet", "paint:leave", "paint:colour"}


def _mapping(out: Path, with_trace: bool) -> ImpactMap:
    """The mapping of version 1 from what ``histeg compute`` left on disk, with or without the functions each entry point called."""
    store = OutputStore(out)
    comparison = compare_with_predecessor(store, 1)
    settings = store.version(1).settings
    reads = value_reads(read_function_table(store.snapshot(1), settings))
    return map_divergences(comparison.divergences, load_changes(store.file(1, SYNTAX_CHANGES)), reads, lambda a, b: None,
                           entry_functions=comparison.entry_functions if with_trace else None)


def test_a_read_through_an_unknown_receiver_counts_where_the_trace_shows_an_instance(out: Path) -> None:
    """``palette.COLOURS`` of a parameter: syntax only has candidates; ``Palette.__init__`` ran in that test, so it is Palette's."""
    confirmed = _mapping(out, with_trace=True)
    assert [(d.call.function, hops) for d, hops in confirmed.targets["texts:Palette.COLOURS"].non_local] == [("paint:colour", 0)]
    assert "paint:colour" not in confirmed.unmapped
    unconfirmed = _mapping(out, with_trace=False)
    assert "texts:Palette.COLOURS" not in unconfirmed.targets and "paint:colour" in unconfirmed.unmapped
