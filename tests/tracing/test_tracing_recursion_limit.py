"""A test that hits the recursion limit must not swallow the tests after it."""

from __future__ import annotations

FILES = {
    "src/deep.py": '''
        def deep(n):
            if n == 0:
                return 0
            return deep(n - 1) + 1


        def after():
            return 1
    ''',
    "tests/test_deep.py": '''
        import sys

        import pytest

        from deep import after, deep


        def test_deep():
            with pytest.raises(RecursionError):
                deep(sys.getrecursionlimit() + 5)


        def test_after():
            assert after() == 1
    ''',
}


def test_entry_points_after_a_recursion_error_are_roots_again(traced) -> None:
    run = traced(FILES)
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    after = run.entry("test_after")
    assert [c.function.ident for c in after.walk()] == ["tests.test_deep:test_after", "deep:after"]
    assert run.entry("test_deep").function.ident == "tests.test_deep:test_deep"
