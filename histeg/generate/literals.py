"""Recorded values (``histeg.tracing.values``' texts) rebuilt as Python source, or the reason they cannot be.

A carved test must repeat a recorded call exactly, so a value is rebuilt only
when its record holds all of it: scalars, texts, builtin containers, enum
members and standard-library values (dates, decimals, paths, UUIDs ...).
Anything the tracer shortened (a capped text or container), hashed, redacted,
made path-neutral or showed by its type alone is refused with its reason:
never guessed. Nothing here imports or runs the project's code; standard-library
values are rebuilt from their texts with the standard library itself and written
through its own ``repr``.
"""

from __future__ import annotations

import ast
import datetime
import re
import sys
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass, field

CAPPED = "capped by the tracer"
REDACTED = "a secret, recorded as a digest"
PATH_NEUTRAL = "a text made path-neutral (<root>, <tmp>, <home>)"
BY_TYPE = "shown by its type alone"
NOT_RECORDED = "not recorded"
UNREADABLE = "a record this version of histeg cannot read back"
PLACEHOLDERS = ("<root>", "<tmp>", "<home>")
ELLIPSIS = "\u2026"


class Uncarvable(Exception):
    """A value that cannot be rebuilt; ``reason`` says why in a few words (it groups the counts)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason if not detail else f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Expression:
    """Python source that rebuilds a value, with the import lines it needs."""

    source: str
    imports: frozenset[str] = field(default_factory=frozenset)


TypeReference = Callable[[str], Expression]
"""An importable expression for a type named ``module.Qual`` (raises ``Uncarvable`` when there is none)."""

_SCALAR_TYPES = frozenset({"int", "bool", "NoneType", "str", "bytes", "float", "complex"})
_CONTAINER_TYPES = frozenset({"list", "tuple", "dict", "set", "frozenset"})
_NUMBER = re.compile(r"-?(?:\d[\d_]*\.?\d*(?:[eE][+-]?\d+)?j?|\.\d+(?:[eE][+-]?\d+)?j?|inf|nan)")
_NAME = re.compile(r"[A-Za-z_][\w.]*(?:\.<locals>\.[\w.]+)*")
_FIELD = re.compile(r"([^=,{}]+)=")
_CAPPED_TAIL = re.compile("\u2026\\[len=\\d+ hash=[0-9a-f]+\\]$")
_KEYWORD = re.compile(r"[A-Za-z_]\w*=")
_LITERAL_NODES = (ast.Expression, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Load, ast.UnaryOp, ast.USub, ast.UAdd)


def literal(type_name: str, text: str | None, types: TypeReference) -> Expression:
    """The value recorded as ``type_name`` with ``text`` (``None``: shown by type alone)."""
    if text is None:
        if type_name == "NoneType":
            return Expression("None")
        raise Uncarvable(BY_TYPE, type_name)
    _refuse_marks(text)
    if type_name in _SCALAR_TYPES or type_name in _CONTAINER_TYPES:
        expression = _Parser(text, types).whole()
        if type_name == "frozenset":
            return Expression(f"frozenset({expression.source})" if expression.source != "set()" else "frozenset()", expression.imports)
        return expression
    standard = standard_value(type_name, text)
    if standard is not None:
        return standard
    if text.startswith(type_name + ".") and text[len(type_name) + 1 :].isidentifier():
        return _member(types(type_name), text[len(type_name) + 1 :])
    raise Uncarvable(BY_TYPE if text.startswith("{") else UNREADABLE, type_name)


def object_fields(text: str | None, types: TypeReference) -> tuple[dict[str, Expression], dict[str, str]]:
    """An object's recorded attributes (``{name=value, ...}``): those rebuilt, and why each other one is not. A text the
    tracer capped keeps the attributes written whole before the cut; the rest are refused as capped (``…``)."""
    if not text:
        return {}, {}
    capped = _CAPPED_TAIL.search(text)
    if capped is not None:
        text = text[: capped.start()]
    elif not text.endswith("}"):
        raise Uncarvable(UNREADABLE, text[:40])
    if not text.startswith("{"):
        raise Uncarvable(UNREADABLE, text[:40])
    rebuilt: dict[str, Expression] = {}
    refused: dict[str, str] = {}
    parser = _Parser(text, types)
    parser.pos = 1
    while parser.peek() not in ("}", ""):
        if parser.text.startswith(ELLIPSIS, parser.pos):
            refused[ELLIPSIS] = CAPPED
            break
        match = _FIELD.match(parser.text, parser.pos)
        if match is None:
            raise Uncarvable(UNREADABLE, text[:40])
        name = match.group(1)
        parser.pos = start = match.end()
        if _KEYWORD.match(parser.text, start):  # a standard-library value written by its fields (a timedelta): no type to read
            raise Uncarvable(UNREADABLE, f"the attribute {name} holds a value written without its type")
        end = _skip_item(parser.text, start)
        if end >= len(parser.text) and capped is not None:  # cut by the cap: neither it nor anything after it was written
            refused[name] = refused[ELLIPSIS] = CAPPED
            break
        try:
            rebuilt[name] = parser.item()
        except Uncarvable as refusal:
            refused[name] = refusal.reason
            parser.pos = end
        if parser.peek() == ",":
            parser.pos += 2
    if capped is not None:
        refused.setdefault(ELLIPSIS, CAPPED)
    return rebuilt, refused


def exception_arguments(text: str | None, types: TypeReference) -> Expression | None:
    """An exception's ``args`` as recorded (its text starts with them), or None when they cannot be rebuilt."""
    if not text or not text.startswith("("):
        return None
    try:
        return _Parser(text[: _closing(text, 0) + 1], types).whole()
    except Uncarvable:
        return None


def standard_value(type_name: str, text: str) -> Expression | None:
    """A standard-library value (``stdlib_values``' formats) as a call of its own constructor; None: not one of them."""
    module, _, name = type_name.rpartition(".")
    top = module.partition(".")[0]
    builder = _STANDARD.get((top, name)) or _STANDARD.get(("", type_name))
    if builder is None:
        return None
    _refuse_marks(text)
    try:
        source, imports = builder(text, name)
    except (ValueError, TypeError, OverflowError, SyntaxError, zoneinfo.ZoneInfoNotFoundError) as exc:
        raise Uncarvable(UNREADABLE, f"{type_name} {text[:40]} ({exc})") from None
    return Expression(source, frozenset(imports))


def _refuse_marks(text: str) -> None:
    if "<redacted" in text:
        raise Uncarvable(REDACTED)
    if ELLIPSIS in text or " len=" in text:
        raise Uncarvable(CAPPED)
    if any(mark in text for mark in PLACEHOLDERS):
        raise Uncarvable(PATH_NEUTRAL)


def _member(owner: Expression, name: str) -> Expression:
    return Expression(f"{owner.source}.{name}", owner.imports)


def _pure_literal(span: str) -> bool:
    """Whether ``span`` is Python source made of literals only (as ``repr`` writes scalars and builtin containers)."""
    try:
        tree = ast.parse(span, mode="eval")
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):  # a complex number: (1+2j)
            continue
        if isinstance(node, (ast.Add, ast.Sub)):
            continue
        if not isinstance(node, _LITERAL_NODES):
            return False
    return True


def _skip_item(text: str, pos: int) -> int:
    """The end of the item starting at ``pos``: the next ``,`` or closing bracket outside brackets and string literals."""
    return _scan(text, pos, 0)


def _closing(text: str, pos: int) -> int:
    """The position of the bracket that closes the one at ``pos``, outside string literals."""
    end = _scan(text, pos + 1, 1)
    if end >= len(text):
        raise Uncarvable(UNREADABLE, f"an unclosed bracket in {text[:40]}")
    return end


def _scan(text: str, pos: int, depth: int, colon: bool = False) -> int:
    """From ``pos``, ``depth`` brackets deep: the closing bracket that would take it below that depth, or a comma (with
    ``colon``, also a ``: ``) met outside every bracket; string literals are skipped whole. The end of the text when
    none comes."""
    floor = depth
    while pos < len(text):
        char = text[pos]
        if char in "'\"":
            pos = _string_end(text, pos)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == floor:
                return pos
            depth -= 1
        elif depth == 0 and (char == "," or (colon and text.startswith(": ", pos))):
            return pos
        pos += 1
    return pos


def _string_end(text: str, pos: int) -> int:
    quote = text[pos]
    pos += 1
    while pos < len(text):
        if text[pos] == "\\":
            pos += 2
            continue
        if text[pos] == quote:
            return pos + 1
        pos += 1
    raise Uncarvable(UNREADABLE, "an unterminated text")


class _Parser:
    """Recursive descent over one value text, as ``_nested`` and ``_builtin`` write its items."""

    def __init__(self, text: str, types: TypeReference) -> None:
        self.text = text
        self.types = types
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def whole(self) -> Expression:
        if _pure_literal(self.text):
            return Expression(self.text)
        found = self.item()
        if self.pos != len(self.text):
            raise Uncarvable(UNREADABLE, self.text[:40])
        return found

    def item(self) -> Expression:
        end = _skip_item(self.text, self.pos)
        span = self.text[self.pos : end]
        if span and span[0] in "'\"bB[({-0123456789" and _pure_literal(span):
            self.pos = end
            return Expression(span)
        char = self.peek()
        if char == "[":
            return self._sequence("]", lambda items: "[" + ", ".join(items) + "]")
        if char == "(":
            return self._sequence(")", lambda items: "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")")
        if char == "{":
            return self._braces()
        if char == "<":
            raise Uncarvable(REDACTED if span.startswith("<redacted") else CAPPED)
        if char == ELLIPSIS:
            raise Uncarvable(CAPPED)
        number = _NUMBER.match(self.text, self.pos)
        if number is not None and number.end() == end:
            self.pos = end
            token = number.group(0)
            bare = token.lstrip("-")
            return Expression(f"{token[: len(token) - len(bare)]}float({bare!r})" if bare in ("inf", "nan") else token)
        name = _NAME.match(self.text, self.pos)
        if name is None:
            raise Uncarvable(UNREADABLE, span[:40])
        return self._named(name.group(0), name.end(), end)

    def _named(self, name: str, after: int, end: int) -> Expression:
        if "<locals>" in name:
            raise Uncarvable(BY_TYPE, name)
        if name in ("None", "True", "False") and after == end:
            self.pos = end
            return Expression(name)
        if name in ("set", "frozenset") and self.text.startswith("()", after):
            self.pos = after + 2
            return Expression(f"{name}()")
        if after < len(self.text) and self.text[after] == "(":
            close = _closing(self.text, after)
            inner = self.text[after + 1 : close]
            self.pos = close + 1
            standard = standard_value(name, inner)
            if standard is not None:
                return standard
            if inner.startswith(name + ".") and inner[len(name) + 1 :].isidentifier():
                return _member(self.types(name), inner[len(name) + 1 :])
            raise Uncarvable(BY_TYPE, name)
        raise Uncarvable(BY_TYPE, name)

    def _sequence(self, closing: str, write: Callable[[list[str]], str]) -> Expression:
        self.pos += 1
        items: list[Expression] = []
        while self.peek() != closing:
            if not self.peek():
                raise Uncarvable(UNREADABLE, self.text[:40])
            items.append(self.item())
            if self.peek() == ",":
                self.pos += 1
                if self.peek() == " ":
                    self.pos += 1
        self.pos += 1
        return Expression(write([item.source for item in items]), frozenset().union(*(item.imports for item in items)))

    def _braces(self) -> Expression:
        """A dict (``{key: value}``, ``{}``) or a set (``{a, b}``)."""
        self.pos += 1
        pairs: list[tuple[Expression, Expression | None]] = []
        while self.peek() != "}":
            if not self.peek():
                raise Uncarvable(UNREADABLE, self.text[:40])
            key = self._key()
            value = None
            if self.text.startswith(": ", self.pos):
                self.pos += 2
                value = self.item()
            pairs.append((key, value))
            if self.peek() == ",":
                self.pos += 2
        self.pos += 1
        imports = frozenset().union(*(key.imports | (value.imports if value else frozenset()) for key, value in pairs))
        if pairs and all(value is None for _, value in pairs):
            return Expression("{" + ", ".join(key.source for key, _ in pairs) + "}", imports)
        if any(value is None for _, value in pairs):
            raise Uncarvable(UNREADABLE, self.text[:40])
        return Expression("{" + ", ".join(f"{key.source}: {value.source}" for key, value in pairs if value) + "}", imports)

    def _key(self) -> Expression:
        """A dict key ends at ``: `` (``_skip_item`` would stop at the first comma only)."""
        end = _scan(self.text, self.pos, 0, colon=True)
        found = _Parser(self.text[self.pos : end], self.types).whole()
        self.pos = end
        return found


def _datetime_value(text: str, name: str) -> tuple[str, set[str]]:
    words = text.split(" ")
    fold = 1 if "fold=1" in words else 0
    words = [word for word in words if word != "fold=1"]
    zone: datetime.tzinfo | None = None
    imports = {"import datetime"}
    if len(words) > 1:
        if words[1].startswith("tz=zoneinfo.ZoneInfo(") and words[1].endswith(")"):
            zone = zoneinfo.ZoneInfo(ast.literal_eval(words[1][len("tz=zoneinfo.ZoneInfo(") : -1]))
            imports.add("import zoneinfo")
        elif words[1].startswith("tz="):
            raise Uncarvable(BY_TYPE, words[1])
    if name == "date":
        return repr(datetime.date.fromisoformat(words[0])), imports
    value: datetime.datetime | datetime.time = (datetime.datetime if name == "datetime" else datetime.time).fromisoformat(words[0])
    if len(words) > 1 and zone is None and value.tzinfo is not None:
        offset, zone_name = value.utcoffset() or datetime.timedelta(0), " ".join(words[1:])
        unnamed = datetime.timezone(offset)
        value = value.replace(tzinfo=unnamed if zone_name == unnamed.tzname(None) else datetime.timezone(offset, zone_name))
        if offset == datetime.timedelta(0) and zone_name == "UTC":
            value = value.replace(tzinfo=datetime.UTC)
    if zone is not None:
        value = value.replace(tzinfo=zone)
    if fold:
        value = value.replace(fold=1)
    return repr(value), imports


def _timedelta_value(text: str, name: str) -> tuple[str, set[str]]:
    parts = dict(part.split("=", 1) for part in text.split(", ")[:3])
    value = datetime.timedelta(days=int(parts["days"]), seconds=int(parts["seconds"]), microseconds=int(parts["microseconds"]))
    if name == "timedelta":
        return repr(value), {"import datetime"}
    zone_name = ast.literal_eval(text.split(", name=", 1)[1])
    zone = datetime.timezone(value, zone_name) if zone_name != datetime.timezone(value).tzname(None) else datetime.timezone(value)
    return repr(datetime.UTC if zone == datetime.UTC and zone_name == "UTC" else zone), {"import datetime"}


def _quoted(module: str) -> Callable[[str, str], tuple[str, set[str]]]:
    """A type built from the text it prints (a decimal, a UUID, an address)."""

    def build(text: str, name: str) -> tuple[str, set[str]]:
        return f"{module}.{name}({text!r})", {f"import {module}"}

    return build


def _from_source(module: str) -> Callable[[str, str], tuple[str, set[str]]]:
    """A type whose text is already its constructor's arguments as literals (a path's quoted text, a pattern and its flags)."""

    def build(text: str, name: str) -> tuple[str, set[str]]:
        call = "re.compile" if module == "re" else f"{module}.{name}"
        if not _pure_literal(f"({text},)") and "=" not in text:
            raise ValueError("not literal arguments")
        source = f"{call}({text})"
        ast.parse(source, mode="eval")
        return source, {f"import {module}"}

    return build


def _fraction_value(text: str, name: str) -> tuple[str, set[str]]:
    numerator, denominator = (int(part) for part in text.split("/"))
    return f"fractions.Fraction({numerator}, {denominator})", {"import fractions"}


def _deque_value(text: str, name: str) -> tuple[str, set[str]]:
    items, _, limit = text.partition(", maxlen=")
    if not _pure_literal(items):
        raise ValueError("items that are not literals")
    return f"collections.deque({items}" + (f", maxlen={int(limit)})" if limit else ")"), {"import collections"}


def _array_value(text: str, name: str) -> tuple[str, set[str]]:
    code, _, items = text.partition(", ")
    if items.startswith("len=") or not _pure_literal(items):
        raise ValueError("items not recorded")
    return f"array.array({code}, {items})", {"import array"}


def _builtin_call(text: str, name: str) -> tuple[str, set[str]]:
    source = f"{name}({text})"
    if not _pure_literal(f"({text},)"):
        raise ValueError("arguments that are not literals")
    ast.parse(source, mode="eval")
    return source, set()


_STANDARD: dict[tuple[str, str], Callable[[str, str], tuple[str, set[str]]]] = {
    ("datetime", "date"): _datetime_value,
    ("datetime", "datetime"): _datetime_value,
    ("datetime", "time"): _datetime_value,
    ("datetime", "timedelta"): _timedelta_value,
    ("datetime", "timezone"): _timedelta_value,
    ("decimal", "Decimal"): _quoted("decimal"),
    ("uuid", "UUID"): _quoted("uuid"),
    **{
        ("ipaddress", name): _quoted("ipaddress")
        for name in ("IPv4Address", "IPv6Address", "IPv4Network", "IPv6Network", "IPv4Interface", "IPv6Interface")
    },
    **{
        ("pathlib", name): _from_source("pathlib")
        for name in ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath")
    },
    ("zoneinfo", "ZoneInfo"): _from_source("zoneinfo"),
    ("re", "Pattern"): _from_source("re"),
    ("fractions", "Fraction"): _fraction_value,
    ("collections", "deque"): _deque_value,
    ("array", "array"): _array_value,
    ("", "range"): _builtin_call,
    ("", "slice"): _builtin_call,
    ("", "bytearray"): _builtin_call,
}


def is_standard_module(module: str) -> bool:
    return module.partition(".")[0] in sys.stdlib_module_names


__all__ = [
    "BY_TYPE",
    "CAPPED",
    "NOT_RECORDED",
    "PATH_NEUTRAL",
    "REDACTED",
    "UNREADABLE",
    "Expression",
    "TypeReference",
    "Uncarvable",
    "exception_arguments",
    "is_standard_module",
    "literal",
    "object_fields",
    "standard_value",
]
