"""Changes without runtime meaning: formatting, comments and grouping parentheses are no syntax change;
docstrings are one, of significance none."""

from __future__ import annotations

from tests.syntax.helpers import changes

OLD = '''
def area(width, height):
    """The area."""
    total = width * height  # square units
    return total


def scaled(a, b, c):
    return (a + b) * c
'''

REFORMATTED = '''
def area(width,
         height):
    """The area."""
    # a new comment
    total = (width*height)  # units squared
    return (total)


def scaled(a, b, c):
    return ((a + b)) * c
'''


def test_formatting_comments_and_parentheses_are_no_change() -> None:
    assert changes(OLD, REFORMATTED) == []


def test_parentheses_that_change_precedence_are_a_change() -> None:
    found = changes(OLD, OLD.replace("return (a + b) * c", "return a + b * c"))
    assert [change.entity for change in found] == ["m:scaled"] and found[0].significance != "none"


def test_a_docstring_is_a_change_without_runtime_meaning() -> None:
    (found,) = changes(OLD, OLD.replace('"""The area."""', '"""The area, in square units."""'))
    assert (found.entity, found.code_type, found.significance) == ("m:area", "docstring", "none")
