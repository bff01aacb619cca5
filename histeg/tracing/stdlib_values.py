"""Standard-library value types shown by value, read without running a line of project code.

``datetime``, ``Decimal`` and their kind are C types with neither an instance
dictionary nor slots: read as "any other object", every date would compare
equal to every other date. Their state is read here through the base type's
own accessors (getset and member descriptors, C methods called unbound), so a
project subclass that overrides ``__repr__``, ``__str__`` or a property is
never called; such a subclass shows the base type's state plus its instance
dictionary (values.py adds the latter).

Types written in Python (``Fraction``, ``UUID``, the ``PurePath`` family,
``ipaddress``) are shown by value when the value's type is exactly the
standard library's: their slots are read directly, and ``ipaddress``'s own
``__str__`` (standard-library code that neither writes nor calls out) formats
addresses. Their subclasses keep the rule for any object (slots and
dictionary).

Nothing is imported here: a type is recognised only when its module is
already loaded, which it is whenever a value of it exists.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable
from itertools import islice
from typing import Any

Nested = Callable[[Any], str]
"""Abstraction of a value held inside another (within the caller's budget; an object shows its fields)."""
Text = Callable[[str], str]
"""A string's abstraction: path-neutral, quoted, capped."""
Formatter = Callable[[Any, Nested, Text], str]

MAX_BUFFER = 1 << 16
"""Buffers (memoryview, array) longer than this show their size only: copying them would cost more than the call."""
MAX_SHOWN = 64
"""Items of a deque copied for the walk (the walk's own budget shows fewer)."""


def _member(cls: type, name: str) -> Callable[[Any], Any]:
    """The getter of a descriptor defined on ``cls`` itself (never an override in a subclass)."""
    return cls.__dict__[name].__get__


def _time_of_day(hour: int, minute: int, second: int, microsecond: int) -> str:
    text = f"{hour:02d}:{minute:02d}:{second:02d}"
    return f"{text}.{microsecond:06d}" if microsecond else text


def _datetime_formatters(module: Any) -> dict[type, Formatter]:
    date, datetime, time, timedelta, timezone = module.date, module.datetime, module.time, module.timedelta, module.timezone
    dt_fields = [_member(datetime, name) for name in ("hour", "minute", "second", "microsecond")]
    t_fields = [_member(time, name) for name in ("hour", "minute", "second", "microsecond")]
    dt_tz, dt_fold, t_tz, t_fold = _member(datetime, "tzinfo"), _member(datetime, "fold"), _member(time, "tzinfo"), _member(time, "fold")
    td_fields = [_member(timedelta, name) for name in ("days", "seconds", "microseconds")]
    tz_offset, tz_name = timezone.utcoffset, timezone.tzname
    date_text, datetime_text, time_text = date.isoformat, datetime.isoformat, time.isoformat

    def zoned(text: str, tzinfo: Any, fold: int, nested: Nested) -> str:
        """The base type's own C ``isoformat`` where the zone is the standard library's fixed offset (whose C
        methods it calls); with a zone of the project's, the zone's state instead of a call of its methods."""
        if tzinfo is not None:
            text += f" {tz_name(tzinfo, None)}" if type(tzinfo) is timezone else f" tz={nested(tzinfo)}"
        return f"{text} fold=1" if fold else text

    def fmt_date(value: Any, nested: Nested, text: Text) -> str:
        return date_text(value)

    def fmt_datetime(value: Any, nested: Nested, text: Text) -> str:
        tzinfo = dt_tz(value)
        if tzinfo is None or type(tzinfo) is timezone:
            return zoned(datetime_text(value), tzinfo, dt_fold(value), nested)
        day = date_text(value)
        return zoned(f"{day}T{_time_of_day(*[get(value) for get in dt_fields])}", tzinfo, dt_fold(value), nested)

    def fmt_time(value: Any, nested: Nested, text: Text) -> str:
        tzinfo = t_tz(value)
        if tzinfo is None or type(tzinfo) is timezone:
            return zoned(time_text(value), tzinfo, t_fold(value), nested)
        return zoned(_time_of_day(*[get(value) for get in t_fields]), tzinfo, t_fold(value), nested)

    def fmt_timedelta(value: Any, nested: Nested, text: Text) -> str:
        days, seconds, microseconds = [get(value) for get in td_fields]
        return f"days={days}, seconds={seconds}, microseconds={microseconds}"

    def fmt_timezone(value: Any, nested: Nested, text: Text) -> str:
        offset = tz_offset(value, None)  # timezone cannot be subclassed: its own C methods
        return f"{fmt_timedelta(offset, nested, text)}, name={text(tz_name(value, None))}"

    return {date: fmt_date, datetime: fmt_datetime, time: fmt_time, timedelta: fmt_timedelta, timezone: fmt_timezone}


def _datetime_keys(module: Any) -> dict[type, Callable[[Any], Hashable | None]]:
    """Exact types whose equal values have equal texts, with the key that says so (None: abstract this one anew)."""
    dt_tz, dt_fold, t_tz, t_fold = (
        _member(module.datetime, "tzinfo"),
        _member(module.datetime, "fold"),
        _member(module.time, "tzinfo"),
        _member(module.time, "fold"),
    )

    def naive_datetime(value: Any) -> Hashable | None:  # aware ones are equal across zones, their texts are not
        return (value, dt_fold(value)) if dt_tz(value) is None else None

    def naive_time(value: Any) -> Hashable | None:
        return (value, t_fold(value)) if t_tz(value) is None else None

    return {module.date: _itself, module.timedelta: _itself, module.datetime: naive_datetime, module.time: naive_time}


def _itself(value: Any) -> Hashable:
    return value


def _decimal_formatters(module: Any) -> dict[type, Formatter]:
    to_text = module.Decimal.__str__  # C (or the standard library's Python): reads the digits, not an override

    def fmt_decimal(value: Any, nested: Nested, text: Text) -> str:
        return to_text(value)

    return {module.Decimal: fmt_decimal}


def _fraction_formatters(module: Any) -> dict[type, Formatter]:
    cls = module.Fraction
    numerator, denominator = _member(cls, "_numerator"), _member(cls, "_denominator")

    def fmt_fraction(value: Any, nested: Nested, text: Text) -> str:
        return f"{numerator(value)}/{denominator(value)}"

    return {cls: fmt_fraction}


def _uuid_formatters(module: Any) -> dict[type, Formatter]:
    number = _member(module.UUID, "int")

    def fmt_uuid(value: Any, nested: Nested, text: Text) -> str:
        hex_ = f"{number(value):032x}"
        return f"{hex_[:8]}-{hex_[8:12]}-{hex_[12:16]}-{hex_[16:20]}-{hex_[20:]}"

    return {module.UUID: fmt_uuid}


def _path_formatters(module: Any) -> dict[type, Formatter]:
    pure = module.PurePath
    raw = _member(pure, "_raw_paths") if "_raw_paths" in pure.__dict__ else None
    cached = _member(pure, "_str") if "_str" in pure.__dict__ else None

    def fmt_path(value: Any, nested: Nested, text: Text) -> str:
        """The path's text from its raw segments (the lazily computed ``str`` is not forced: no slot is written)."""
        try:
            return text(cached(value)) if cached is not None else "?"
        except AttributeError:  # not computed yet
            pass
        try:
            segments = raw(value) if raw is not None else None
        except AttributeError:
            segments = None
        if not segments:
            return text(".") if segments is not None else "?"
        windows = "Windows" in type(value).__name__
        separator = "\\" if windows else "/"
        joined = ""
        for segment in segments:
            segment = segment.replace("/", "\\") if windows else segment
            joined = segment if segment.startswith(separator) or not joined else f"{joined}{separator}{segment}"
        root = separator if joined.startswith(separator) else ""
        parts = [part for part in joined.split(separator) if part and part != "."]
        return text(root + separator.join(parts) or ".")

    names = ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath")
    return {getattr(module, name): fmt_path for name in names if isinstance(getattr(module, name, None), type)}


def _ipaddress_formatters(module: Any) -> dict[type, Formatter]:
    found: dict[type, Formatter] = {}
    for name in ("IPv4Address", "IPv6Address", "IPv4Network", "IPv6Network", "IPv4Interface", "IPv6Interface"):
        cls = getattr(module, name)
        found[cls] = _own_str(cls.__str__)
    return found


def _own_str(to_text: Callable[[Any], str]) -> Formatter:
    def fmt(value: Any, nested: Nested, text: Text) -> str:
        return to_text(value)

    return fmt


def _zoneinfo_formatters(module: Any) -> dict[type, Formatter]:
    cls = module.ZoneInfo
    key = _member(cls, "key")

    def fmt_zone(value: Any, nested: Nested, text: Text) -> str:
        return nested(key(value))

    return {cls: fmt_zone}


def _re_formatters(module: Any) -> dict[type, Formatter]:
    cls = module.Pattern
    pattern, flags = _member(cls, "pattern"), _member(cls, "flags")

    def fmt_pattern(value: Any, nested: Nested, text: Text) -> str:
        return f"{nested(pattern(value))}, flags={flags(value)}"

    return {cls: fmt_pattern}


def _array_formatters(module: Any) -> dict[type, Formatter]:
    cls = module.array
    typecode, to_list, size, itemsize = _member(cls, "typecode"), cls.tolist, cls.__len__, _member(cls, "itemsize")

    def fmt_array(value: Any, nested: Nested, text: Text) -> str:
        if size(value) * itemsize(value) > MAX_BUFFER:
            return f"{text(typecode(value))}, len={size(value)}"
        return f"{text(typecode(value))}, {nested(to_list(value))}"

    return {cls: fmt_array}


def _deque_formatters(module: Any) -> dict[type, Formatter]:
    cls = module.deque
    maxlen = _member(cls, "maxlen")

    def fmt_deque(value: Any, nested: Nested, text: Text) -> str:
        limit, size = maxlen(value), cls.__len__(value)
        items = list(islice(cls.__iter__(value), MAX_SHOWN))
        shown = nested(items) if size <= MAX_SHOWN else f"{nested(items)[:-1]}, \u2026+{size - MAX_SHOWN}]"
        return shown + (f", maxlen={limit}" if limit is not None else "")

    return {cls: fmt_deque}


def _builtin_formatters() -> dict[type, Formatter]:
    start, stop, step = (_member(range, name) for name in ("start", "stop", "step"))
    s_start, s_stop, s_step = (_member(slice, name) for name in ("start", "stop", "step"))
    whole = slice(None)

    def fmt_range(value: Any, nested: Nested, text: Text) -> str:
        return f"{start(value)}, {stop(value)}, {step(value)}"

    def fmt_slice(value: Any, nested: Nested, text: Text) -> str:
        return f"{nested(s_start(value))}, {nested(s_stop(value))}, {nested(s_step(value))}"

    def fmt_bytearray(value: Any, nested: Nested, text: Text) -> str:
        return nested(bytes(bytearray.__getitem__(value, whole)))  # an exact copy: no override of the subclass runs

    def fmt_memoryview(value: Any, nested: Nested, text: Text) -> str:
        try:
            if memoryview.__dict__["nbytes"].__get__(value) > MAX_BUFFER:
                return f"nbytes={memoryview.__dict__['nbytes'].__get__(value)}"
            return f"{nested(memoryview.tobytes(value))}, format={text(memoryview.__dict__['format'].__get__(value))}"
        except ValueError:  # released
            return "released"

    return {range: fmt_range, slice: fmt_slice, bytearray: fmt_bytearray, memoryview: fmt_memoryview}


_LOADERS: dict[str, Callable[[Any], dict[type, Formatter]]] = {
    "datetime": _datetime_formatters,
    "decimal": _decimal_formatters,
    "fractions": _fraction_formatters,
    "uuid": _uuid_formatters,
    "pathlib": _path_formatters,
    "ipaddress": _ipaddress_formatters,
    "re": _re_formatters,
    "array": _array_formatters,
    "collections": _deque_formatters,
    "zoneinfo": _zoneinfo_formatters,
}
"""Module -> the formatters of its value types, made when the module is first seen loaded."""
C_TYPES_BY_MODULE = {
    "datetime": ("datetime", "date", "time", "timedelta"),
    "decimal": ("Decimal",),
    "array": ("array",),
    "collections": ("deque",),
}
"""Types whose subclasses show the base type's state: their accessors are C and cannot be overridden."""
SUBCLASSABLE_BUILTINS = (bytearray,)


class StandardValues:
    """Which types are standard-library value types, and how each shows its value (one per process)."""

    def __init__(self) -> None:
        self._keys: dict[type, Callable[[Any], Hashable | None]] = {}
        self._formatters: dict[type, Formatter] = _builtin_formatters()
        self._loaded: set[str] = set()
        self._bases: list[type] = list(SUBCLASSABLE_BUILTINS)

    def _load(self) -> None:
        for name, loader in _LOADERS.items():
            if name in self._loaded:
                continue
            module = sys.modules.get(name)
            if module is None:
                continue
            try:
                self._formatters.update(loader(module))
                if name == "datetime":
                    self._keys.update(_datetime_keys(module))
            except (AttributeError, KeyError):  # a Python whose module lacks what is read here: its values show as objects
                pass
            self._loaded.add(name)
            self._bases.extend(
                getattr(module, type_name)
                for type_name in C_TYPES_BY_MODULE.get(name, ())
                if isinstance(getattr(module, type_name, None), type)
            )

    def classify(self, cls: type, mro: tuple[type, ...]) -> tuple[bool, type | None]:
        """``(exact, base)``: whether ``cls`` is itself a value type, else the C value type it derives from (or None)."""
        if len(self._loaded) < len(_LOADERS):
            self._load()
        if cls in self._formatters:
            return True, cls
        for klass in mro:
            if klass in self._bases:
                return False, klass
        return False, None

    def keyed(self, cls: type) -> bool:
        return cls in self._keys

    def key(self, value: Any, cls: type) -> Hashable | None:
        """A key under which ``value``'s id can be cached: equal keys, equal texts (None: no such key)."""
        found = self._keys.get(cls)
        return None if found is None else found(value)

    def format(self, value: Any, cls: type, nested: Nested, text: Text) -> str:
        """The value's state as read through ``cls``'s own accessors (``cls`` is the value's type or its C base)."""
        return self._formatters[cls](value, nested, text)
