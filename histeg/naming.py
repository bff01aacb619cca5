"""How histeg names modules, functions and classes: ``package.module:Qual.name``.

Shared by the syntax analysis, the tracer and the impact mapping so that a
function has one identifier wherever it appears. Pure standard library: the
tracer imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath


def module_name(relative_path: str, source_roots: Sequence[str] = (".",)) -> str:
    """Dotted module name of a ``.py`` file given relative to the version root.

    The path is taken relative to the first source root that contains it (so
    ``src/pkg/mod.py`` with root ``src`` is ``pkg.mod``); ``__init__.py`` names
    its package. Files outside every root are named from the version root.
    """
    path = PurePosixPath(relative_path)
    for root in source_roots:
        root_path = PurePosixPath(root)
        if str(root_path) in ("", ".") or path.is_relative_to(root_path):
            path = path.relative_to(root_path) if str(root_path) not in ("", ".") else path
            break
    parts = list(path.with_suffix("").parts) if path.suffix == ".py" else list(path.parts)
    if parts and parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def identifier(module: str, qualname: str) -> str:
    """``module:qualname``; a module's own top-level code has an empty qualname."""
    return f"{module}:{qualname}"


def split_identifier(ident: str) -> tuple[str, str]:
    module, _, qualname = ident.partition(":")
    return module, qualname
