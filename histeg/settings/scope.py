"""Which first-parent versions a run covers, as the settings choose them."""

from __future__ import annotations

from dataclasses import dataclass

SCOPE_FLAGS = "--versions REV..., --all, --since DATE or --last N"


@dataclass(frozen=True)
class Scope:
    """Exactly one way of choosing versions is set (``Settings.scope`` checks it)."""

    versions: tuple[str, ...] = ()
    all: bool = False
    since: str | None = None
    last: int | None = None
