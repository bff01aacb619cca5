"""Values are recorded for the first calls of a function per entry point only."""

from __future__ import annotations

from histeg.traces.records import Value

FILES = {
    "src/hot.py": '''
        def square(x):
            return x * x


        def total(n):
            return sum(square(i) for i in range(n))
    ''',
    "tests/test_hot.py": '''
        from hot import total


        def test_first():
            assert total(10) == 285


        def test_second():
            assert total(3) == 5
    ''',
}


def test_budget_per_function_and_entry_point(traced) -> None:
    run = traced(FILES, value_budget=4)
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    first = [c for c in run.entry("test_first").walk() if c.function.ident == "hot:square"]
    assert len(first) == 10
    assert [c.params for c in first[:4]] == [[Value("int", str(i))] for i in range(4)]
    assert [c.returned for c in first[:4]] == [Value("int", str(i * i)) for i in range(4)]
    assert all(c.params == [None] and c.returned is None for c in first[4:])
    assert all(len(c.lines) == 1 for c in first)  # lines are recorded for every call
    second = [c for c in run.entry("test_second").walk() if c.function.ident == "hot:square"]
    assert [c.params for c in second] == [[Value("int", str(i))] for i in range(3)]  # the budget starts afresh


def test_budget_zero_records_every_call(traced) -> None:
    run = traced(FILES, value_budget=0)
    calls = [c for c in run.entry("test_first").walk() if c.function.ident == "hot:square"]
    assert [c.returned for c in calls] == [Value("int", str(i * i)) for i in range(10)]
