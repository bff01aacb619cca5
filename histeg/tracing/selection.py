"""Which code objects the tracer instruments: the version's settings applied to a file and a function."""

from __future__ import annotations

import os
from collections.abc import Sequence

from histeg.naming import identifier, module_name

CO_OPTIMIZED = 0x1
_TRACER_DIR = os.path.dirname(os.path.realpath(__file__))
_SKIPPED_PARTS = frozenset({"site-packages", "dist-packages", "__pycache__"})


class Selector:
    """Decides once per file and once per code object; results are cached by the caller."""

    def __init__(
        self,
        root: str,
        sources: Sequence[str],
        tests: Sequence[str],
        ignore_prefixes: Sequence[str] = (),
        ignore_suffixes: Sequence[str] = (),
        ignore_directories: Sequence[str] = (),
        ignore_functions: Sequence[str] = (),
    ) -> None:
        self.root = os.path.realpath(root)
        self.sources = [_clean(d) for d in sources] or ["."]
        self.dirs = [_join(self.root, d) for d in [*self.sources, *(_clean(d) for d in tests)]]
        self.ignore_prefixes = tuple(ignore_prefixes)
        self.ignore_suffixes = tuple(ignore_suffixes)
        self.ignore_directories = [_clean(d) for d in ignore_directories]
        self.ignore_functions = frozenset(ignore_functions)
        self._files: dict[str, tuple[str, str] | None] = {}

    def module_of(self, filename: str) -> tuple[str, str] | None:
        """``(relative path, module name)`` of an instrumented file, else None."""
        if filename in self._files:
            return self._files[filename]
        result = None
        if filename.endswith(".py") and not filename.startswith("<"):
            path = os.path.realpath(filename)
            if not path.startswith(_TRACER_DIR + os.sep) and any(_under(path, d) for d in self.dirs):
                relpath = os.path.relpath(path, self.root).replace(os.sep, "/")
                if self._keeps_file(relpath):
                    module = module_name(relpath, self.sources)
                    if not (self.ignore_prefixes and module.startswith(self.ignore_prefixes)) and not (
                        self.ignore_suffixes and module.endswith(self.ignore_suffixes)
                    ):
                        result = (relpath, module)
        self._files[filename] = result
        return result

    def _keeps_file(self, relpath: str) -> bool:
        parts = relpath.split("/")[:-1]
        if any(part in _SKIPPED_PARTS or part.startswith(".") for part in parts):
            return False
        return not any(relpath.startswith(d + "/") or d == "." for d in self.ignore_directories)

    def select(self, code) -> tuple[str, str] | None:  # noqa: ANN001 - a code object
        """``(identifier, relative path)`` of a traced code object: functions only (not module or
        class bodies) of instrumented files, minus ignored names."""
        if not code.co_flags & CO_OPTIMIZED:
            return None
        found = self.module_of(code.co_filename)
        if found is None or code.co_name in self.ignore_functions or code.co_qualname in self.ignore_functions:
            return None
        relpath, module = found
        return identifier(module, code.co_qualname), relpath


def _clean(directory: str) -> str:
    cleaned = os.path.normpath(directory).replace(os.sep, "/")
    return "." if cleaned in ("", ".") else cleaned.rstrip("/")


def _join(root: str, directory: str) -> str:
    return root if directory == "." else os.path.join(root, directory)


def _under(path: str, directory: str) -> bool:
    return path.startswith(directory + os.sep)
