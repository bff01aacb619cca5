"""Relations that must hold over many program pairs, generated and hand-written."""

from __future__ import annotations

import re

import pytest
from tests.syntax.helpers import ProgramGenerator, apply_script, changes, same_shape, script, tree

SEEDS = range(40)


def _mutate(program: str, seed: int) -> str:
    """Change one number, one operator and drop one line: a realistic small edit."""
    lines = program.splitlines()
    index = (seed * 7) % len(lines)
    lines[index] = re.sub(r"\d+", lambda m: str(int(m.group()) + 1), lines[index], count=1)
    target = (seed * 13) % len(lines)
    lines[target] = lines[target].replace(" + ", " - ", 1)
    candidates = [i for i, line in enumerate(lines) if line.strip().startswith("print(")]
    if candidates:
        del lines[candidates[seed % len(candidates)]]
    mutated = "\n".join(lines) + "\n"
    return mutated if mutated != program else mutated + "EXTRA = 1\n"


@pytest.mark.parametrize("seed", SEEDS)
def test_identical_programs_have_no_change(seed: int) -> None:
    program = ProgramGenerator(seed).module()
    assert changes(program, program) == []


@pytest.mark.parametrize("seed", SEEDS)
def test_comments_and_whitespace_are_no_change(seed: int) -> None:
    program = ProgramGenerator(seed).module()
    noisy = []
    for number, line in enumerate(program.splitlines()):
        stripped = line.strip()
        if number % 3 == 0:
            noisy.append(f"{line}  # note {number}" if stripped and not stripped.endswith(":") else line)
        elif number % 3 == 1:
            noisy.append(re.sub(r"([=+\-*,])", r" \1 ", line))  # extra spaces inside the line
            noisy.append("")
        else:
            noisy.append(" " * (len(line) - len(line.lstrip())) + "# a comment line")
            noisy.append(line)
    assert changes(program, "\n".join(noisy) + "\n") == []


@pytest.mark.parametrize("seed", SEEDS)
def test_swapping_versions_swaps_additions_and_removals(seed: int) -> None:
    old = ProgramGenerator(seed).module()
    new = _mutate(old, seed)
    forward = changes(old, new)
    backward = changes(new, old)
    assert forward, "the mutation changes something"
    swap = {"addition": "removal", "removal": "addition"}

    def kinds(found, mirrored):  # type: ignore[no-untyped-def]
        return sorted((swap.get(c.type, c.type) if mirrored else c.type, c.code_type) for c in found)

    assert kinds(forward, False) == kinds(backward, True)
    for c in forward:
        if c.type in ("modification", "move"):
            assert any(b.type == c.type and b.before == c.after and b.after == c.before for b in backward)


@pytest.mark.parametrize("seed", SEEDS)
def test_edit_script_turns_old_tree_into_new(seed: int) -> None:
    old = ProgramGenerator(seed).module()
    new = _mutate(ProgramGenerator(seed + 1000).module() if seed % 4 == 0 else old, seed)
    edit = script(old, new)
    assert same_shape(apply_script(tree(old), edit), tree(new).root)


LOCAL_RENAME_CASES = [
    (
        """
        def area(width, height):
            result = width * height
            return result

        def other(result):
            return result + 1
        """,
        "area",
        "result",
        "surface",
    ),
    (
        """
        class Shape:
            def scale(self, factor):
                size = self.size * factor
                if size > 10:
                    size = 10
                return size

            def size_of(self):
                size = 3
                return size
        """,
        "scale",
        "size",
        "scaled",
    ),
]


def _rename_local(program: str, function: str, old: str, new: str) -> str:
    """Rename ``old`` to ``new`` inside ``def function`` only (whole words)."""
    out, inside, indent = [], False, 0
    for line in program.splitlines():
        stripped = line.lstrip()
        current = len(line) - len(stripped)
        if stripped.startswith(f"def {function}("):
            inside, indent = True, current
        elif inside and stripped and current <= indent:
            inside = False
        out.append(re.sub(rf"\b{old}\b", new, line) if inside and not stripped.startswith("def ") else line)
    return "\n".join(out) + "\n"


def _generated_rename_cases() -> list[tuple[str, str, str, str]]:
    cases = []
    for seed in range(30):
        program = ProgramGenerator(seed).module()
        match = re.search(r"^def (func_\d+)\(.*\n((?:    .*\n|\n)*)", program, re.M)
        if not match:
            continue
        body = match.group(2)
        assigned = re.search(r"^\s+(alpha|beta|gamma|delta|total|count|value|item) = ", body, re.M)
        if assigned and re.search(r"\bfresh_name\b", program) is None:
            cases.append((program, match.group(1), assigned.group(1), "fresh_name"))
    return cases


@pytest.mark.parametrize(("program", "function", "old", "new"), LOCAL_RENAME_CASES + _generated_rename_cases())
def test_local_rename_is_confined_to_its_function(program: str, function: str, old: str, new: str) -> None:
    from textwrap import dedent

    program = dedent(program).lstrip("\n")
    renamed = _rename_local(program, function, old, new)
    if renamed == program:
        pytest.skip("nothing to rename")
    found = changes(program, renamed)
    assert found
    for change in found:
        assert change.level == "function" and change.entity.split(":")[1].endswith(function)
        assert change.type in ("modification", "rename")
        assert change.edits and all(edit == f"update identifier '{old}' → '{new}'" for edit in change.edits), change.edits
