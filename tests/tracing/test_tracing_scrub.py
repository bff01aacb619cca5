"""Run-to-run differences that are never behaviour: addresses and random temporary names."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from histeg.tracing.values import scrub


def test_temporary_directories_of_two_runs_abstract_alike() -> None:
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        texts = [repr(open(Path(d) / "f.toml", "w")) for d in (first, second)]
    assert texts[0] != texts[1]
    assert scrub(texts[0]) == scrub(texts[1])


@pytest.mark.parametrize("text", ["tmpfile_abcdefgh", "/data/tmp/x", "attempt", "/srv/pytest-cache/x", "tmpabcdefghij"])
def test_ordinary_names_stay(text: str) -> None:
    assert scrub(text) == text


def test_pytest_base_directories_and_addresses() -> None:
    assert scrub("/tmp/pytest-of-ada/pytest-17/test_a0 <X at 0x7f3a01>") == "/tmp/pytest-of-ada/pytest-\u2026/test_a0 <X at 0x\u2026>"
