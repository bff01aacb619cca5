"""Which code objects the tracer instruments: the version's settings applied to a file and a function."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import CodeType

from histeg.naming import identifier, module_name

CO_OPTIMIZED = 0x1
_TRACER_DIR = os.path.dirname(os.path.realpath(__file__))
_SKIPPED_PARTS = frozenset({"site-packages", "dist-packages", "__pycache__"})
DEFAULT_IGNORED_FUNCTIONS = ("__repr__", "__str__", "__hash__", "__eq__")
"""Left out unless the user says otherwise, as jHisteg left out toString, hashCode and equals: containers,
logging and test reports call them more than the program's own logic does."""


@dataclass(frozen=True)
class IgnoreRule:
    """What the tracer and every analysis leave out (thesis figure 4.3).

    One rule, so that the function table, the syntax changes and the targets
    name exactly the code the tracer may report.
    """

    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()
    functions: tuple[str, ...] = DEFAULT_IGNORED_FUNCTIONS
    _directories: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _functions: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("prefixes", "suffixes", "directories", "functions"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "_directories", tuple(_clean(d) for d in self.directories))
        object.__setattr__(self, "_functions", frozenset(self.functions))

    def ignores(self, path: str | None = None, module: str | None = None, qualname: str | None = None) -> bool:
        """Whether any part given is left out: a file (POSIX path relative to the version root) under an
        ignored directory, a module by prefix or suffix, a function by its own name or its qualified name."""
        if path is not None and any(d == "." or path.startswith(d + "/") for d in self._directories):
            return True
        if module is not None and (module.startswith(self.prefixes) or module.endswith(self.suffixes)):
            return True
        return qualname is not None and (qualname in self._functions or qualname.rpartition(".")[2] in self._functions)


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
        self.ignore = IgnoreRule(tuple(ignore_prefixes), tuple(ignore_suffixes), tuple(ignore_directories), tuple(ignore_functions))
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
                    if not self.ignore.ignores(path=relpath, module=module):
                        result = (relpath, module)
        self._files[filename] = result
        return result

    def _keeps_file(self, relpath: str) -> bool:
        parts = relpath.split("/")[:-1]
        return not any(part in _SKIPPED_PARTS or part.startswith(".") for part in parts)

    def select(self, code: CodeType) -> tuple[str, str] | None:
        """``(identifier, relative path)`` of a traced code object: functions only (not module or
        class bodies) of instrumented files, minus ignored names."""
        if not code.co_flags & CO_OPTIMIZED:
            return None
        found = self.module_of(code.co_filename)
        if found is None or self.ignore.ignores(qualname=code.co_qualname):
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
