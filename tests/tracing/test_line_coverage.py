"""The line coverage tool hears lines through the C collector's ``LineSet`` (no Python of histeg runs on a line event)
and records what its Python reference records."""

from __future__ import annotations

import sys
from pathlib import Path
from types import MethodType

from histeg.tracing import _ctracer
from histeg.tracing.coverage import SUFFIX, LineCoverage, read_lines
from histeg.tracing.monitor import TOOL_IDS
from histeg.tracing.selection import Selector
from tests.tracing.conftest import run_project

FILES = {
    "src/shape.py": '''
        TABLE = {
            "a": 1,
            "b": 2,
        }


        def area(kind, size):
            if kind == "square":
                return size * size
            total = 0
            for _ in range(size):
                total += size
            return total


        class Box:
            side = 3

            def volume(self):
                return self.side ** 3
    ''',
    "tests/test_shape.py": '''
        from shape import Box, area


        def test_area():
            assert area("square", 2) == 4
            assert area("other", 3) == 9


        def test_box():
            assert Box().volume() == 27
    ''',
}


def _covered(tmp_path: Path, tracer: str) -> dict[str, list[int]]:
    run = run_project(tmp_path / tracer, FILES, tracer=tracer)
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    [trace] = [path for path in (tmp_path / tracer / "traces").iterdir() if path.suffix == ".htrace"]
    return {name: sorted(lines) for name, lines in read_lines(str(trace) + SUFFIX).items()}


def test_the_c_line_callback_records_what_the_python_one_does(tmp_path: Path) -> None:
    native, reference = _covered(tmp_path, "c"), _covered(tmp_path, "python")
    assert native == reference
    assert native["src/shape.py"] == [1, 2, 3, 7, 8, 9, 10, 11, 12, 13, 16, 17, 19, 20]
    assert native["tests/test_shape.py"] == [1, 4, 5, 6, 9, 10]


def test_beside_the_c_collector_no_python_callback_hears_a_line(tmp_path: Path) -> None:
    """What the signal test can catch only by chance (a tick landing on a line's first run), said outright."""
    for native, kind in ((True, _ctracer.LineSet), (False, MethodType)):
        coverage = LineCoverage(Selector(str(tmp_path), ["src"], ["tests"]), native=native)
        assert coverage.start(TOOL_IDS)
        try:
            assert coverage.tool is not None
            assert isinstance(sys.monitoring.register_callback(coverage.tool, sys.monitoring.events.LINE, None), kind)
        finally:
            coverage.stop()


PROBE = '''
    import sys


    def test_which_callback_hears_lines():
        monitoring = sys.monitoring
        [tool] = [tool for tool in range(6) if monitoring.get_tool(tool) == "histeg-lines"]
        callback = monitoring.register_callback(tool, monitoring.events.LINE, None)
        monitoring.register_callback(tool, monitoring.events.LINE, callback)
        print("LINE-CALLBACK", type(callback).__name__)
'''


def test_a_traced_run_with_the_c_collector_hears_lines_in_c(tmp_path: Path) -> None:
    for tracer, name in (("c", "LineSet"), ("python", "method")):
        files = {"src/empty.py": "", "tests/test_probe.py": PROBE}
        run = run_project(tmp_path / tracer, files, sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "tests",
                          tracer=tracer)
        assert f"LINE-CALLBACK {name}" in run.proc.stdout, run.proc.stdout + run.proc.stderr
