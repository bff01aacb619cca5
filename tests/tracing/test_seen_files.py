"""The files a process read, as its audit hook heard them (``histeg.tracing.seen_files``), in a process of its own:
an audit hook cannot be removed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from histeg.tracing import native
from histeg.tracing.seen_files import read_seen_files

PROGRAM = """
import ctypes, os, pathlib, subprocess, sys
from histeg.tracing.seen_files import SeenFiles

root = sys.argv[1]
seen = SeenFiles(root)
seen.start()
os.chdir(root)
open("relative.txt").read()
open("link.txt").read()
pathlib.Path(root, "by_path.txt").read_text()
open(os.path.join(root, "absolute.txt").encode()).read()
fd = os.open("relative.txt", os.O_RDONLY)
open(fd).close()
os.listdir()
list(os.scandir("folder"))
open("/etc/hostname").close()  # outside the root: not kept
subprocess.run(["true"])
if sys.argv[2] == "ctypes":
    ctypes.CDLL(None)
seen.write(os.path.join(root, "trace.htrace"))
open("after.txt", "w").close()  # recording stopped
"""


def _run(tmp_path: Path, mode: str) -> dict:
    for name in ("relative.txt", "by_path.txt", "absolute.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "folder").mkdir()
    (tmp_path / "target.txt").write_text("x")
    (tmp_path / "link.txt").symlink_to("target.txt")
    result = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path), mode], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    seen = read_seen_files(tmp_path / "trace.htrace")
    assert seen is not None
    return seen


pytestmark = pytest.mark.skipif(not native.available(), reason="the C tracer is not built: nothing is heard")


def test_every_file_opened_and_folder_listed_under_the_root_is_heard(tmp_path: Path) -> None:
    seen = _run(tmp_path, "plain")
    assert seen["opened"] == ["absolute.txt", "by_path.txt", "link.txt", "relative.txt", "target.txt"]  # a link, and what it names
    assert seen["listed"] == [".", "folder"]
    assert seen["children"] == 1 and seen["blind"] == []
    assert json.loads((tmp_path / "trace.htrace.files").read_text())["format"] == 1


def test_a_library_loaded_through_ctypes_makes_the_process_blind(tmp_path: Path) -> None:
    assert _run(tmp_path, "ctypes")["blind"] == ["loaded a library through ctypes"]
