"""Markdown (golden), terminal tables and the --fail-on gate on a small real repository traced under the real tracer:
one commit changes a tested function's result, adds an untested function and a branch no test takes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from histeg.report.gate import EXIT_GATE
from tests.conftest import GitRepo, run_histeg

GOLDEN = Path(__file__).parent / "golden" / "shop.md"

PRICE = '''"""Prices."""


def total(items):
    return sum(items)


def label(amount):
    return f"{amount:.2f}"
'''
CHANGED = '''"""Prices."""


def total(items):
    return sum(items) + 1


def label(amount):
    if amount < 0:
        return "refund"
    return f"{amount:.2f}"


def rebate(amount, rate):
    if rate > 1:
        rate = 1
    return amount * rate
'''
TESTS = '''from shop.price import label, total


def test_total():
    assert total([1, 2]) >= 3


def test_label():
    assert label(2) == "2.00"
'''


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("shop")
    repo = GitRepo.create(base / "repo")
    repo.commit("base", {"shop/__init__.py": "", "shop/price.py": PRICE, "tests/test_price.py": TESTS})
    repo.commit("an off-by-one total, a refund label and a rebate", {"shop/price.py": CHANGED})
    out = base / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--sources", "shop", "--tests", "tests")
    assert result.code == 0, result.stderr
    return out


def test_markdown_matches_the_golden_file(shop: Path) -> None:
    result = run_histeg("report", "--out", str(shop), "--format", "markdown")
    assert result.code == 0, result.stderr
    if os.environ.get("HISTEG_UPDATE_GOLDEN"):
        GOLDEN.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == GOLDEN.read_text(encoding="utf-8")
    assert (shop / "report" / "report.md").read_text(encoding="utf-8") == result.stdout


def test_terminal_tables_show_the_targets_and_the_untested_change(shop: Path) -> None:
    result = run_histeg("report", "--out", str(shop), "--format", "terminal")
    assert result.code == 0, result.stderr
    assert "price:total" in result.stdout and "price:rebate" in result.stdout  # modules are named from the sources folder
    assert "changed code no test ran:" in result.stdout


@pytest.mark.parametrize(("conditions", "code", "says"), [
    (["--fail-on", "untested"], EXIT_GATE, "untested change"),
    (["--fail-on", "targets>1"], EXIT_GATE, "more than 1"),
    (["--fail-on", "targets>50"], 0, None),
    (["--fail-on", "targets>=2"], 2, "expected 'untested' or 'targets>N'"),
])
def test_the_gate_has_its_own_exit_code(shop: Path, conditions: list[str], code: int, says: str | None) -> None:
    result = run_histeg("report", "--out", str(shop), "--format", "markdown", *conditions)
    assert result.code == code, result.stderr
    if says is not None:
        assert says in result.stderr and len(result.stderr.strip().splitlines()) >= 1
    else:
        assert result.stderr == ""
