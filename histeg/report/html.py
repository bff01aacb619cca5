"""The HTML report: ``OUT/report/index.html`` and ``OUT/report/<index>.html`` per compared version, from ``histeg.report.model``.

Each page stands alone (inline CSS, inline SVG charts, a few lines of inline JS; nothing fetched), so it opens from
a CI artifact or a mail attachment. Jinja2 escapes every value, and the charts' geometry is computed here as numbers,
so no name, value or source line reaches the page unescaped.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from histeg.atomic import write_bytes
from histeg.records.targets import ChangedCode
from histeg.report.model import (
    DIFF_CONTEXT,
    Counts,
    RunReport,
    VersionReport,
    VersionSummary,
    load_run,
    load_version,
)
from histeg.store import REPORT_DIR
from histeg.version import __version__

INDEX = "index.html"
MAP_WIDTH = 960
MAP_HEIGHT = 320
MAP_MIN_HEIGHT = 90
SPARK_WIDTH = 320
SPARK_HEIGHT = 48
STATES = ("diverged", "executed", "unexecuted")
STATE_LABELS = {"diverged": "diverged", "executed": "executed without divergence", "unexecuted": "executed by no test"}


@dataclass(frozen=True)
class Tile:
    """A changed entity in the map of changed code."""

    x: float
    y: float
    width: float
    height: float
    code: ChangedCode

    @property
    def label(self) -> str:
        return self.code.identifier


@dataclass(frozen=True)
class Spark:
    """A sparkline: one value per compared version, scaled to the chart's height."""

    title: str
    points: str
    dots: list[tuple[float, float, int, int]]
    """x, y, version index, value."""
    maximum: int


def version_page(index: int) -> str:
    return f"{index}.html"


def write_report(out: Path, versions: list[int] | None = None) -> Path:
    """Write the index and one page per compared version of ``versions`` (every version when ``None``); returns the index."""
    run = load_run(out, versions)
    folder = out / REPORT_DIR
    compared = run.compared
    for position, summary in enumerate(compared):
        previous = compared[position - 1] if position > 0 else None
        following = compared[position + 1] if position + 1 < len(compared) else None
        page = render_version(load_version(out, summary.index), previous, following)
        write_bytes(folder / version_page(summary.index), page.encode())
    index = folder / INDEX
    write_bytes(index, render_index(run).encode())
    return index


def render_index(run: RunReport) -> str:
    compared = run.compared
    sparks = [
        _spark("testing targets", compared, lambda c: c.targets),
        _spark("divergences", compared, lambda c: c.divergences),
        _spark("untested changes", compared, lambda c: c.untested),
    ]
    return (
        _environment()
        .get_template("index.html.j2")
        .render(run=run, sparks=sparks, page=version_page, spark_width=SPARK_WIDTH, spark_height=SPARK_HEIGHT)
    )


def render_version(report: VersionReport, previous: VersionSummary | None = None, following: VersionSummary | None = None) -> str:
    tiles = _treemap(report.changed_code)
    counts = {state: sum(1 for c in report.changed_code if c.state == state) for state in STATES}
    return (
        _environment()
        .get_template("version.html.j2")
        .render(
            report=report,
            previous=previous,
            following=following,
            page=version_page,
            tiles=tiles,
            state_counts=counts,
            state_labels=STATE_LABELS,
            map_width=MAP_WIDTH,
            map_height=map_height(len(tiles)),
            context=DIFF_CONTEXT,
        )
    )


@functools.cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("histeg.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["histeg_version"] = __version__
    environment.filters["tally"] = tally
    environment.filters["percent"] = lambda ratio: "–" if ratio is None else f"{100 * ratio:.0f} %"
    environment.filters["number"] = lambda value: f"{value:,.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"
    return environment


def tally(rows: list[Any], *fields: str) -> list[tuple[Any, int]]:
    """Rows alike in ``fields``, once each with how often: a test calling a function 25 times lists it once."""
    counted: dict[tuple[Any, ...], list[Any]] = {}
    for row in rows:
        key = tuple(str(getattr(row, name)) for name in fields)
        counted.setdefault(key, [row, 0])[1] += 1
    return [(row, count) for row, count in counted.values()]


def map_height(entities: int) -> int:
    """A few entities get a low map, so that one changed function is not a wall of colour."""
    return max(MAP_MIN_HEIGHT, min(MAP_HEIGHT, 40 * entities))


def _spark(title: str, summaries: list[VersionSummary], count: Callable[[Counts], int]) -> Spark:
    values = [count(s.counts) if s.counts else 0 for s in summaries]
    top = max(values, default=0) or 1
    step = (SPARK_WIDTH - 8) / max(len(values) - 1, 1)
    dots = [
        (4 + i * step, SPARK_HEIGHT - 4 - (SPARK_HEIGHT - 8) * v / top, s.index, v)
        for i, (s, v) in enumerate(zip(summaries, values, strict=True))
    ]
    return Spark(title, " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in dots), dots, max(values, default=0))


def _treemap(changed: list[ChangedCode]) -> list[Tile]:
    """A squarified treemap of the changed code, each entity as large as its changed lines, grouped by state."""
    if not changed:
        return []
    import squarify

    ordered = sorted(changed, key=lambda c: (STATES.index(c.state), -max(len(c.changed_lines), 1), c.identifier))
    height = map_height(len(ordered))
    sizes = squarify.normalize_sizes([max(len(c.changed_lines), 1) for c in ordered], MAP_WIDTH, height)
    boxes = squarify.squarify(sizes, 0, 0, MAP_WIDTH, height)
    return [Tile(box["x"], box["y"], box["dx"], box["dy"], code) for box, code in zip(boxes, ordered, strict=True)]
