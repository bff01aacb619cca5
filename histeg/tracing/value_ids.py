"""Value ids of one trace file: each distinct abstraction gets an id and one ``V`` record.

Shared by both collectors (the C one calls ``id_of`` for what it cannot
answer itself: values other than small ints whose type is not in
``by_type``). Ids are cached by type for types with the default repr and by
value for exact types whose equal values have equal abstractions, so the
abstraction, which may run user code, runs once per distinct value.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from histeg.tracing.format import INLINE_INT, INT_BIAS
from histeg.tracing.values import EXACT, abstract, overrides_repr

MAX_CACHED_VALUES = 1 << 17
"""Value ids are cached up to this many distinct values, then the cache starts over."""
HASHED_EXACT = frozenset({int, str, bytes, bool, type(None)})
"""Exact types whose equal values have equal abstractions, so ids can be cached by value (not float: 0.0 == -0.0)."""
MAX_KEY_LENGTH = 64


class ValueIds:
    """The value table of one trace file."""

    def __init__(self, write_value: Callable[[int, str, str | None], None]) -> None:
        self.by_type: dict[type, int] = {}
        """Types whose values all abstract alike (default repr): one id per type."""
        self._by_object: dict[tuple[type, object], int] = {}
        self._values: dict[tuple[str, str | None], int] = {}
        self._next = itertools.count(1)
        self._write_value = write_value

    def intern(self, key: tuple[str, str | None]) -> int:
        found = self._values.get(key)
        if found is None:
            if len(self._values) >= MAX_CACHED_VALUES:
                self._values.clear()
                self._by_object.clear()
            found = self._values[key] = next(self._next)
            self._write_value(found, key[0], key[1])
        return found

    def id_of(self, value: object, divert: Callable[[object, Callable[[], int]], int] | None = None, state: object = None) -> int:
        """The id of ``value``'s abstraction. ``divert(state, thunk)`` wraps the one case that runs
        the type's own ``repr`` (the Python collector diverts the events of that call)."""
        cls = type(value)
        if cls is int and -INT_BIAS <= value < INT_BIAS:
            return (value + INT_BIAS) | INLINE_INT
        found = self.by_type.get(cls)
        if found is not None:
            return found
        if cls in HASHED_EXACT and not ((cls is str or cls is bytes) and len(value) > MAX_KEY_LENGTH):
            key = (cls, value)
            found = self._by_object.get(key)
            if found is None:
                if len(self._by_object) >= MAX_CACHED_VALUES:
                    self._by_object.clear()
                found = self._by_object[key] = self.intern(abstract(value))
            return found
        if cls in EXACT:
            return self.intern(abstract(value))
        if not overrides_repr(cls):
            found = self.by_type[cls] = self.intern(abstract(value))
            return found
        if divert is None:
            return self.intern(abstract(value))
        return divert(state, lambda: self.intern(abstract(value)))
