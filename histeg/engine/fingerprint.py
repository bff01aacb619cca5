"""Fingerprints of step inputs: equal inputs, equal fingerprint, whatever the order of keys."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson


def canonical(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs as plain JSON data (paths as text, records as their JSON): what is fingerprinted and stored."""
    return orjson.loads(orjson.dumps(inputs, option=orjson.OPT_NON_STR_KEYS, default=_plain))


def fingerprint(inputs: Mapping[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(inputs, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=_plain)).hexdigest()


def file_digest(path: Path) -> str | None:
    """The content hash of an input file; ``None`` when it does not exist (absence is an input too)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    import msgspec

    return msgspec.to_builtins(value)
