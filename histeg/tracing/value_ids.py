"""Value ids of one trace file: each distinct abstraction gets an id and one ``V`` record.

Shared by both collectors (the C one calls ``id_of`` for what it cannot
answer itself: values other than small ints whose type is not in
``by_type``). Ids are cached by type for types whose instances all abstract
alike (no state to see) and by value for exact types whose equal values have
equal abstractions, so a value is abstracted once per distinct value.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from histeg.tracing.format import INLINE_INT, INT_BIAS
from histeg.tracing.values import MAX_ITEMS, MAX_REPR, REDACTED, Abstraction, hashed_by_identity, type_name

try:
    from histeg.tracing._ctracer import untracked
except ImportError:  # not built, or built by another histeg: keys stay tracked (the collector is slower, not wrong)

    def untracked(key: tuple) -> tuple:
        return key


MAX_CACHED_VALUES = 1 << 17
"""Value ids are cached up to this many distinct values, then the cache starts over."""
HASHED_EXACT = frozenset({int, str, bytes, bool, type(None)})
"""Exact types whose equal values have equal abstractions, so ids can be cached by value (not float: 0.0 == -0.0)."""
BY_VALUE = frozenset({str, bool, type(None)})
"""Exact types whose ids ``by_value`` keeps, keyed by the value itself (never an int: ``1 == True``)."""
_CONTAINERS = frozenset({list, dict, tuple})
"""Exact containers: keyed by their content where it makes a key (the C collector walks the others itself)."""
MAX_KEY_LENGTH = 64
MAX_KEYED_TUPLE = 8
"""Tuples up to this length whose items are scalars or objects are cached by a key of their items."""


class ValueIds:
    """The value table of one trace file."""

    def __init__(self, write_value: Callable[[int, str, str | None], None], abstraction: Abstraction | None = None) -> None:
        self.abstraction = abstraction or Abstraction()
        self.by_type: dict[type, int] = {}
        """Types whose values all abstract alike: one id per type (read by the C collector too)."""
        self.by_value: dict[object, int] = {}
        """Exact strings up to ``MAX_KEY_LENGTH``, None, True and False: their ids (read by the C collector too)."""
        self._varying: set[type] = set()
        self._keyed: set[type] = set()
        """Types whose values are cached by ``Abstraction.value_key``."""
        self._objects: set[type] = set()
        """Objects of the program shown by their fields: cached by a key of their fields when they have one."""
        self._named: set[type] = set()
        """Functions and classes: cached by the names they show (``Abstraction.name_key``)."""
        self._unkeyed: set[type] = set()
        """Types no key of any kind caches (an exception, a set): each value is walked and interned, which the
        C collector does itself for them."""
        self._tuple_types: set[type] = set()
        """Tuple subclasses: cached by a key of their content and fields when both have one."""
        self._content_types: set[type] = set()
        """List, tuple and dict subclasses (an ``OrderedDict``): cached by ``Abstraction.content_key`` when they have one
        (a tuple subclass after its ``_tuple_types`` key, which it tries first)."""
        self._contents: dict[int, tuple[tuple, tuple]] = {}
        """Tuple subclass instances held in tuples (a lexer's token types), by identity: the key of their content, which
        is made of scalars and types and so never changes; the instance is kept so that its identity is not reused."""
        self._by_object: dict[tuple[type, object], int] = {}
        self._values: dict[tuple[str, str | None], int] = {}
        self._next = itertools.count(1)
        self._write_value = write_value
        self.redacted = self.intern((REDACTED, None))
        """The id of every secret when the abstraction has no key."""

    def native_tables(self) -> tuple[Any, ...]:
        """What the C collector reads to answer a keyed value's id without calling ``id_of`` (``keyed_id`` in _ctracer.c,
        in this order): the ids by key and what gives the id of a key not found yet, the classes keyed by their fields,
        the tuple subclasses and the container subclasses, the content keys of token types by identity, the abstraction's tables, the classes
        keyed by their names; then what abstracts and interns a value whose key is new without calling ``_by_key``
        (``interned_id``): the C walk (None: Python must), the type names, the ids by abstraction, the next id, the
        writer of value records (used where the collector gives none that takes them in batches: ``values_to``), and
        the bounds (long texts are shortened in C as ``cap`` does). It makes the keys ``_tuple_key``, ``fields_key``
        and ``name_key`` make, from what these say so far; anything they do not say yet comes here."""
        return (
            self._by_object, self._by_key, self._objects, self._tuple_types, self._content_types, self._contents, *self.abstraction.native_tables(), self._named, self._unkeyed,
            self.abstraction.native_text(), self.abstraction.native_names(), self._values, self._next, self._write_value,
            (MAX_CACHED_VALUES, MAX_REPR, MAX_ITEMS, MAX_KEY_LENGTH),
        )  # fmt: skip

    def intern(self, key: tuple[str, str | None]) -> int:
        found = self._values.get(key)
        if found is None:
            if len(self._values) >= MAX_CACHED_VALUES:
                self._values.clear()
                self._by_object.clear()
            found = self._values[key] = next(self._next)
            self._write_value(found, key[0], key[1])
        return found

    def _by_key(self, key: tuple, value: object) -> int:
        """The id of ``value``, abstracted once per ``key`` (equal keys, equal abstractions)."""
        found = self._by_object.get(key)
        if found is None:
            if len(self._by_object) >= MAX_CACHED_VALUES:
                self._by_object.clear()
            found = self._by_object[untracked(key)] = self.intern(self.abstraction.abstract(value))
        return found

    def _tuple_key(self, value: tuple, nested: bool = False) -> tuple | None:
        """A key equal for two tuples exactly when their abstractions are: each item a scalar cached by value
        (its type kept: ``1`` is not ``True``), an object a tuple shows by its type alone, or (one level down) a
        tuple subclass a tuple shows by its type and content (a lexer's token type); else None."""
        parts: list[object] = []
        for item in tuple.__iter__(value):
            item_cls = type(item)
            if type(item_cls) is not type and not hashed_by_identity(item_cls):  # a metaclass's hash could run project code
                return None
            if item_cls in HASHED_EXACT and not ((item_cls is str or item_cls is bytes) and len(item) > MAX_KEY_LENGTH):
                parts.append((item_cls, item))
            elif self.abstraction.shown_by_type(item_cls):  # a plain class compares by identity
                parts.append(item_cls)
            elif not nested and self.abstraction.shown_by_content(item_cls) and len(item) <= MAX_KEYED_TUPLE:
                known = self._contents.get(id(item))
                if known is not None and known[0] is item:  # the same tuple: its content cannot have changed
                    parts.append((item_cls, known[1]))
                    continue
                inner = self._tuple_key(item, nested=True)
                if inner is None:
                    return None
                if len(self._contents) < MAX_CACHED_VALUES:
                    self._contents[id(item)] = (item, inner)
                parts.append((item_cls, inner))
            else:
                return None
        return tuple(parts)

    def redacted_id(self, value: object) -> int:
        """The id of a secret: its keyed digest, so that equal secrets get equal ids and the value is never written."""
        return self.intern((self.abstraction.secret(value), None))

    def id_of(self, value: Any, divert: Callable[[Any, Callable[[], int]], int] | None = None, state: object = None) -> int:
        """The id of ``value``'s abstraction (any value of the traced program). ``divert(state, thunk)`` wraps the one case
        that runs project code, ``repr`` of a type the user named (the Python collector diverts its events with its thread state)."""
        cls = type(value)
        if cls is int and -INT_BIAS <= value < INT_BIAS:
            return (value + INT_BIAS) | INLINE_INT
        found = self.by_type.get(cls)
        if found is not None:
            return found
        abstract = self.abstraction.abstract
        if cls in HASHED_EXACT and not ((cls is str or cls is bytes) and len(value) > MAX_KEY_LENGTH):
            found = self._by_key((cls, value), value)
            if cls in BY_VALUE and len(self.by_value) < MAX_CACHED_VALUES:
                self.by_value[value] = found
            return found
        if cls is tuple and len(value) <= MAX_KEYED_TUPLE:  # a function's (index, object) result, say
            tuple_key = self._tuple_key(value)
            if tuple_key is not None:
                return self._by_key((tuple, tuple_key), value)
        if cls is list or cls is dict or cls is tuple:  # a parser's list of token dicts, say: by content
            content_key = self.abstraction.container_key(value, cls)
            if content_key is not None:
                return self._by_key(content_key, value)
        if cls in self._tuple_types and len(value) <= MAX_KEYED_TUPLE:  # a lexer's token type: content and fields
            content = self._tuple_key(value, nested=True)
            fields = self.abstraction.fields_key(value, cls) if content is not None else None
            if fields is not None:
                return self._by_key((cls, content, fields), value)
        if cls in self._content_types:  # an OrderedDict: the dict's content and the fields
            content_key = self.abstraction.content_key(value, cls)
            if content_key is not None:
                return self._by_key(content_key, value)
        if cls in self._objects:  # a parser's node, say: abstracted once per distinct set of fields
            fields = self.abstraction.fields_key(value, cls)
            if fields is not None:
                return self._by_key((object, cls, fields), value)
        if cls in self._keyed:  # a standard value type whose equal values abstract alike: once per value
            value_key = self.abstraction.value_key(value, cls)
            if value_key is not None:
                return self._by_key((cls, value_key), value)
        if cls in self._named:  # a function or a class: once per name
            name_key = self.abstraction.name_key(value, cls)
            if name_key is not None:
                return self._by_key(name_key, value)
        if cls not in self._varying:
            if self.abstraction.constant(cls):
                found = self.by_type[cls] = self.intern(abstract(value))
                return found
            self._varying.add(cls)
            if self.abstraction.keyed(cls):
                self._keyed.add(cls)
            if hashed_by_identity(cls) and self.abstraction.shown_by_content(cls):
                self._tuple_types.add(cls)
            if hashed_by_identity(cls) and self.abstraction.content_base(cls) is not None:
                self._content_types.add(cls)
            if hashed_by_identity(cls) and self.abstraction.shown_by_type(cls):
                self._objects.add(cls)
            if self.abstraction.named(cls):
                self._named.add(cls)
            keyed_by = (HASHED_EXACT, _CONTAINERS, self._keyed, self._tuple_types, self._content_types, self._objects, self._named)
            if not any(cls in kinds for kinds in keyed_by):
                self._unkeyed.add(cls)
        if divert is not None and self.abstraction.repr_types and type_name(cls) in self.abstraction.repr_types:
            return divert(state, lambda: self.intern(abstract(value)))
        return self.intern(abstract(value))
