"""Value abstraction: what a trace keeps of a parameter, return value or exception.

A value is reduced to its type name plus ``repr()`` only where the type
overrides ``__repr__`` (the default repr says nothing but the address).
Addresses are scrubbed, long texts are cut and hashed, and a ``repr`` that
raises, recurses or is slow never breaks the traced program: it is recorded
as ``<repr failed: ExcType>`` or ``<repr skipped: slow>``.
"""

from __future__ import annotations

import time
import zlib
from typing import Any

MAX_REPR = 120
"""Longest repr kept verbatim; longer ones keep a prefix and a hash of the whole."""
MAX_ITEMS = 1000
"""Builtin containers with more items are not repr'd at all (repr is O(n))."""
SLOW_REPR_SECONDS = 0.05
"""A type whose repr took longer than this once is not repr'd again in this process."""

EXACT = frozenset({int, float, bool, complex, type(None), str, bytes})
"""Types whose abstraction runs no user code."""
_SIZED = frozenset({list, tuple, dict, set, frozenset, bytearray})
_default_repr = object.__repr__
_overrides: dict[type, bool] = {}
_slow_types: set[type] = set()


def type_name(cls: type) -> str:
    """``int`` for builtins, ``module.Qual`` for everything else."""
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def scrub(text: str) -> str:
    """Replace what differs from run to run by construction, so reprs compare across runs:
    memory addresses (``0x7f3a...``) and the random parts of temporary paths
    (``tempfile``'s ``tmpk3j_x9a2``, pytest's ``pytest-17``)."""
    if "0x" not in text and "tmp" not in text and "pytest-" not in text:
        return text
    import re

    text = re.sub(r"0x[0-9a-fA-F]+", "0x\u2026", text)
    text = re.sub(r"(?<=[/\\])tmp[a-z0-9_]{8}(?![a-z0-9_])", "tmp\u2026", text)
    return re.sub(r"(?<=[/\\])pytest-\d+(?=[/\\])", "pytest-\u2026", text)


def cap(text: str) -> str:
    """Keep short texts; replace long ones by a prefix and a digest of the whole."""
    if len(text) <= MAX_REPR:
        return text
    return f"{text[:MAX_REPR // 2]}\u2026[len={len(text)} hash={_digest(text)}]"


def _digest(value: str | bytes) -> str:
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    return f"{zlib.crc32(data) | (zlib.adler32(data) << 32):016x}"


def overrides_repr(cls: type) -> bool:
    """Whether ``repr`` of instances says more than the type and the address (cached per type)."""
    known = _overrides.get(cls)
    if known is None:
        try:
            known = getattr(cls, "__repr__", _default_repr) is not _default_repr
        except Exception:
            known = False
        _overrides[cls] = known
    return known


def abstract(value: Any) -> tuple[str, str | None]:
    """``(type name, repr or None)`` for one value; never raises."""
    cls = type(value)
    try:
        name = type_name(cls)
    except Exception:
        name = "<unnamed type>"
    if cls in EXACT:
        if (cls is str or cls is bytes) and len(value) > MAX_REPR:
            return name, _long_text(value)
        try:
            return name, cap(repr(value))
        except Exception as exc:  # e.g. int too large for str()
            return name, f"<repr failed: {type(exc).__name__}>"
    if cls in _SIZED and len(value) > MAX_ITEMS:
        return name, f"<len={len(value)}>"
    if not overrides_repr(cls):
        return name, None
    if cls in _slow_types:
        return name, "<repr skipped: slow>"
    started = time.perf_counter()
    try:
        text = repr(value)
        if type(text) is not str:
            raise TypeError
    except Exception as exc:
        return name, f"<repr failed: {type(exc).__name__}>"
    finally:
        if time.perf_counter() - started > SLOW_REPR_SECONDS:
            _slow_types.add(cls)
    return name, cap(scrub(text))


def _long_text(value: str | bytes) -> str:
    """Hash long strings directly instead of building their (even longer) repr."""
    return f"{repr(value[: MAX_REPR // 2])}\u2026[len={len(value)} hash={_digest(value)}]"
