"""Value abstraction: what a trace keeps of a parameter, return value or exception.

The observer must not change the observed, so no line of the project's code
runs here: no ``__repr__``, ``__eq__``, ``__hash__``, ``__len__``, ``__iter__``,
property or other descriptor of a project type, and no generator or iterator
is advanced. Everything is read through the builtin types' own slots:

* exact builtin scalars by value (long text capped and hashed);
* builtin containers (and the builtin storage of their subclasses) walked
  structurally within a budget, sets in a sorted order so that hash seeds
  do not matter;
* enum members, functions, methods, classes and modules by qualified name;
* exceptions by their ``args``;
* standard-library value types (dates, decimals, paths, UUIDs …) by value,
  through their own accessors (stdlib_values.py);
* any other object as its type plus a shallow view of its instance
  dictionary and slots, read through the builtin descriptors of ``object``
  (an attribute holding a class shows which one, ``type(pkg.Node)``).

Strings are made path-neutral (the run directory, the temporary directory and
the home directory become ``<root>``, ``<tmp>``, ``<home>``, random temporary
names and memory addresses are scrubbed), and secrets are written as keyed
digests: a changed secret still diverges, its value never reaches a file.
``repr`` mode calls ``repr()``, for the types the user names only.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from histeg.tracing.stdlib_values import StandardValues

try:
    from histeg.tracing import _walk as _native_walk
except ImportError:  # not built (no compiler at install time): the walk stays in Python
    _native_walk = None  # type: ignore[assignment]  # the module's name stands for "not built"

WALK_INTERFACE = 3
"""What ``_walk.INTERFACE`` must be (the tables ``walk_tables`` hands it); a build from another histeg counts as not built."""


def native_walk() -> bool:
    """Whether the C walk (``_walk.c``, with ``Abstraction._walk`` as its reference) is built for this histeg."""
    return _native_walk is not None and getattr(_native_walk, "INTERFACE", None) == WALK_INTERFACE


_inline_namespace: Callable[[Any], dict[str, Any] | None] | None = _native_walk.inline_namespace if native_walk() else None


def instance_namespace(holder: Callable[[Any], Any], value: Any) -> Any:
    """What ``holder`` (a class's ``__dict__`` getter) answers for ``value``, without making the instance's dictionary
    where the interpreter still keeps its attributes inline: a dictionary made by reading ``__dict__`` stays, and on
    3.12 the program's own reads of that object's attributes are then about four times slower."""
    found = _inline_namespace(value) if _inline_namespace is not None else None
    return found if found is not None else holder(value)


MODES = ("structural", "repr", "off")
VALUES_FORMAT = 3
"""How values are written; traces written another way do not compare with these (a traces step input). 2: a
standard-library value held in an object's attribute is written with its type, as inside a container. 3: a class held
in an object's attribute is written as ``type(pkg.Name)``, not as ``type``."""
MAX_REPR = 120
"""Longest text kept verbatim; longer ones keep a prefix and a hash of the whole."""
MAX_ITEMS = 64
"""Items (container elements, attributes) one value's abstraction visits at most."""
MAX_DEPTH = 3
"""Nesting levels of builtin containers walked; deeper ones show as their type and length."""
DEFAULT_REDACT = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "credential",
    "credentials",
    "api_key",
    "apikey",
    "access_key",
    "secret_key",
    "private_key",
    "=token",
    "auth_token",
    "api_token",
    "access_token",
    "refresh_token",
    "bearer_token",
    "session_token",
    "id_token",
    "csrf_token",
)
"""Names of secrets, matched by word segments (``redacts``): ``=token`` is the name ``token`` alone,
so ``api_token`` is a secret and ``format_token``, ``tokens`` and ``tokenize`` are not."""
REDACTED = "<redacted>"
"""A secret's value when no key is at hand (a bare trace config): equal for every secret."""
DIGEST_LENGTH = 12
"""Hex digits kept of a secret's HMAC-SHA256: enough that two values of one secret never look equal by chance."""

_FunctionType = type(lambda: None)
_BuiltinType = type(len)
_BoundMethod = type(type("_C", (), {"m": lambda self: None})().m)
_ModuleType = type(sys)
_GetSet = type(_FunctionType.__dict__["__name__"])
_Member = type(type.__dict__["__dictoffset__"])
_mro = type.__dict__["__mro__"].__get__
_type_dict = type.__dict__["__dict__"].__get__
_type_module = type.__dict__["__module__"].__get__
_type_qualname = type.__dict__["__qualname__"].__get__
_exc_args = BaseException.__dict__["args"].__get__
_func_module = _FunctionType.__dict__["__module__"].__get__
_func_qualname = _FunctionType.__dict__["__qualname__"].__get__

_PLAIN: dict[type, Callable[[Any], Any]] = {
    int: int.__int__,
    float: float.__float__,
    complex: complex.__complex__,
    str: str.__str__,
    bytes: bytes.__bytes__,
}
"""The base type's own conversion: an exact copy of a subclass instance's builtin value, no override runs."""
SCALARS = frozenset({int, float, bool, complex, type(None), str, bytes})
MAX_CACHED_TEXTS = 1 << 14
"""Texts and names whose neutral form or redaction is remembered (the cache stops growing there)."""
_STR, _SCALAR, _ENUM, _FUNCTION, _BOUND, _BUILTIN, _MODULE, _CLASS, _EXCEPTION, _SUBCLASS, _OBJECT, _STANDARD = (
    "str",
    "scalar",
    "enum",
    "function",
    "bound method",
    "builtin",
    "module",
    "class",
    "exception",
    "builtin subclass",
    "object",
    "standard value",
)
_SHOWN_IN_FIELDS = frozenset({_STR, _SCALAR, _ENUM, _FUNCTION, _MODULE, _STANDARD})
"""Kinds an attribute shows by content in a shallow view (builtin containers too); other objects by type. Standard
values and classes show both (``_fields``): by type a class would be ``type`` whichever class the object holds."""


_STR_ONLY = frozenset({str})
_MAX_KEYED_TEXT = 64
"""Strings up to this length are part of a field key as they are (longer ones are abstracted each time)."""
_MAX_KEYED_DEPTH = MAX_DEPTH
"""Levels of nested containers a key follows item by item (a parser's list of token dicts is two): as many as texts
show; deeper ones are part of it by type and length, as texts show them."""
_MAX_KEYED_FIELD = 512
"""An attribute's string up to this length is part of its object's key (a parser's node holds the text it spans)."""
_UNSET = object()
"""An unset slot, in a field key."""
CONTAINERS = (list, tuple, dict, set, frozenset)
BUILTIN_BASES = frozenset({*CONTAINERS, str, bytes, int, float, complex})
"""Bases whose content ``_builtin`` reads itself; other bases are standard-library value types."""
_CONTENT_BASES = (list, tuple, dict)
"""The containers whose subclasses a key covers: by the base's content (``content_base``)."""


def identity_metaclass(meta: type) -> bool:
    """Whether classes made by ``meta`` hash and compare as ``type`` does, by identity, so that hashing one runs no
    project code: ``type`` itself, or a metaclass that keeps its hash and comparisons (``abc.ABCMeta``, a registry's)."""
    return meta is type or (
        type(meta) is type and meta.__hash__ is type.__hash__ and meta.__eq__ is type.__eq__ and meta.__ne__ is type.__ne__
    )


def hashed_by_identity(cls: type) -> bool:
    """Whether the class ``cls`` can be part of a key (its metaclass is an ``identity_metaclass``)."""
    return identity_metaclass(type(cls))


def type_name(cls: type) -> str:
    """``int`` for builtins, ``module.Qual`` for everything else, read without the metaclass."""
    try:
        module = _type_module(cls)
        qualname = _type_qualname(cls)
    except Exception:  # noqa: BLE001  a broken class must not break the traced program
        return "<unnamed type>"
    return qualname if module == "builtins" else f"{module}.{qualname}"


def cap(text: str) -> str:
    """Keep short texts; replace long ones by a prefix and a digest of the whole."""
    if len(text) <= MAX_REPR:
        return text
    return f"{text[: MAX_REPR // 2]}\u2026[len={len(text)} hash={_digest(text)}]"


def _digest(value: str | bytes) -> str:
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    return f"{zlib.crc32(data) | (zlib.adler32(data) << 32):016x}"


_PATTERNS: dict[str, Any] = {}
_TEMP_NAME = None
_PYTEST_DIR = None
_URL_CREDENTIALS = None


def name_segments(name: str) -> tuple[str, ...]:
    """A name's words, lower case: ``apiToken`` and ``API_TOKEN`` are ``('api', 'token')``. A CapWords
    name (``Token``, ``PasswordField``) names a class, not a value, and has none."""
    if name[:1].isupper() and any(char.islower() for char in name):
        return ()
    return tuple(part.lower() for part in _compiled(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+").findall(name))


def secret_pattern(pattern: str) -> tuple[bool, tuple[str, ...]]:
    """``(whole name, words)``: ``=token`` matches the name ``token`` alone; ``api_key`` any name
    whose words include ``api`` ``key`` in a row (``x-api-key``, ``apiKey``, ``API_KEY``)."""
    whole = pattern.startswith("=")
    text = pattern[1:] if whole else pattern
    return whole, tuple(part for part in text.replace("-", "_").lower().split("_") if part)


def _matches(words: tuple[str, ...], pattern: tuple[bool, tuple[str, ...]]) -> bool:
    whole, wanted = pattern
    if not wanted:
        return False
    if whole:
        return words == wanted
    size = len(wanted)
    return any(words[start : start + size] == wanted for start in range(len(words) - size + 1))


def scrub(text: str) -> str:
    """Everything that differs from run to run by construction in a ``repr``: temporary names,
    then memory addresses (``0x7f3a...``) that stand alone, so a temporary name containing
    ``0x`` stays one name."""
    text = scrub_temporary(text)
    if "0x" not in text:
        return text
    return _compiled(r"(?<![0-9A-Za-z_\u2026])0x[0-9a-fA-F]+").sub("0x\u2026", text)


def scrub_addresses(text: str) -> str:
    """Memory addresses a ``repr`` printed into a text (``<Token 'x' at 0x7F3D…>``, an assertion message):
    ``at 0x…`` is an address by the idiom of every default ``repr``; a bare ``0x1F`` is data and stays."""
    if "at 0x" not in text:
        return text
    return _compiled(r"(?<=\bat )0x[0-9a-fA-F]{4,}\b").sub("0x\u2026", text)


def _compiled(pattern: str) -> Any:
    """A regular expression compiled when first needed: ``re`` is not imported at a traced program's start."""
    found = _PATTERNS.get(pattern)
    if found is None:
        import re

        found = _PATTERNS[pattern] = re.compile(pattern)
    return found


def scrub_temporary(text: str) -> str:
    """The random parts of temporary names (``tempfile``'s ``tmpk3j_x9a2``, pytest's ``pytest-17``).
    Not addresses: in a plain string ``0x1F`` is data, only a ``repr`` prints addresses."""
    if "tmp" not in text and "pytest-" not in text:
        return text
    global _TEMP_NAME, _PYTEST_DIR
    if _TEMP_NAME is None:
        import re

        # a path's part, or a whole string (``pathlib`` keeps parts as separate strings)
        _TEMP_NAME = re.compile(r"(?:(?<=[/\\])|^)tmp[a-z0-9_]{8}(?![a-z0-9_])")
        _PYTEST_DIR = re.compile(r"(?:(?<=[/\\])|^)pytest-\d+(?=[/\\]|$)")
    return _PYTEST_DIR.sub("pytest-\u2026", _TEMP_NAME.sub("tmp\u2026", text))


def temporary_directory() -> str:
    """``tempfile.gettempdir()``'s answer from the environment alone (importing tempfile costs at start-up)."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        candidate = os.environ.get(name)
        if candidate and os.path.isdir(candidate):
            return os.path.abspath(candidate)
    return "/tmp" if os.path.isdir("/tmp") else os.getcwd()


def placeholders(root: str | None) -> list[tuple[str, str]]:
    """``(prefix, placeholder)`` pairs, longest prefix first: run directory, temp directory, home."""
    found: dict[str, str] = {}
    for placeholder, path in (("<root>", root), ("<tmp>", temporary_directory()), ("<home>", os.path.expanduser("~"))):
        if not path or path in ("/", "~"):
            continue
        for variant in (os.path.abspath(path), os.path.realpath(path)):
            found.setdefault(variant.rstrip("/\\"), placeholder)
    return sorted(found.items(), key=lambda item: -len(item[0]))


def _whole_path(prefix: str) -> Any:
    """Matches ``prefix`` only as a whole path or a leading part of one: ``/tmp`` in ``/tmp/x``,
    not in ``/tmp/tmpk3j_x9a2`` a second time, nor in ``/tmpfs``."""
    import re

    return re.compile(re.escape(prefix) + r"(?![\w.-])")


class Abstraction:
    """One process's value abstraction: mode, the types shown by ``repr``, redaction, placeholders."""

    def __init__(
        self,
        mode: str = "structural",
        repr_types: Iterable[str] = (),
        redact: Sequence[str] = DEFAULT_REDACT,
        root: str | None = None,
        key: bytes | None = None,
        native: bool = True,
    ) -> None:
        """``key``: the output directory's redaction key; secrets are its HMAC digests (without one, all alike).
        ``native``: walk values in C where it is built (``native=False`` keeps the Python reference, for the parity tests)."""
        if mode not in MODES:
            raise ValueError(f"values mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.repr_types = frozenset(repr_types) if mode == "repr" else frozenset()
        self.redact = tuple(secret_pattern(pattern) for pattern in redact)
        self.key = key
        self._standard = StandardValues()
        self.paths = [(prefix, placeholder, _whole_path(prefix)) for prefix, placeholder in placeholders(root)]
        self._layouts: dict[type, tuple[Any, tuple[tuple[str, Any, Any], ...]]] = {}
        self._kinds: dict[type, tuple[str, type | None]] = {}
        self._names: dict[type, str] = {}
        self._redacted_names: dict[str, bool] = {}
        self._neutral: dict[str, str] = {}
        self._secrets: dict[str, str] = {}
        self._plans: dict[tuple[str, ...], tuple[tuple[int, str, bool], ...]] = {}
        self._plain: dict[tuple[str, ...], bool] = {}
        self._slot_name_tuples: dict[type, tuple[str, ...]] = {}
        self._strings: dict[str, str] = {}
        self._shown_types: dict[type, bool] = {}
        self._content_bases: dict[type, type[Any] | None] = {}
        self._text: Callable[[Any, type, list[int], int], str | None] = self._walk
        """The walk of one value on a shared budget: the C walk where built, which hands Python every shape it does not walk."""
        if native and native_walk():
            self._text = _native_walk.Walker(self.walk_tables()).text

    # -- what callers ask -------------------------------------------------------------

    def abstract(self, value: Any) -> tuple[str, str | None]:
        """``(type name, text or None)``; never raises, never runs project code."""
        cls = type(value)
        name = self._names.get(cls) or self.type_name(cls)
        try:
            if self.repr_types and name in self.repr_types:
                return name, self._repr(value)
            text = self._text(value, cls, [MAX_ITEMS], 0)
            return name, None if text is None else cap(text)
        except Exception as exc:  # noqa: BLE001  a defect here must not break the traced program
            return name, f"<abstraction failed: {type(exc).__name__}>"

    def shown_by_type(self, cls: type) -> bool:
        """Whether a value of ``cls`` held in a container shows as its type name alone (an object of the project)."""
        found = self._shown_types.get(cls)
        if found is None:
            kind, _ = self._kinds.get(cls) or self._classify(cls)
            found = self._shown_types[cls] = kind is _OBJECT and self.type_name(cls) not in self.repr_types
        return found

    def content_base(self, cls: type) -> type[Any] | None:
        """The builtin list, tuple or dict whose content a value of ``cls`` held in a container shows after its type name
        (``collections.OrderedDict({...})``): ``cls`` a subclass of one (its fields show only at the top), not one the user
        asked to see by ``repr``; None for any other class."""
        if cls in self._content_bases:
            return self._content_bases[cls]
        kind, base = self._kinds.get(cls) or self._classify(cls)
        shown = kind is _SUBCLASS and base in _CONTENT_BASES and cls is not base and self.type_name(cls) not in self.repr_types
        found = self._content_bases[cls] = base if shown else None
        return found

    def shown_by_content(self, cls: type) -> bool:
        """Whether a value of ``cls`` held in a container shows as its type and builtin content alone: a subclass of
        ``tuple`` (a lexer's token type), as ``content_base`` says."""
        return self.content_base(cls) is tuple

    def native_tables(self) -> tuple[Any, ...]:
        """What ``fields_key`` and the questions above have learnt so far, for the C collector to make the same keys
        (``keyed_id`` in _ctracer.c, in this order): layouts, names without secrets, kinds, the kinds a field shows by
        content, the unset-slot marker, the answers of ``shown_by_type`` and of ``content_base``, the names checked for
        secrets."""
        return (
            self._layouts,
            self._plain,
            self._kinds,
            _SHOWN_IN_FIELDS,
            _UNSET,
            self._shown_types,
            self._content_bases,
            self._redacted_names,
        )

    def native_text(self) -> Any:
        """The C walk, for the C collector to abstract a new value as ``abstract`` does; None where ``abstract`` does more
        than walk (a user's repr types) or the walk is Python's."""
        return self._text if self._text != self._walk and not self.repr_types else None

    def native_names(self) -> dict[type, str]:
        """The type names known so far (``type_name``'s cache)."""
        return self._names

    def walk_tables(self) -> tuple[Any, ...]:
        """What the C walk reads and calls (``Walker`` in _walk.c, in this order): the caches it reads (kinds, type names,
        string texts, layouts, field plans, names checked for secrets), the kinds it walks itself, then the methods that
        answer (and fill the caches) where it does not know: the Python walk of one value first."""
        return (
            self._kinds, self._names, self._strings, self._layouts, self._plans, self._redacted_names,
            _STR, _SCALAR, _OBJECT, _SUBCLASS, _STANDARD, _CLASS, _FUNCTION, _BOUND, _EXCEPTION, _SHOWN_IN_FIELDS,
            self._walk, self._classify, self.type_name, self._string, cap, self._layout, self._plan, self.redacts, self.secret,
        )  # fmt: skip

    def fields_key(self, value: Any, cls: type) -> tuple | None:
        """A key equal for two instances of ``cls`` exactly when ``_fields`` shows them alike: the field names (instance
        dictionary, then slots), then per field its type, followed by its value for a string, bool or int; an exact list,
        tuple or dict by its ``_container_parts``; a class by itself; an object by its type alone. None when a field is anything else or a secret (its digest needs the value). The type says
        how many entries a field has, so two equal keys hold equal fields."""
        holder, slots = self._layout(cls)
        names: tuple = ()
        items: list[Any] = []
        if holder is not None:
            try:
                namespace = instance_namespace(holder, value)
            except Exception:  # noqa: BLE001  as in _fields: an instance without its dict is abstracted the long way
                return None
            if type(namespace) is not dict:
                return None
            names, items = tuple(namespace), list(dict.values(namespace))
        if slots:
            for _, getter, _member in slots:
                try:
                    items.append(getter(value))
                except Exception:  # noqa: BLE001  an unset slot: _fields leaves it out
                    items.append(_UNSET)
            names += self._slot_names(cls, slots)
        if not self._plain_names(names):
            return None
        parts: list[object] = [names]
        append = parts.append
        kinds = self._kinds
        for item in items:
            item_cls = type(item)
            if item_cls is str:
                if len(item) > _MAX_KEYED_FIELD:
                    return None
                append(str)
                append(item)
            elif item is None or item is _UNSET:
                append(item)
            elif item_cls is bool or item_cls is int:
                append(item_cls)
                append(item)
            elif not hashed_by_identity(item_cls):  # hashing the class could run project code
                return None
            else:
                item_kind, item_base = kinds.get(item_cls) or self._classify(item_cls)
                if item_kind is _CLASS:  # by itself, as its name shows it, when hashing it runs no project code
                    if not identity_metaclass(item_cls):
                        return None
                    append(item_cls)
                    append(item)
                elif item_kind in _SHOWN_IN_FIELDS:
                    return None
                elif item_cls is not item_base:  # an object: by its type alone
                    append(item_cls)
                elif (item_cls is not list and item_cls is not tuple and item_cls is not dict) or not self._container_parts(
                    parts, item, item_cls, 1, [MAX_ITEMS]
                ):  # a container: its type, length and the items it can show
                    return None
        return tuple(parts)

    def _slot_names(self, cls: type, slots: tuple[tuple[str, Any, Any], ...]) -> tuple[str, ...]:
        found = self._slot_name_tuples.get(cls)
        if found is None:
            found = self._slot_name_tuples[cls] = tuple(name for name, _, _ in slots)
        return found

    def _plain_names(self, names: tuple) -> bool:
        """Whether every field name is a string and none names a secret (remembered per set of names)."""
        found = self._plain.get(names) if set(map(type, names)) <= _STR_ONLY else False
        if found is None:
            found = not any(self.redacts(name) for name in names)
            if len(self._plain) < MAX_CACHED_TEXTS:
                self._plain[names] = found
        return found

    def container_key(self, value: list | tuple | dict, cls: type) -> tuple | None:
        """A key equal for two exact lists, tuples or dicts exactly when their texts are alike wherever they are
        shown (``_container_parts``), or None. One flat tuple: a parser's list of token dicts has a hundred parts,
        and a tuple each would be a hundred objects more for the garbage collector to visit, per key kept."""
        parts: list[object] = []
        return tuple(parts) if self._container_parts(parts, value, cls, 1, [MAX_ITEMS]) else None

    def content_key(self, value: Any, cls: type) -> tuple | None:
        """A key equal for two instances of a list, tuple or dict subclass (an ``OrderedDict``) exactly when their texts
        are: the base's content as ``container_key`` keys it, then the fields (shown after it at the top) as
        ``fields_key`` does; or None. Only the base's own storage is read, as the walk reads it."""
        base = self.content_base(cls)
        parts: list[object] = []
        if base is None or not self._container_parts(parts, value, base, 1, [MAX_ITEMS]):
            return None
        fields = self.fields_key(value, cls)
        return (cls, tuple(parts), fields) if fields is not None else None

    def _container_parts(self, parts: list[object], value: Any, cls: type[Any], depth: int, budget: list[int]) -> bool:
        """Appends the type, the length, and the items a text can show: a dict's entries as their names (exact strings
        that name no secret) and items; a scalar as its type and value, an object as its type (as ``_nested`` shows it),
        a bound method as its owner's type and its function's name, a container the same way, ``_MAX_KEYED_DEPTH`` levels
        deep and below that as its type and length alone (a text shows no more of it there), a subclass of one as its
        type and then the same (``Type([...])``). Items are taken while ``budget`` lasts, spent as the walk spends its
        own at least (one per item, name and container): the walk's budget is never larger where a key starts (a fresh
        ``MAX_ITEMS``), so a key holds every item its text shows, and a parser's table of many dicts makes a key no
        larger than its text. Each part says how many follow, and what came before says whether the budget lets the next
        in, so equal parts are equal containers. ``cls`` is the builtin list, tuple or dict whose storage is read
        (``value`` may be of a subclass: its own methods never run). False when an item has no key."""
        exact = type(value) is cls
        parts.append(cls)
        parts.append(len(value) if exact else cls.__len__(value))
        if cls is dict:
            for name, item in dict.items(value):
                if budget[0] <= 0:
                    break
                if type(name) is not str or len(name) > _MAX_KEYED_TEXT or self.redacts(name):
                    return False
                budget[0] -= 1
                parts.append(name)
                if not self._item_parts(parts, item, depth, budget):
                    return False
            return True
        for item in value if exact else cls.__iter__(value):
            if budget[0] <= 0:
                break
            if not self._item_parts(parts, item, depth, budget):
                return False
        return True

    def _item_parts(self, parts: list[object], item: Any, depth: int, budget: list[int]) -> bool:
        """One item of a container at ``depth`` (``_container_parts``): a container or a subclass of one (its type first,
        ``collections.OrderedDict({...})``) by its base's content, or below what texts show by the base and its length
        (``<list len=2>``)."""
        budget[0] -= 1
        item_cls = type(item)
        if item is None or item_cls is bool or item_cls is int or (item_cls is str and len(item) <= _MAX_KEYED_TEXT):
            parts.append(item_cls)
            parts.append(item)
            return True
        base: type[Any] = item_cls
        if item_cls is not list and item_cls is not tuple and item_cls is not dict:
            if item_cls is _BoundMethod and type(item.__func__) is _FunctionType and hashed_by_identity(type(item.__self__)):
                parts.append(item_cls)  # a visitor's method cache: shown as its owner's type and the function's name
                parts.append(type(item.__self__))
                parts.append(_func_qualname(item.__func__))
                return True
            if not hashed_by_identity(item_cls):  # hashing the class could run project code
                return False
            if self.shown_by_type(item_cls):
                parts.append(item_cls)
                return True
            content_base = self.content_base(item_cls)
            if content_base is None:
                return False
            base = content_base
            parts.append(item_cls)
        if depth >= _MAX_KEYED_DEPTH or budget[0] <= 0:
            parts.append(base)
            parts.append(base.__len__(item))
            return True
        return self._container_parts(parts, item, base, depth + 1, budget)

    def keyed(self, cls: type) -> bool:
        """Whether values of ``cls`` may have a ``value_key``."""
        return self._standard.keyed(cls)

    def value_key(self, value: Any, cls: type) -> Any:
        """A key equal for two values exactly when their abstractions are (a naive datetime, a date), or None."""
        return self._standard.key(value, cls)

    def named(self, cls: type) -> bool:
        """Whether a value of ``cls`` shows as the names it holds alone, so that ``name_key`` keys it: a function (its module
        and qualified name) or a class whose metaclass hashes and compares by identity (its name, read once per class)."""
        kind, _ = self._kinds.get(cls) or self._classify(cls)
        if self.type_name(cls) in self.repr_types:
            return False
        if kind is _FUNCTION:
            return True
        return kind is _CLASS and identity_metaclass(cls)

    @staticmethod
    def name_key(value: Any, cls: type) -> tuple | None:
        """A key equal for two values of a ``named`` class exactly when their texts are (None: no such key)."""
        if cls is not _FunctionType:
            return (cls, value)  # hashed by identity: a class's name is read once (``type_name``)
        module, qualname = _func_module(value), _func_qualname(value)
        if (module is None or type(module) is str) and type(qualname) is str:
            return (cls, module, qualname)
        return None

    def constant(self, cls: type) -> bool:
        """Whether every instance of ``cls`` abstracts alike (no state visible): one id per type."""
        kind, _ = self._kinds.get(cls) or self._classify(cls)
        if kind is not _OBJECT or self.type_name(cls) in self.repr_types:
            return False
        holder, slots = self._layout(cls)
        return holder is None and not slots

    def redacts(self, name: str) -> bool:
        """Whether ``name`` (a parameter, attribute, dict key or function) names a secret, by its words.
        A function's name counts for its return value: ``api_token()`` returns one, and as a digest
        the value still compares, so nothing is lost where the name misleads (``check_password``)."""
        found = self._redacted_names.get(name)
        if found is None:
            words = name_segments(name)
            found = bool(words) and any(_matches(words, pattern) for pattern in self.redact)
            if len(self._redacted_names) < MAX_CACHED_TEXTS:
                self._redacted_names[name] = found
        return found

    def secret(self, value: Any) -> str:
        """``<redacted #1a2b3c4d5e6f>``: the keyed digest of the value's structural form (no ``repr`` runs)."""
        if self.key is None:
            return REDACTED
        cls = type(value)
        try:
            text = self._text(value, cls, [MAX_ITEMS], 0)
        except Exception as exc:  # noqa: BLE001  a defect here must not break the traced program
            text = f"<abstraction failed: {type(exc).__name__}>"
        return self.secret_text(f"{self.type_name(cls)}\x00{text}")

    def secret_text(self, text: str) -> str:
        """The digest of a secret's text, remembered: a lexer passes the same ``token`` to many calls."""
        if self.key is None:
            return REDACTED
        found = self._secrets.get(text)
        if found is None:
            import hmac

            digest = hmac.new(self.key, text.encode("utf-8", "surrogatepass"), "sha256").hexdigest()
            found = f"<redacted #{digest[:DIGEST_LENGTH]}>"
            if len(self._secrets) < MAX_CACHED_TEXTS:
                self._secrets[text] = found
        return found

    def neutral(self, text: str) -> str:
        """Paths replaced by placeholders, random temporary names scrubbed, URL passwords redacted."""
        found = self._neutral.get(text)
        if found is None:
            found = self._neutral_uncached(text)
            if len(self._neutral) < MAX_CACHED_TEXTS:
                self._neutral[text] = found
        return found

    def _neutral_uncached(self, text: str) -> str:
        if "/" not in text and "\\" not in text:  # no path and no URL (a parser's source text): one scan, not one per prefix
            return scrub_addresses(scrub_temporary(text))
        for prefix, placeholder, whole in self.paths:
            if prefix in text:
                text = whole.sub(placeholder, text)
        if "://" in text and "@" in text:
            global _URL_CREDENTIALS
            if _URL_CREDENTIALS is None:
                import re

                _URL_CREDENTIALS = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)([^/\s@]*)@")
            text = _URL_CREDENTIALS.sub(lambda found: f"{found.group(1)}{self.secret_text(found.group(2))}@", text)
        return scrub_addresses(scrub_temporary(text))

    # -- the walk ---------------------------------------------------------------------

    def _walk(self, value: Any, cls: type, budget: list[int], depth: int) -> str | None:
        """The text of ``value`` at ``depth``, spending ``budget``: the reference of the C walk, which calls it for what
        it does not walk itself (recursion goes through ``_text``, so a nested value may be walked in C again)."""
        budget[0] -= 1
        kind, base = self._kinds.get(cls) or self._classify(cls)
        if kind is _STR:
            return self._string(value)
        if kind is _SCALAR:
            return self._bytes(value) if cls is bytes else _scalar(value, cls)
        if kind is _OBJECT:
            return self._fields(value, cls, budget, depth) if depth == 0 else None
        if kind is _STANDARD:
            return self._standard_value(value, cls, budget, depth)
        if kind is _ENUM:
            member = self._instance_dict(value, cls)
            return f"{self.type_name(cls)}.{member.get('_name_')}" if member is not None else self.type_name(cls)
        if kind is _FUNCTION:
            return f"{_func_module(value)}:{_func_qualname(value)}"
        if kind is _BOUND:
            function = value.__func__
            owner = self.type_name(type(value.__self__))
            return f"{owner}.{_func_qualname(function)}" if type(function) is _FunctionType else owner
        if kind is _BUILTIN:
            return f"{value.__module__ or 'builtins'}:{value.__qualname__}" if type(value.__qualname__) is str else None
        if kind is _MODULE:
            module_name = object.__getattribute__(value, "__dict__").get("__name__")
            return module_name if type(module_name) is str else None
        if kind is _CLASS:
            return self.type_name(value)
        parts: list[str] = []
        if base is not None:  # a builtin container or scalar, or a subclass of one
            if depth >= MAX_DEPTH or budget[0] <= 0:
                size = _size(value, base)
                return f"<{base.__name__} len={size}>" if size is not None else f"<{base.__name__}>"
            parts.append(self._builtin(value, base, budget, depth))
            if cls is base:
                return parts[0]
        if kind is _EXCEPTION:
            args_text = self._text(_exc_args(value), tuple, budget, depth + 1)
            if args_text is not None:  # always: a tuple shows its items
                parts.append(args_text)
        fields = self._fields(value, cls, budget, depth) if depth == 0 else None
        if fields:
            parts.append(fields)
        return " ".join(parts) if parts else None

    def _classify(self, cls: type) -> tuple[str, type | None]:
        """What kind of value ``cls`` makes, decided once per type (no metaclass hook runs:
        ``issubclass`` against builtin types reads the MRO)."""
        base: type | None = next((kind for kind in (*CONTAINERS, str, bytes, int, float, complex) if issubclass(cls, kind)), None)
        standard, standard_base = self._standard.classify(cls, _mro(cls))
        if base is None:
            base = standard_base
        if standard:
            kind = _STANDARD
        elif cls is str:
            kind = _STR
        elif cls in SCALARS:
            kind = _SCALAR
        elif _is_enum(cls):
            kind = _ENUM
        elif cls is _FunctionType:
            kind = _FUNCTION
        elif cls is _BoundMethod:
            kind = _BOUND
        elif cls is _BuiltinType:
            kind = _BUILTIN
        elif cls is _ModuleType:
            kind = _MODULE
        elif issubclass(cls, type):
            kind = _CLASS
        elif issubclass(cls, BaseException):
            kind = _EXCEPTION
        elif base is not None:
            kind = _SUBCLASS
        else:
            kind = _OBJECT
        found = self._kinds[cls] = (kind, base)
        return found

    def type_name(self, cls: type) -> str:
        found = self._names.get(cls)
        if found is None:
            found = self._names[cls] = type_name(cls)
        return found

    def _builtin(self, value: Any, base: type[Any], budget: list[int], depth: int) -> str:
        """The builtin content of an exact container or scalar, or of a subclass instance, via the base type's own methods."""
        if base not in BUILTIN_BASES:
            return self._standard_value(value, base, budget, depth)
        if base in (str, bytes, int, float, complex):
            plain = _PLAIN[base](value)
            return self._string(plain) if base is str else self._bytes(plain) if base is bytes else _scalar(plain, base)
        if base is dict:
            items: list[str] = []
            for key, item in dict.items(value):
                if budget[0] <= 0:
                    items.append(f"\u2026+{dict.__len__(value) - len(items)}")
                    break
                key_text = self._text(key, type(key), budget, depth + 1) or type_name(type(key))
                redacted = type(key) is str and self.redacts(key)
                items.append(f"{key_text}: {self.secret(item) if redacted else self._nested(item, budget, depth)}")
            return "{" + ", ".join(items) + "}"
        iterate = base.__iter__
        size = base.__len__(value)
        if base in (set, frozenset) and size > budget[0]:
            return f"<{base.__name__} len={size}>"
        texts: list[str] = []
        for item in iterate(value):
            if budget[0] <= 0:
                texts.append(f"\u2026+{size - len(texts)}")
                break
            texts.append(self._nested(item, budget, depth))
        if base in (set, frozenset):
            texts.sort()
            return ("{" + ", ".join(texts) + "}") if texts else f"{base.__name__}()"
        if base is tuple:
            return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
        return "[" + ", ".join(texts) + "]"

    def _nested(self, item: Any, budget: list[int], depth: int) -> str:
        cls = type(item)
        if cls is str:  # the commonest items first, as ``_text`` shows them
            budget[0] -= 1
            return self._string(item)
        if cls is int or cls is bool or item is None:
            budget[0] -= 1
            return _scalar(item, cls)
        known = self._kinds.get(cls)
        if known is not None and known[0] is _OBJECT:  # below the top an object shows as its type (``_text``)
            budget[0] -= 1
            return self._names.get(cls) or self.type_name(cls)
        text = self._text(item, cls, budget, depth + 1)
        if cls in SCALARS or cls in CONTAINERS:
            return text if text is not None else self.type_name(cls)
        return self.type_name(cls) if text is None else f"{self.type_name(cls)}({text})"

    def _standard_value(self, value: Any, cls: type, budget: list[int], depth: int) -> str:
        """A standard-library value through ``cls``'s own accessors; what it holds (a tzinfo, a deque's
        items) is walked like any nested value."""

        def held(item: Any) -> str:
            item_cls = type(item)
            kind, _ = self._kinds.get(item_cls) or self._classify(item_cls)
            if kind is _OBJECT:  # a tzinfo of the project: its name is its state
                fields = self._fields(item, item_cls, budget, depth + 1)
                return f"{self.type_name(item_cls)}{fields or ''}"
            return self._nested(item, budget, depth)

        return self._standard.format(value, cls, held, self._string)

    def _fields(self, value: Any, cls: type, budget: list[int], depth: int) -> str | None:
        """A shallow view of the instance dictionary and slots: scalars and builtin containers
        by content, other objects by type."""
        holder, slots = self._layout(cls)
        names: tuple = ()
        items: list[Any] = []
        if holder is not None:
            try:
                namespace = instance_namespace(holder, value)
            except Exception:  # noqa: BLE001  the object's own __dict__ descriptor may raise anything
                namespace = None
            if type(namespace) is dict and namespace:
                names, items = tuple(namespace), list(dict.values(namespace))
        if slots:
            present = []
            for name, getter, _member in slots:
                try:
                    items.append(getter(value))
                except Exception:  # noqa: BLE001, S112  an unset slot (AttributeError), or a slot descriptor that raises
                    continue
                present.append(name)
            names += tuple(present)
        if not names:
            return None
        plan = self._plans.get(names) if set(map(type, names)) == _STR_ONLY else None  # hashing other keys could run their code
        if plan is None:
            plan = self._plan(names)
        shown: list[str] = []
        kinds = self._kinds
        for index, label, secret in plan:
            if budget[0] <= 0:
                shown.append(f"\u2026+{len(plan) - len(shown)}")
                break
            item = items[index]
            if secret:
                shown.append(label + self.secret(item))
                continue
            item_cls = type(item)
            if item_cls is str:  # the common attributes first, as _text would show them
                budget[0] -= 1
                shown.append(label + self._string(item))
                continue
            if item_cls is bool or item is None:
                budget[0] -= 1
                shown.append(label + str(item))
                continue
            item_kind, item_base = kinds.get(item_cls) or self._classify(item_cls)
            if item_kind is _STANDARD or item_kind is _CLASS:  # its text alone would not say what it is (1.5: a float or a
                # Decimal? pkg.Node: an instance or the class itself?)
                shown.append(f"{label}{self.type_name(item_cls)}({self._text(item, item_cls, budget, depth + 1)})")
            elif item_kind in _SHOWN_IN_FIELDS or item_cls is item_base:
                shown.append(f"{label}{self._text(item, item_cls, budget, depth + 1)}")
            else:
                budget[0] -= 1
                shown.append(label + self.type_name(item_cls))
        return "{" + ", ".join(shown) + "}"

    def _plan(self, names: tuple) -> tuple[tuple[int, str, bool], ...]:
        """For one set of field names: which item to show in which order (by name), its ``name=`` label and
        whether it is a secret. Remembered for names that are all exact strings: an instance's fields are
        usually those of every instance of its class."""
        plan = tuple(
            sorted(
                ((index, f"{name}=", self.redacts(name)) for index, name in enumerate(names) if type(name) is str),
                key=lambda step: names[step[0]],
            )
        )
        if set(map(type, names)) == _STR_ONLY and len(self._plans) < MAX_CACHED_TEXTS:
            self._plans[names] = plan
        return plan

    def _layout(self, cls: type) -> tuple[Any, tuple[tuple[str, Any, Any], ...]]:
        """How instances of ``cls`` keep their state: the builtin ``__dict__`` getter and, per slot, its name, getter and
        member descriptor (which the C readers read without calling the getter), cached."""
        found = self._layouts.get(cls)
        if found is None:
            holder = None
            slots: dict[str, tuple[Any, Any]] = {}
            for klass in reversed(_mro(cls)):
                for name, attribute in _type_dict(klass).items():
                    kind = type(attribute)
                    if name == "__dict__" and kind is _GetSet:
                        holder = attribute.__get__
                    elif kind is _Member and _type_module(klass) != "builtins" and not name.startswith("__"):
                        slots[name] = (attribute.__get__, attribute)
            found = self._layouts[cls] = (holder, tuple((name, *slots[name]) for name in sorted(slots)))
        return found

    def _instance_dict(self, value: Any, cls: type) -> dict | None:
        holder, _ = self._layout(cls)
        namespace = instance_namespace(holder, value) if holder is not None else None
        return namespace if type(namespace) is dict else None

    def _string(self, value: str) -> str:
        if len(value) > 4 * MAX_REPR:  # hash long strings directly instead of building an even longer repr
            return f"{self.neutral(value[: MAX_REPR // 2])!r}\u2026[len={len(value)} hash={_digest(self.neutral(value))}]"
        found = self._strings.get(value)
        if found is None:
            found = cap(repr(self.neutral(value)))
            if len(self._strings) < MAX_CACHED_TEXTS:
                self._strings[value] = found
        return found

    def _bytes(self, value: bytes) -> str:
        if len(value) > MAX_REPR:
            return f"{value[: MAX_REPR // 2]!r}\u2026[len={len(value)} hash={_digest(value)}]"
        return repr(value)

    def _repr(self, value: Any) -> str:
        """``repr()`` of a type the user named: the one place project code may run."""
        try:
            text = repr(value)
            if type(text) is not str:
                raise TypeError
        except Exception as exc:  # noqa: BLE001  the project's own repr may raise anything
            return f"<repr failed: {type(exc).__name__}>"
        return cap(scrub(self.neutral(text)))


def _scalar(value: Any, cls: type) -> str:
    try:
        return cap(repr(value))
    except Exception as exc:  # noqa: BLE001  e.g. an int too large for str()
        return f"<repr failed: {type(exc).__name__}>"


def _size(value: Any, base: type[Any]) -> int | None:
    try:
        return base.__len__(value)
    except Exception:  # noqa: BLE001  a subclass's broken state: no size shown
        return None


_ENUM_TYPES: tuple[type, ...] = ()


def _is_enum(cls: type) -> bool:
    """Whether ``cls`` derives from ``enum.Enum`` (checked on the MRO: no metaclass hook runs)."""
    global _ENUM_TYPES
    enum = sys.modules.get("enum")
    if enum is None:
        return False
    if not _ENUM_TYPES:
        _ENUM_TYPES = (enum.Enum,)
    return _ENUM_TYPES[0] in _mro(cls)
