"""Rule 1 for the garbage collector: the program is collected as often under tracing as without it.

CPython starts a young collection once enough container objects were allocated since the last one. What the
collector allocates and keeps while it records values (keys, value records, its tables) used to count towards that
schedule: a suite whose calls pass new objects was collected much more often traced, so finalizers and weak
reference callbacks ran at other points, and each extra collection traversed the program's young objects (on a
parser's suite, 423 young collections traced against 260 untraced). The C collector takes its own allocations back
off the count when a callback ends; the Python reference, whose callbacks are Python code, cannot.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROJECT = {
    "src/shapes.py": '''
        class Point:
            def __init__(self, x, y, tag):
                self.x = x
                self.y = y
                self.tag = tag


        def moved(point, by):
            return Point(point.x + by[0], point.y - by[0], (point.tag, by[1]))


        def walk(count, name):
            kept = []
            point = Point(0, 0, "start")
            for i in range(count):
                point = moved(Point(i, -i, f"{name} {i}"), [i % 7, f"by {i}"])  # new values every call: new keys, new records
                kept.append((point.x, [point.y]))  # the program's own containers, which decide its schedule
            return len(kept)
        ''',
    "tests/conftest.py": '''
        import gc
        import json

        START = []


        def pytest_sessionstart(session):
            gc.set_threshold(700, 10, 10)  # 3.12's, on 3.13 too (2,000 there)
            gc.collect()
            START.append(gc.get_stats()[0]["collections"])


        def pytest_sessionfinish(session, exitstatus):
            with open("collections.json", "w") as out:  # in the project's folder, where pytest runs
                json.dump(gc.get_stats()[0]["collections"] - START[0], out)
        ''',
    "tests/test_shapes.py": '''
        import pytest

        from shapes import walk


        @pytest.mark.parametrize("n", range(1500))
        def test_walk(n):
            assert walk(3 + n % 5, f"p{n}") == 3 + n % 5  # many short tests, each with values of its own
        ''',
}


def young_collections(run_project: Any, project: Path, **options: Any) -> int:
    run = run_project(project, PROJECT, **options)
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    return int(json.loads((project / "collections.json").read_text()))


def test_a_program_is_collected_as_often_traced_as_untraced(project_runner: Any, tmp_path: Path) -> None:
    untraced = young_collections(project_runner, tmp_path / "untraced", trace=False)
    traced = young_collections(project_runner, tmp_path / "traced", tracer="c")
    assert untraced >= 50  # the program's and pytest's own allocations make a schedule worth comparing
    # What the C callbacks allocate no longer counts. What is left (88 against 74 where this was written) comes with
    # values, from outside the callbacks: with values off the counts are equal. Before: 225 against 74.
    assert untraced * 0.9 <= traced <= untraced * 1.3, f"{traced} young collections traced, {untraced} untraced"
