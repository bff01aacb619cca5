"""The compare step for one version: it against its predecessor, re-runs included; ``traceDivergences.json`` for
people and ``comparison.msgpack`` for the targets step.

The comparison is kept whole (divergences, noise, the functions under each entry
point) so that ranking reads it instead of comparing again: a ranking setting
changed later recomputes the targets alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import msgspec

from histeg.atomic import write_bytes
from histeg.compare.divergences import VersionComparison, compare_with_predecessor, write_divergences
from histeg.errors import HistegError
from histeg.runs.confirm import DEFAULT_CONFIRM_RUNS
from histeg.store import COMPARISON, OutputStore


@dataclass(frozen=True)
class CompareOptions:
    with_sections: bool = True
    """Whether divergent sections are computed (the sections metric ranks by them)."""
    flat: bool = False
    jobs: int = 0
    """Worker processes comparing entry points (0: one per core, up to 4)."""
    confirm: int = DEFAULT_CONFIRM_RUNS
    """Targeted re-runs per version of the entry points that diverged (0: none)."""

    def workers(self) -> int:
        return self.jobs or min(4, len(os.sched_getaffinity(0)))


def compare_version(store: OutputStore, index: int, options: CompareOptions) -> dict[str, Any]:
    comparison = compare_with_predecessor(store, index, with_sections=options.with_sections, jobs=options.workers(),
                                          confirm_runs=options.confirm)
    write_divergences(store, comparison, options.flat)
    write_bytes(store.file(index, COMPARISON), msgspec.msgpack.encode(comparison))
    return {"divergences": len(comparison.divergences), "noise": comparison.noisy_functions(),
            "seconds": {"compare": round(comparison.compare_seconds, 3), "confirm": round(comparison.confirmation.seconds, 3)}}


def read_comparison(store: OutputStore, index: int) -> VersionComparison:
    """The comparison the compare step kept; one line naming the file when it is missing or damaged."""
    path = store.file(index, COMPARISON)
    try:
        return msgspec.msgpack.decode(path.read_bytes(), type=VersionComparison)
    except FileNotFoundError:
        raise HistegError(f"{path} is missing: the compare step did not run on version {index}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise HistegError(f"{path} is damaged or from another histeg ({exc}): run the compare step again") from None
