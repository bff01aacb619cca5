"""Inputs that must not crash or hang the syntax analysis."""

from __future__ import annotations

import time

import pytest
from tests.syntax.helpers import changes

from histeg.syntax.classify import FileContext
from histeg.syntax.diff import diff_sources
from histeg.syntax.options import SyntaxOptions
from histeg.syntax.parse import SourceTooLarge, parse_source

CONTEXT = FileContext("m.py", "m.py", "m", "m")


def test_syntax_errors_are_flagged_and_the_rest_compared() -> None:
    old = b"def ok():\n    return 1\n\ndef broken(:\n    pass\n"
    new = b"def ok():\n    return 2\n\ndef broken(:\n    pass\n"
    result = diff_sources(old, new, CONTEXT).result
    assert result.parse_errors
    assert any(c.entity == "m:ok" and c.type == "modification" for c in result.changes)


def test_mixed_tabs_and_spaces() -> None:
    old = b"def f(x):\n\tif x:\n\t\treturn 1\n        return 2\n"
    new = b"def f(x):\n\tif x:\n\t\treturn 1\n        return 3\n"
    found = diff_sources(old, new, CONTEXT).result.changes
    assert [c.code_type for c in found] == ["return"]


def test_non_utf8_bytes_are_replaced_and_flagged() -> None:
    old = b"NAME = 'caf\xe9'\n"
    new = b"NAME = 'caf\xe9!'\n"
    result = diff_sources(old, new, CONTEXT).result
    assert result.decode_errors
    assert [(c.entity, c.after) for c in result.changes] == [("m:NAME", "NAME = 'caf\ufffd!'")]


def test_declared_encoding_is_honoured() -> None:
    parsed = parse_source("# -*- coding: latin-1 -*-\nNAME = 'café'\n".encode("latin-1"))
    assert not parsed.decode_errors
    assert "café" in parsed.tree.text(parsed.tree.root)


def test_empty_files() -> None:
    assert changes("", "") == []
    found = changes("", "X = 1\n")
    assert [(c.entity, c.type) for c in found] == [("m:X", "addition")]
    assert [(c.entity, c.type) for c in changes("X = 1\n", "")] == [("m:X", "removal")]


def test_ten_thousand_lines_within_seconds() -> None:
    functions = [f"def f{i}(a, b):\n    c = a + {i}\n    if c > b:\n        return c\n    return b\n" for i in range(2000)]
    old = "".join(functions)
    functions[1000] = functions[1000].replace("c > b", "c >= b")
    functions.insert(1500, "def extra(x):\n    return x\n")
    new = "".join(functions)
    assert old.count("\n") == 10_000
    start = time.perf_counter()
    found = changes(old, new)
    elapsed = time.perf_counter() - start
    assert {(c.entity, c.type) for c in found} == {("m:f1000", "modification"), ("m:extra", "addition")}
    assert elapsed < 20, elapsed


def test_deeply_nested_expression() -> None:
    depth = 3000
    old = "X = " + "(" * depth + "1" + ")" * depth + "\n"
    new = "X = " + "(" * depth + "2" + ")" * depth + "\n"
    start = time.perf_counter()
    found = changes(old, new)
    assert [(c.entity, c.type) for c in found] == [("m:X", "modification")]
    assert time.perf_counter() - start < 20


def test_deeply_nested_blocks() -> None:
    lines = [" " * i + f"if x{i}:" for i in range(90)] + [" " * 90 + "pass"]
    old = "\n".join(lines) + "\n"
    new = old.replace("pass", "return")
    found = changes(old, new)
    assert sorted((c.type, c.code_type, c.level) for c in found) == [("addition", "return", "module"), ("removal", "statement", "module")]


def test_size_limit_gives_a_clear_message() -> None:
    with pytest.raises(SourceTooLarge, match=r"m.py has 2001 bytes, above the limit of 2000"):
        parse_source(b"#" * 2001, "m.py", max_bytes=2000)
    result = diff_sources(b"X = 1\n", b"X = 2\n" + b"#" * 3000, CONTEXT, SyntaxOptions(max_bytes=2000)).result
    assert result.too_large and "above the limit" in (result.message or "")
    assert [(c.level, c.type, c.entity) for c in result.changes] == [("module", "modification", "m:")]
