"""The line coverage tool hears lines through the C collector's ``LineSet`` (no Python of histeg runs on a line event)
and records what its Python reference records."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from types import CodeType, MethodType

from histeg.tracing import _ctracer
from histeg.tracing.coverage import SUFFIX, LineCoverage, far_lines, read_lines
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


LONG_BODIES = "\n".join(
    [
        "FLAG = False",
        "KEYWORDS = {",
        *(f'    "k{n}": {n},' for n in range(300)),
        "}",
        "if FLAG:",
        "    NEVER = 1",
        "",
        "",
        "class Rules:",
        *(f"    a{n} = {n}" for n in range(200)),
        "",
        "    def pick(self):",
        "        return self.a1 + KEYWORDS['k2']",
        "",
    ]
)
LONG_TEST = "from table import Rules\n\n\ndef test_pick():\n    assert Rules().pick() == 3\n"


def _heard_through_line_events(text: str, filename: str) -> list[int]:
    """The reference: the lines a plain ``LINE`` tool hears when the module runs and ``Rules().pick()`` is called."""
    monitoring = sys.monitoring
    tool = next(tool for tool in range(6) if monitoring.get_tool(tool) is None)
    heard: set[int] = set()

    def started(code, offset):  # noqa: ANN001, ANN202
        if code.co_filename == filename:
            monitoring.set_local_events(tool, code, monitoring.events.LINE)
        return monitoring.DISABLE

    def line(code, number):  # noqa: ANN001, ANN202
        heard.add(number)
        return monitoring.DISABLE

    monitoring.use_tool_id(tool, "reference")
    try:
        monitoring.register_callback(tool, monitoring.events.PY_START, started)
        monitoring.register_callback(tool, monitoring.events.LINE, line)
        monitoring.set_events(tool, monitoring.events.PY_START)
        namespace: dict = {"__name__": "table"}
        exec(compile(text, filename, "exec"), namespace)
        assert namespace["Rules"]().pick() == 3
    finally:
        monitoring.set_events(tool, 0)
        monitoring.free_tool_id(tool)
    return sorted(heard)


def test_long_bodies_are_heard_through_instruction_events_and_give_the_lines_line_events_give(tmp_path: Path) -> None:
    """A 300-entry table and a 200-line class body: lines CPython would look up with a scan of the line table on every
    line event. Their bodies are heard through instruction events (the function's through line events) and give the
    very lines a line tool hears, with either collector."""
    module = compile(LONG_BODIES, "table.py", "exec")
    body = next(const for const in module.co_consts if isinstance(const, CodeType) and const.co_name == "Rules")
    assert far_lines(module) is not None and far_lines(body) is not None
    assert far_lines(compile(textwrap.dedent(FILES["src/shape.py"]), "shape.py", "exec")) is None
    files = {"src/table.py": LONG_BODIES, "tests/test_table.py": LONG_TEST}
    expected = _heard_through_line_events(LONG_BODIES, "table.py")
    assert 304 in expected and 305 not in expected and 511 in expected  # "if FLAG:" runs, "NEVER = 1" does not
    for tracer in ("c", "python"):
        run = run_project(tmp_path / tracer, files, tracer=tracer)
        assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
        [trace] = [path for path in (tmp_path / tracer / "traces").iterdir() if path.suffix == ".htrace"]
        assert sorted(read_lines(str(trace) + SUFFIX)["src/table.py"]) == expected, tracer


def test_a_body_whose_lines_another_tool_hears_keeps_line_events(tmp_path: Path) -> None:
    """A tool that disables a line there would take the instruction event of the line's first instruction with it."""
    coverage = LineCoverage(Selector(str(tmp_path), ["."], []), native=True)
    monitoring = sys.monitoring
    assert coverage.start(TOOL_IDS)
    other = next(tool for tool in range(6) if monitoring.get_tool(tool) is None)
    monitoring.use_tool_id(other, "other")
    try:
        for heard, expected in ((0, monitoring.events.INSTRUCTION), (monitoring.events.LINE, monitoring.events.LINE)):
            code = compile(LONG_BODIES, str(tmp_path / f"table{heard}.py"), "exec")
            monitoring.set_local_events(other, code, heard)
            coverage._started(code, 0)
            assert coverage.tool is not None
            assert monitoring.get_local_events(coverage.tool, code) == expected
            monitoring.set_local_events(coverage.tool, code, 0)
    finally:
        monitoring.free_tool_id(other)
        coverage.stop()
