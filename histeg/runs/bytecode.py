"""The bytecode a version's full run compiled, kept beside its traces so that no later run compiles it again.

Every run works in a fresh copy of the snapshot, so each one compiled the
project's modules and had pytest rewrite and compile its test modules and
``conftest.py`` files: on sqlparse's suite 4.1 G of the 18.1 G instructions
of an untraced run (a user's second run, with ``__pycache__`` in place, makes
14.0 G), and most of a targeted re-run of a few tests. The full run now
writes bytecode into its copy, as any run of a checkout does; what it wrote
for the snapshot's own files is kept in ``traces/bytecode.zst`` (replaced with
the traces; one zstd frame of a msgpack map from each file's place in the
snapshot to its bytes: sqlparse's 0.94 MB of ``.pyc`` files take 0.18 MB) and
put into every later run's copy before it starts.

Nothing runs stale code: Python takes a module's ``.pyc`` only while the
source's size and time stamp are those recorded in it (every copy keeps the
snapshot's), and pytest takes a rewritten test module only while its recorded
source hash matches. What a pyc cannot say is where it was compiled: Python
corrects a moved ``.pyc``'s file names as it loads it, but pytest did not
before 9.2 (its rewritten module then names the full run's copy, and the
tracer, which places code by its file name, would not see the tests of a
re-run made elsewhere). So rewritten modules go only to runs whose pytest
corrects them, found once per interpreter; and since those are checked by
the source's content, a version's full run also starts with its
predecessor's, for the test files the commit did not change.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import msgspec
import zstandard

from histeg.atomic import write_bytes

BYTECODE = "bytecode.zst"
"""Inside ``traces/``: the full run's ``.pyc`` files, by their places in the snapshot."""
CACHE = "__pycache__"
REWRITTEN = "-pytest-"
"""In the name of a test module pytest rewrote: ``test_x.cpython-312-pytest-9.2.0.pyc``."""
LEVEL = 3
_PORTABLE_PROBE = (
    "import importlib.util as u, os\n"
    "s = u.find_spec('_pytest')\n"
    "f = s and s.origin and os.path.join(os.path.dirname(s.origin), 'assertion', 'rewrite.py')\n"
    "print(bool(f and os.path.isfile(f) and '_fix_code_filename' in open(f, encoding='utf-8').read()))\n"
)
"""Finds the package, then reads the file: a submodule's spec would import its parents (``_pytest.assertion``: 0.3 s)."""


@functools.cache
def rewrites_move(python: str) -> bool:
    """pytest in ``python``'s environment gives a rewritten module loaded from a moved ``.pyc`` its own file name
    (pytest 9.2 and later), found from its source without importing it; False when that cannot be told."""
    try:
        done = subprocess.run(
            [python, "-I", "-c", _PORTABLE_PROBE], check=False, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == "True"


def read_kept(archive: Path) -> dict[str, bytes]:
    """The kept files by their places; none when there is no archive or it cannot be read (it is only ever a saving)."""
    try:
        return msgspec.msgpack.decode(zstandard.ZstdDecompressor().decompress(archive.read_bytes()), type=dict[str, bytes])
    except (OSError, zstandard.ZstdError, msgspec.DecodeError):
        return {}


def harvest(run_copy: Path, snapshot: Path, archive: Path) -> int:
    """Add to ``archive`` the ``.pyc`` files the run wrote for modules of the snapshot (not for files the tests made);
    returns how many. A file that cannot be read is left out."""
    found: dict[str, bytes] = {}
    for cache in sorted(run_copy.rglob(CACHE)):
        if not cache.is_dir() or cache.is_symlink():
            continue
        relative = cache.parent.relative_to(run_copy)
        for pyc in sorted(cache.glob("*.pyc")):
            if not (snapshot / relative / f"{pyc.name.split('.', 1)[0]}.py").is_file():
                continue
            try:
                found[(relative / CACHE / pyc.name).as_posix()] = pyc.read_bytes()
            except OSError:
                continue
    if found:
        kept = {**read_kept(archive), **found}
        write_bytes(archive, zstandard.ZstdCompressor(level=LEVEL).compress(msgspec.msgpack.encode(dict(sorted(kept.items())))))
    return len(found)


def overlay(archive: Path, run_copy: Path, *, rewritten: bool, only_rewritten: bool = False) -> int:
    """Put the kept ``.pyc`` files into a run's fresh copy; pytest's rewritten modules only when ``rewritten``, and
    nothing else when ``only_rewritten`` (another version's modules, whose time stamps are not this snapshot's).
    Returns how many; an archive that is gone or replaced meanwhile (another version's traces) gives fewer, never an error."""
    placed = 0
    for relative, data in read_kept(archive).items():
        is_rewritten = REWRITTEN in relative
        if (is_rewritten and not rewritten) or (only_rewritten and not is_rewritten):
            continue
        target = run_copy / relative
        if ".." in Path(relative).parts or not target.parent.parent.is_dir():
            continue  # a folder this version does not have
        try:
            target.parent.mkdir(exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(data)
        except OSError:
            continue
        placed += 1
    return placed


__all__ = ["BYTECODE", "harvest", "overlay", "read_kept", "rewrites_move"]
