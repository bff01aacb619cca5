"""The compare step for one version: it against its predecessor, re-runs included; ``traceDivergences.json`` for
people and ``comparison.msgpack`` for the targets step.

The comparison is kept whole (divergences, noise, the functions under each entry
point) so that ranking reads it instead of comparing again: a ranking setting
changed later recomputes the targets alone.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from histeg.atomic import write_bytes
from histeg.compare.divergences import (
    VersionComparison,
    compare_with_predecessor,
    write_divergences,
)
from histeg.errors import HistegError
from histeg.settings.model import Settings
from histeg.store import COMPARISON, OutputStore


def compare_workers(settings: Settings) -> int:
    """Worker processes comparing entry points: ``compare-jobs``, else one per core, up to 4."""
    return settings.compare_jobs or min(4, len(os.sched_getaffinity(0)))


def compare_version(store: OutputStore, index: int, settings: Settings) -> dict[str, Any]:
    """Divergent sections are computed only for the sections metric, which ranks by them; ``confirm``: the re-runs."""
    comparison = compare_with_predecessor(
        store,
        index,
        with_sections="sections" in settings.metric,
        jobs=compare_workers(settings),
        confirm_runs=settings.confirm,
        sample=settings.confirm_sample,
    )
    write_divergences(store, comparison, settings.export_flat)
    write_bytes(store.file(index, COMPARISON), msgspec.msgpack.encode(comparison))
    return {
        "divergences": len(comparison.divergences),
        "noise": comparison.noisy_functions(),
        "seconds": {"compare": round(comparison.compare_seconds, 3), "confirm": round(comparison.confirmation.seconds, 3)},
    }


def read_comparison(store: OutputStore, index: int) -> VersionComparison:
    """The comparison the compare step kept; one line naming the file when it is missing or damaged."""
    path = store.file(index, COMPARISON)
    try:
        return msgspec.msgpack.decode(path.read_bytes(), type=VersionComparison)
    except FileNotFoundError:
        raise HistegError(f"{path} is missing: the compare step did not run on version {index}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise HistegError(
            f"{path} is damaged or from another histeg ({exc}): remove it and run again, the comparison is made anew"
        ) from None
