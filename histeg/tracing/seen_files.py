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

The hook never raises and runs no project code; it is added for full runs only
(re-runs compare runs of one version) and stays for the process's life (an
audit hook cannot be removed), recording nothing once the file is written.
Standard library only: it runs inside the traced process.
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
SPAWNING = {"subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.startfile", "os.fork", "os.forkpty"}
"""Audit events that start a child process: it reads what it likes, so it must be traced too (its own trace and sidecar,
``ppid`` this process) for the run to have heard every read."""
BLINDING = {"os.exec": "replaced itself with another program", "ctypes.dlopen": "loaded a library through ctypes"}
"""Audit events after which the process may read files no event tells of."""
OPENING = {"open"}
LISTING = {"os.listdir", "os.scandir"}
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
        self.children: list[str] = []
        self._recording = False
        self._native: Callable[..., None] | None = None

    def start(self) -> None:
        """In C where built (``native.file_ears``): a Python hook is a frame, which an operation near the recursion
        limit would not have room for."""
        from histeg.tracing.native import file_ears

        self._native = file_ears()
        self._recording = True
        if self._native is not None:
            self._native(self.opened, self.listed, self.others, self.blind, self.children)
        else:
            sys.addaudithook(self._hear)
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """A forked child counts its own children; what its parent read before is kept (it may read it again)."""
        del self.children[:]

    def _hear(self, event: str, args: tuple) -> None:
        if not self._recording:
            return
        try:
            if event in OPENING or event in LISTING:
                path = args[0] if args else None
                if path is None and event in LISTING:
                    path = "."
                if path is not None and not isinstance(path, int):  # a file descriptor names a file opened before
                    self._keep(self.listed if event in LISTING else self.opened, path)
            elif event in SPAWNING:
                self.children.append(event)
            elif event in BLINDING:
                self.blind.add(BLINDING[event])
        except Exception:  # noqa: BLE001  an audit hook that raises aborts the program's operation
            self.blind.add("a file name histeg could not keep")

    def _keep(self, into: set[tuple[str | None, str | bytes]], path: object) -> None:
        absolute = path.startswith("/") if isinstance(path, str) else isinstance(path, bytes) and path.startswith(b"/")
        cwd = None if absolute else os.getcwd()  # an object's text is read later: it keeps the folder too
        if type(path) is str or type(path) is bytes:
            into.add((cwd, path))
        else:
            self.others.append((cwd, path))

    def _under_root(self, entries: Iterable[tuple[str | None, object]]) -> list[str]:
        found = set()
        for cwd, path in entries:
            text = _path_text(path)
            if text is None:
                self.blind.add(f"a path given as a {type(path).__qualname__} object")
                continue
            full = os.path.realpath(os.path.join(cwd, text) if cwd is not None else text)
            if full == self.root or full.startswith(self.root + os.sep):
                found.add(os.path.relpath(full, self.root).replace(os.sep, "/"))
        return sorted(found)

    def write(self, trace_path: str) -> None:
        """``<trace_path>.files``, renamed into place so a reader never sees half of it; recording stops."""
        self._recording = False
        if self._native is not None:
            self._native()
        opened = self._under_root([*self.opened, *self.others])
        listed = self._under_root(self.listed)
        blind = self.blind | _native_modules(self.root, list(sys.modules.values()))
        target = trace_path + SUFFIX
        partial = f"{target}.{os.getpid()}.tmp"
        data = {"format": FORMAT, "opened": opened, "listed": listed, "blind": sorted(blind), "children": len(self.children)}
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(partial, target)


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
