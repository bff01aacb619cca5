"""Files written whole or not at all: a temporary file renamed into place, so an interrupted run never leaves half a result."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from histeg.errors import HistegError


def dump_json(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    write_bytes(path, dump_json(data))


def write_bytes(path: Path, payload: bytes) -> None:
    """Atomic write; an identical existing file is left untouched so reruns are no-ops."""
    try:
        if path.stat().st_size == len(payload) and path.read_bytes() == payload:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise HistegError(f"missing result file {path}") from None
    except orjson.JSONDecodeError as exc:
        raise HistegError(f"corrupt JSON in {path}: {exc}") from None


__all__ = ["dump_json", "read_json", "write_bytes", "write_json"]
