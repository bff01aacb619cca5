"""The base of every persisted record: one msgspec Struct per file is its JSON and its JSON Schema.

msgspec rather than pydantic: it decodes and validates JSON straight into
typed objects several times faster, imports in milliseconds (``import histeg``
must stay light), generates JSON Schema from the same classes, and names the
failing field in its errors (``at `$.versions[0].index```), which is what a
one-line error needs.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar, Self

import msgspec

from histeg.atomic import write_json
from histeg.errors import HistegError

RECORDS: dict[str, type[Record]] = {}
"""Every file record by file name, for the schema generator."""

_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}
_TYPES_READY = threading.Lock()


def decoder[T](kind: type[T]) -> msgspec.json.Decoder[T]:
    """A JSON decoder of ``kind``, made once under a lock. msgspec works out a type's layout on its first use, and two
    threads doing that at once for the same class crash the process (the re-runs of both versions decode alike)."""
    found = _DECODERS.get(kind)
    if found is None:
        with _TYPES_READY:
            found = _DECODERS.get(kind)
            if found is None:
                found = _DECODERS[kind] = msgspec.json.Decoder(kind)
    return found


def convert[T](data: Any, kind: type[T]) -> T:
    """``msgspec.convert``, with the type's layout worked out first under the same lock as ``decoder``."""
    decoder(kind)
    return msgspec.convert(data, kind)


class Part(msgspec.Struct, rename="camel", kw_only=True, forbid_unknown_fields=True):
    """A part of a record: camelCase keys, nothing unknown accepted."""


class Record(Part, kw_only=True):
    """A whole file. Subclasses declare ``schema_version: Literal[N] = N`` and ``FILE``."""

    FILE: ClassVar[str]
    """File name; ``<index>/`` in ``TITLE`` when it lives in a version directory."""
    TITLE: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "FILE" in cls.__dict__:
            RECORDS[cls.FILE] = cls

    @classmethod
    def schema_version_expected(cls) -> int:
        return cls.__struct_defaults__[cls.__struct_fields__.index("schema_version")]

    def to_builtins(self) -> Any:
        return msgspec.to_builtins(self)

    @classmethod
    def decode(cls, payload: bytes, where: Path | str) -> Self:
        """Check the schema version first, so an old file says so instead of naming a field."""
        try:
            head = decoder(_Head).decode(payload)
        except msgspec.DecodeError as exc:
            raise HistegError(f"corrupt JSON in {where}: {exc}") from None
        expected = cls.schema_version_expected()
        if head.schema_version != expected:
            raise SchemaVersionError(
                f"{where} has schema version {head.schema_version}, this histeg reads version {expected}: recompute it with --override"
            )
        try:
            return decoder(cls).decode(payload)
        except msgspec.ValidationError as exc:
            raise HistegError(f"{where} does not match its schema: {exc}") from None

    @classmethod
    def read(cls, path: Path) -> Self:
        try:
            payload = path.read_bytes()
        except FileNotFoundError:
            raise HistegError(f"missing result file {path}") from None
        except OSError as exc:
            raise HistegError(f"cannot read {path}: {exc.strerror}") from None
        return cls.decode(payload, path)

    def write(self, path: Path) -> None:
        write_json(path, self.to_builtins())


class SchemaVersionError(HistegError):
    """A file written by another histeg version; exit 2 like every input error."""


class _Head(msgspec.Struct, rename="camel"):
    schema_version: int | None = None
