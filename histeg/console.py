"""Messages on stderr: a progress bar on a terminal, plain log lines otherwise.

stdout is reserved for ``--json`` summaries so scripts can parse it. A leaf module: every step
reports progress through it, from extraction up.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def listed(items: Iterable[object], total: int | None = None, limit: int | None = None, empty: str = "none") -> str:
    """``a, b, c … and 12 more``: a list cut for a line says how much it left out. ``total``: how many there are
    when ``items`` is already cut; ``limit``: how many to show."""
    shown = [str(item) for item in items]
    count = len(shown) if total is None else max(total, len(shown))
    if limit is not None:
        shown = shown[:limit]
    if not shown:
        return empty if count == 0 else f"{count} not shown"
    rest = count - len(shown)
    return ", ".join(shown) + (f" … and {rest} more" if rest else "")


class Console:
    def __init__(self, verbosity: int = 1) -> None:
        self.verbosity = verbosity
        self.interactive = sys.stderr.isatty() and verbosity >= 1

    def info(self, message: str) -> None:
        if self.verbosity >= 1:
            print(message, file=sys.stderr, flush=True)

    def detail(self, message: str) -> None:
        if self.verbosity >= 2:
            print(message, file=sys.stderr, flush=True)

    def warn(self, message: str) -> None:
        print(f"histeg: warning: {message}", file=sys.stderr, flush=True)

    def progress(self, items: Iterable[T], total: int, description: str) -> Iterator[T]:
        """Iterate with a progress bar on a terminal, with log lines otherwise."""
        if not self.interactive:
            for position, item in enumerate(items, 1):
                self.detail(f"{description} {position}/{total}")
                yield item
            return
        from rich.console import Console as RichConsole
        from rich.progress import Progress

        with Progress(console=RichConsole(stderr=True), transient=True) as bar:  # stdout is for --json
            task = bar.add_task(description, total=total)
            bar.refresh()  # shown at once: a step over a few fast versions would otherwise end before the first refresh
            for item in items:
                yield item
                bar.advance(task)
