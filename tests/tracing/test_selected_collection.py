"""A traced pytest run given a selection collects only the files holding the selected tests, unless told otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from histeg.tracing.activation import TraceConfig, traced_environment
from histeg.tracing.coverage import SUFFIX as LINES
from histeg.tracing.session import COLLECT_ALL

TEST_A = '''def test_one():
    assert True


def test_two():
    assert True
'''
BROKEN_AT_IMPORT = '''raise RuntimeError("this module was collected")


def test_never():
    pass
'''


def traced_pytest(root: Path, selection: list[str]) -> subprocess.CompletedProcess[str]:
    select = root.parent / "run.select"
    select.write_text("".join(f"{line}\n" for line in selection), encoding="utf-8")
    config = TraceConfig(root=str(root), sources=["."], tests=["tests"], trace_dir=str(root.parent / "traces"),
                         select=str(select), select_parent=os.getpid())
    config_path = root.parent / "traceConfig.json"
    config.write(config_path)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=root, capture_output=True,
                          text=True, env=traced_environment(config_path), timeout=120, check=False)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests" / "other").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text(TEST_A, encoding="utf-8")
    (root / "tests" / "test_b.py").write_text(BROKEN_AT_IMPORT, encoding="utf-8")
    (root / "tests" / "other" / "test_c.py").write_text(BROKEN_AT_IMPORT, encoding="utf-8")
    (root / "tests" / "conftest.py").write_text("import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 42\n", encoding="utf-8")
    return root


def test_only_the_selected_tests_files_are_collected(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = traced_pytest(root, ["tests/test_a.py::test_two"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 deselected" in result.stdout
    assert "this module was collected" not in result.stdout


def test_a_selection_that_asks_for_every_file_collects_them_all(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = traced_pytest(root, [COLLECT_ALL, "tests/test_a.py::test_two"])
    assert result.returncode == 2 and "this module was collected" in result.stdout  # both broken modules were imported


def test_a_selected_run_records_no_line_coverage_a_full_run_does(tmp_path: Path) -> None:
    """The version's executed lines come from its full runs: a targeted re-run pays no second monitoring tool."""
    root = project(tmp_path)
    (root / "tests" / "test_b.py").unlink()
    (root / "tests" / "other" / "test_c.py").unlink()
    result = traced_pytest(root, ["tests/test_a.py::test_two"])
    assert result.returncode == 0, result.stdout + result.stderr
    traces = root.parent / "traces"
    assert list(traces.glob("*.htrace")) and not list(traces.glob(f"*{LINES}"))
    full = TraceConfig(root=str(root), sources=["."], tests=["tests"], trace_dir=str(tmp_path / "full"))
    full.write(tmp_path / "full.json")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=root, capture_output=True,
                   text=True, env=traced_environment(tmp_path / "full.json"), timeout=120, check=True)
    assert [path.name.endswith(LINES) for path in sorted((tmp_path / "full").iterdir())].count(True) == 1
