"""The thesis' examples (figures 3.1, 4.4, 4.5), in Python."""

from __future__ import annotations

import itertools

import pytest
from tests.syntax.helpers import changes, summary

# Figure 3.1: four programs with the same output.
ORIGINAL = '''
"""Example program"""


def main():
    i = 5
    while i >= 0:
        if i == 0:
            print(str(i) + "!!!")
        else:
            print(str(i) + "...")
        i = i - 1
    return
'''
NEW_FIELD = '''
"""Example program"""

flag = False


def main():
    global flag
    i = 5
    while i >= 0:
        if i == 0 or flag:
            print(str(i) + "!!!")
            flag = True
        else:
            print(str(i) + "...")
        i = i - 1
    return
'''
COMMENTED = '''
"""Example program"""


# Program entry point
def main():
    i = 5
    # Counts down from 5 to 0!
    while i >= 0:
        if i == 0:
            print(str(i) + "!!!")
        else:
            print(str(i) + "...")
        i = i - 1  # decrease counter
    return
'''
RESTRUCTURED = '''
"""Example program"""


def main():
    i = 5
    while i > 0:
        print(str(i) + "...")
        if i == 1:
            print("0!!!")
        i = i - 1
    return
'''
PROGRAMS = {"a": ORIGINAL, "b": NEW_FIELD, "c": COMMENTED, "d": RESTRUCTURED}


@pytest.mark.parametrize(("old", "new"), list(itertools.permutations(PROGRAMS, 2)))
def test_figure_3_1_pairs(old: str, new: str) -> None:
    found = changes(PROGRAMS[old], PROGRAMS[new])
    if {old, new} == {"a", "c"}:
        assert found == []
    else:
        assert found, f"{old} → {new}"
        assert all(c.entity in ("m:main", "m:flag") for c in found)


def test_figure_3_1_new_field() -> None:
    found = summary(changes(ORIGINAL, NEW_FIELD))
    assert found == {
        ("m:flag", "addition", "constant"),
        ("m:main", "addition", "statement"),  # global flag
        ("m:main", "modification", "condition"),  # i == 0 or flag
        ("m:main", "addition", "assignment"),  # flag = True
    }


def test_figure_3_1_restructured_loop() -> None:
    found = changes(ORIGINAL, RESTRUCTURED)
    assert summary(found) == {
        ("m:main", "modification", "loop"),
        ("m:main", "removal", "condition"),
        ("m:main", "addition", "condition"),
        ("m:main", "move", "call"),
    }
    loop = next(c for c in found if c.code_type == "loop")
    assert (loop.before, loop.after) == ("while i >= 0:", "while i > 0:")
    assert loop.old_lines == (6, 6) and loop.new_lines == (6, 6)


def test_figure_4_4_field_type_change_is_one_modification() -> None:
    old = """
        class DateTimeFormat:
            PATTERN_CACHE: dict[str, "Formatter"] = {}

            def get_formatter(self, locale):
                pattern = self.pattern
                f = DateTimeFormat.for_pattern(pattern)
                return f
        """
    new = """
        class DateTimeFormat:
            PATTERN_CACHE: ConcurrentHashMap[str, "Formatter"] = ConcurrentHashMap()

            def get_formatter(self, locale):
                pattern = self.pattern
                f = DateTimeFormat.for_pattern(get_pattern(locale))
                return f
        """
    found = changes(old, new)
    field = [c for c in found if c.entity == "m:DateTimeFormat.PATTERN_CACHE"]
    assert len(field) == 1
    assert field[0].type == "modification" and field[0].level == "class" and field[0].klass == "m:DateTimeFormat"
    assert field[0].after == 'PATTERN_CACHE: ConcurrentHashMap[str, "Formatter"] = ConcurrentHashMap()'
    method = [c for c in found if c.level == "function"]
    assert [(c.entity, c.type, c.code_type) for c in method] == [("m:DateTimeFormat.get_formatter", "modification", "assignment")]
    assert method[0].before == "f = DateTimeFormat.for_pattern(pattern)"
    assert method[0].after == "f = DateTimeFormat.for_pattern(get_pattern(locale))"
    assert len(found) == 2


def test_figure_4_4_unpaired_field_rewrite_still_one_modification() -> None:
    """Even where nothing of the old statement survives, the same name makes it one change."""
    old = "class C:\n    CACHE = {}\n    OTHER = 1\n    def f(self):\n        return 1\n"
    new = "class C:\n    CACHE: Mapping[str, int] = make_cache(size=3)\n    OTHER = 1\n    def f(self):\n        return 1\n"
    found = changes(old, new)
    assert [(c.entity, c.type) for c in found] == [("m:C.CACHE", "modification")]


def test_figure_4_5_constant_values_are_changes() -> None:
    old = """
        class Main:
            text = "Lalala"
            num = 12

            def main(self):
                return self.num
        """
    new = """
        class Main:
            text = "Lalalala"
            num = 4 + len(text)

            def main(self):
                return self.num
        """
    found = changes(old, new)
    assert summary(found) == {("m:Main.text", "modification", "constant"), ("m:Main.num", "modification", "assignment")}
    text = next(c for c in found if c.entity == "m:Main.text")
    assert (text.before, text.after, text.significance) == ('text = "Lalala"', 'text = "Lalalala"', "high")


def test_module_constant_value_change() -> None:
    found = changes("WIN = 750\nBET = 250\n", "WIN = 800\nBET = 250\n")
    assert [(c.entity, c.level, c.type, c.code_type, c.edits) for c in found] == [
        ("m:WIN", "module", "modification", "constant", ["update integer '750' → '800'"])
    ]
