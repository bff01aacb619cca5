"""Progress bars on a terminal, plain lines elsewhere: a real histeg on a real pseudo-terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import GitRepo, run_histeg


def small_repository(path: Path) -> GitRepo:
    repo = GitRepo.create(path)
    for number in range(3):
        repo.commit(f"commit {number}", {"pkg/__init__.py": f"VALUE = {number}\n", "tests/test_pkg.py": "def test_it():\n    pass\n"})
    return repo


def test_a_terminal_gets_progress_bars_and_a_pipe_gets_none(tmp_path: Path) -> None:
    repo = small_repository(tmp_path / "repo")
    primary, secondary = os.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "histeg", "extract", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "tty")],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=secondary, env={**os.environ, "COLUMNS": "100"})
        os.close(secondary)
        seen = bytearray()
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
        assert process.wait(60) == 0, seen.decode(errors="replace")
    finally:
        os.close(primary)
    text = seen.decode(errors="replace")
    assert "extracting versions" in text and "━" in text and "100%" in text
    piped = run_histeg("extract", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "pipe"))
    assert piped.code == 0 and "━" not in piped.stderr
