"""A real Pynguin run on a module that raises at import: a failed status with a one-line reason, and a log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from histeg.generate.pynguin_run import run_pynguin
from histeg.generate.tool import pynguin_tool


@pytest.mark.slow  # starts Pynguin in an environment of its own (8 s)
def test_a_module_raising_at_import_fails_with_one_line(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "bad.py").write_text(
        'raise RuntimeError("the bad module cannot be imported")\n\n\ndef f(x: int) -> int:\n    return x\n'
    )
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    tool = pynguin_tool(sys.executable)  # made once per interpreter, then reused
    run = run_pynguin(
        tool.python,
        project,
        [],
        "pkg.bad",
        ["f"],
        2,
        0,
        output=tmp_path / "out",
        work=tmp_path / "work",
        log=tmp_path / "bad.log",
        groups=tmp_path / "groups",
    )
    assert run.status == "failed"
    assert run.reason is not None and "\n" not in run.reason
    assert "the bad module cannot be imported" in run.reason
    assert run.test_files == []
    log = (tmp_path / "bad.log").read_text()
    assert "--module-name pkg.bad" in log and "the bad module cannot be imported" in log
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before  # nothing written into the project
    assert not list((tmp_path / "groups").glob("*.json"))  # its process group was recorded, and released
