"""The files a traced process read, written beside its trace as ``<trace>.files``.

A version whose only changes are to files no test read (a changelog, a
workflow, the documentation) behaves as its predecessor did: its traces are
the predecessor's (``histeg.runs.reuse``), and tracing it again would redo a
whole run to learn nothing. Whether a test read a file is evidence, not a
guess: an audit hook (PEP 578) hears every file the process opens (``open``,
``io.open_code``: the interpreter's own reads of modules and bytecode too) and
every folder it lists, under the run's root. What it cannot hear makes the run
*blind* and rules reuse out: a child process (it reads what it likes), a
library loaded by ``ctypes``, a native module outside the standard library
(its C code opens files without an audit event). A file only asked about
(``os.stat``, ``os.path.exists``) raises no event either; that is why only
changes that keep every path in place may reuse traces.

The hook is the C tracer's (``_ctracer.hear_files``): it never fails the
operation it hears, calls no Python and runs no project code. Without the C
tracer nothing is heard and no file written (``SeenFiles.start``). It is added
for full runs only (re-runs compare runs of one version) and stays for the
process's life (an audit hook cannot be removed), recording nothing once the
file is written. It runs inside the traced process: the standard library and
the tracer's own modules only.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
from collections.abc import Callable, Iterable
from typing import Any

SUFFIX = ".files"
"""Appended to the trace file's name."""
FORMAT = 1
"""``format`` of the sidecar JSON: ``{"format": 1, "opened": [path, ...], "listed": [path, ...], "blind": [why, ...],
"children": n}``, paths relative to the run's root, with ``/``; ``children``: the processes it started."""
NATIVE_SUFFIXES = (".so", ".pyd")
PATH_MODULES = frozenset({"pathlib", "pathlib._local", "pathlib._abc", "zipfile", "zipfile._path", "importlib.resources.readers"})


class SeenFiles:
    """What one process read under ``root``, collected by an audit hook from ``start`` to ``write``: each path as the
    program gave it, with the working folder a relative one is relative to (``None`` for an absolute one)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.opened: set[tuple[str | None, str | bytes]] = set()
        self.listed: set[tuple[str | None, str | bytes]] = set()
        self.others: list[tuple[str | None, object]] = []
        """Paths given as other objects (``pathlib.Path``, ``os.DirEntry``): never hashed in the hook (``__hash__``
        may be Python); whether they were opened or listed does not matter to reuse, so they count as opened."""
        self.blind: set[str] = set()
        self.children: list[tuple[str, tuple]] = []
        """The audit events that started a child process, with their arguments."""
        self._native: Callable[..., None] | None = None

    def start(self) -> bool:
        """Whether it hears: only in C (``native.file_ears``, where the tracer is built). A hook in Python is a frame of
        its own, and every audited operation would make one: near the recursion limit there is no room for it, so the
        operation (``sys._getframe`` in the Python collector's callbacks) would raise there and not untraced. Not heard,
        no file is written, and the version's successor is traced anew."""
        from histeg.tracing.native import file_ears

        self._native = file_ears()
        if self._native is None:
            return False
        self._native(self.opened, self.listed, self.others, self.blind, self.children)
        os.register_at_fork(after_in_child=self._forked)
        return True

    def _forked(self) -> None:
        """A forked child counts its own children; what its parent read before is kept (it may read it again)."""
        del self.children[:]

    def _under_root(self, entries: Iterable[tuple[str | None, object]]) -> list[str]:
        """Each path by its folder resolved once per folder, and a link also by what it points to: a changed link and a
        changed file it names are both changes a reader saw."""
        found = set()
        folders: dict[str, str] = {}
        for cwd, path in entries:
            text = _path_text(path)
            if text is None:
                self.blind.add(f"a path given as a {type(path).__qualname__} object")
                continue
            folder, name = os.path.split(os.path.join(cwd, text) if cwd is not None else text)
            real = folders.get(folder)
            if real is None:
                real = folders[folder] = os.path.realpath(folder)
            full = os.path.join(real, name) if name else real
            for candidate in (full, os.path.realpath(full)) if os.path.islink(full) else (full,):
                if candidate == self.root or candidate.startswith(self.root + os.sep):
                    found.add(os.path.relpath(candidate, self.root).replace(os.sep, "/"))
        return sorted(found)

    def write(self, trace_path: str) -> None:
        """``<trace_path>.files``, renamed into place so a reader never sees half of it; recording stops."""
        if self._native is not None:
            self._native()
        opened = self._under_root([*self.opened, *self.others])
        listed = self._under_root(self.listed)
        blind = self.blind | _native_modules(self.root, list(sys.modules.values()))
        target = trace_path + SUFFIX
        partial = f"{target}.{os.getpid()}.tmp"
        data = {"format": FORMAT, "opened": opened, "listed": listed, "blind": sorted(blind), "children": _child_count(self.children)}
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(partial, target)


def _child_count(events: list[tuple[str, tuple]]) -> int:
    """The processes started: ``subprocess.Popen`` spawning with ``os.posix_spawn`` raises both events for one child
    (the second with the first's arguments), counted once. Arguments that are not plain text are never compared (an
    object's ``__eq__`` may be the project's): both events count, and the run is taken as blind rather than wrong."""
    count, popen = 0, None
    for event, args in events:
        if event == "os.posix_spawn" and popen is not None and len(args) > 1 and _plain(args[1]) and list(args[1]) == popen:
            popen = None
            continue
        count += 1
        popen = list(args[1]) if event == "subprocess.Popen" and len(args) > 1 and _plain(args[1]) else None
    return count


def _plain(argv: object) -> bool:
    return type(argv) in (list, tuple) and all(type(item) in (str, bytes) for item in argv)  # type: ignore[attr-defined]


def _path_text(path: object) -> str | None:
    """A path as text, from a string, bytes, or a path object of the standard library's (whose ``__fspath__`` is no
    project code); None for anything else."""
    if isinstance(path, bytes):
        return os.fsdecode(path)
    if isinstance(path, str):
        return path
    if isinstance(path, os.DirEntry) or type(path).__module__ in PATH_MODULES:
        return os.fspath(path)  # type: ignore[call-overload]  # os.DirEntry and pathlib's paths are PathLike
    return None


def _native_modules(root: str, modules: Iterable[object]) -> set[str]:
    """Native modules loaded from outside the interpreter's own library folders (the project's, a dependency's)."""
    own = tuple(
        os.path.realpath(path) + os.sep
        for path in {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib"), os.path.dirname(os.path.dirname(__file__))}
        if path
    )
    found = set()
    for module in modules:
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(NATIVE_SUFFIXES) and not os.path.realpath(file).startswith(own):
            found.add(f"loaded the native module {getattr(module, '__name__', file)}")
    return found


def read_seen_files(trace_path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The sidecar written beside ``trace_path``; None when there is none this histeg reads (the process ended
    before writing it, or another histeg wrote it)."""
    try:
        with open(os.fspath(trace_path) + SUFFIX, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    parts = {key: data.get(key) for key in ("opened", "listed", "blind")}
    if not all(isinstance(value, list) and all(isinstance(item, str) for item in value) for value in parts.values()):
        return None
    children = data.get("children")
    return {**parts, "children": children} if type(children) is int and children >= 0 else None
