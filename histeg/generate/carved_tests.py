"""Carved calls written as plain pytest files a reviewer reads: imports, the call, the old result asserted.

No pickles, no encoded blobs, no ``eval``: every value is a literal or a call of
a standard-library constructor, and every file is compiled before it is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from histeg.generate.carving import CarvedCall

TYPE_NAME = '''def _type_name(value: object) -> str:
    """A type as the trace named it: compared by name, so that this file imports no other module of the project."""
    return f"{type(value).__module__}.{type(value).__qualname__}"
'''


@dataclass(frozen=True)
class CarvedFile:
    name: str
    source: str
    tests: list[tuple[str, CarvedCall]]
    """Each test function's name with the call it repeats."""


def test_name(call: CarvedCall, number: int) -> str:
    stem = re.sub(r"\W", "_", call.qualname).strip("_").lower()
    outcome = "raises_old_exception" if call.raises is not None else "keeps_old_result"
    return f"test_{stem}_{outcome}_{number}"


def carved_file(target: str, rank: int, calls: Sequence[CarvedCall], header: str) -> CarvedFile:
    """One file per target: its carved calls as tests, numbered in the order given."""
    imports: set[str] = set()
    bodies: list[str] = []
    tests: list[tuple[str, CarvedCall]] = []
    for number, call in enumerate(calls, 1):
        name = test_name(call, number)
        body, needed = _test(name, call)
        imports |= needed
        bodies.append(body)
        tests.append((name, call))
    plain = sorted(line for line in imports if line.startswith("import "))
    project = sorted(line for line in imports if line.startswith("from "))
    lines = [f'"""{header}"""', "", *plain, *([""] if plain and project else []), *project, "", "", ""]
    if any("_type_name(" in body for body in bodies):
        bodies.insert(0, TYPE_NAME.rstrip())
    source = "\n".join(lines) + "\n\n\n".join(body.rstrip("\n") for body in bodies) + "\n"
    compile(source, f"carved test of {target}", "exec")
    stem = re.sub(r"\W", "_", target.replace(":", "_")).strip("_").lower()
    return CarvedFile(f"test_{rank:02d}_{stem}.py", source, tests)


def _test(name: str, call: CarvedCall) -> tuple[str, set[str]]:
    imports: set[str] = set()
    lines = [f"def {name}() -> None:"]
    entry = call.candidate.entry_point
    lines.append(f"    # recorded under {entry.label or entry.root}, call path {list(call.candidate.call_path)}")
    arguments = [e.source for e in call.positional] + [f"**{e.source}" if k == "**" else f"{k}={e.source}" for k, e in call.keywords]
    for expression in [*call.positional, *(e for _, e in call.keywords)]:
        imports |= expression.imports
    method = call.qualname.rpartition(".")[2]
    if call.receiver is not None:
        imports |= call.receiver.imports
        lines.append("    # the receiver's state was rebuilt from a trace: made without __init__, its recorded attributes set")
        lines.append(f"    receiver = {call.receiver.source}")
        for attribute, value in sorted(call.state.items()):
            imports |= value.imports
            lines.append(f"    object.__setattr__(receiver, {attribute!r}, {value.source})")
        callee = f"receiver.{method}"
    elif call.owner is not None:
        imports |= call.owner.imports
        callee = f"{call.owner.source}.{method}"
    else:
        top = call.qualname.partition(".")[0]
        imports.add(f"from {call.module} import {top}")
        callee = call.qualname
    invocation = f"{callee}({', '.join(arguments)})"
    if call.raises is not None:
        imports.add("import pytest")
        builtin = "." not in call.raises
        lines.append(f"    with pytest.raises({call.raises if builtin else 'Exception'}) as raised:")
        lines.append(f"        {invocation}")
        if not builtin:
            lines.append(f"    assert _type_name(raised.value) == {call.raises!r}")
        if call.raised_args is not None:
            imports |= call.raised_args.imports
            lines.append(f"    assert raised.value.args == {call.raised_args.source}")
        return "\n".join(lines) + "\n", imports
    lines.append(f"    result = {invocation}")
    if call.expected is not None:
        imports |= call.expected.imports
        comparison = "is" if call.expected.source in ("None", "True", "False") else "=="
        lines.append(f"    assert result {comparison} {call.expected.source}")
    else:
        lines.append("    # the old result was an object: its type and its recorded attributes")
        lines.append(f"    assert _type_name(result) == {call.expected_type!r}")
        for attribute, value in sorted(call.expected_fields.items()):
            imports |= value.imports
            lines.append(
                f"    assert result.{attribute} == {value.source}"
                if attribute.isidentifier()
                else f"    assert getattr(result, {attribute!r}) == {value.source}"
            )
    return "\n".join(lines) + "\n", imports


__all__ = ["CarvedFile", "carved_file", "test_name"]
