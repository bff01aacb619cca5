"""Acceptance: on the casino sample, the tests Pynguin generates for the top targets witness the seeded behaviour
changes (histeg/sample_data/casino/README.md): the raised bet (a class-level constant, handed over as its class)
and the gamblers who keep more (a change whose effect shows in an unchanged callee)."""

from __future__ import annotations

from pathlib import Path

import pytest

from histeg.generate.verdicts import FAILING, PASSING
from tests.conftest import computed_casino, run_histeg, validate_output

pytestmark = pytest.mark.slow  # four casino versions built, traced and ranked, then Pynguin on two of them

RAISE_THE_BET, GAMBLERS_KEEP_MORE = 1, 5
"""Commit numbers in histeg/sample_data/casino/steps."""


@pytest.fixture(scope="module")
def casino(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int], list[str]]:
    """The output folder, the version index of each commit computed, and the commits in history order."""
    base = tmp_path_factory.mktemp("casino-generate")
    return computed_casino(base, [(step - 1, step) for step in (RAISE_THE_BET, GAMBLERS_KEEP_MORE)])


def generated(casino: tuple[Path, dict[str, int], list[str]], step: int) -> dict:
    out, indices, commits = casino
    index = indices[commits[step]]
    result = run_histeg("generate", commits[step][:12], "--out", str(out), "--budget", "20", "--top", "3", "--seed", "1", "--no-carve")
    assert result.code == 0, result.stderr
    document = validate_output(out / str(index) / "generation.json")
    assert document["index"] == index
    assert document["comparingAgainstVersion"] == commits[step - 1]
    return document


def witnesses_of(document: dict, identifier: str) -> list[dict]:
    target = next(t for t in document["targets"] if t["identifier"] == identifier)
    return target["witnesses"]


def test_the_raised_bet_is_witnessed_through_its_class(casino: tuple[Path, dict[str, int], list[str]]) -> None:
    document = generated(casino, RAISE_THE_BET)
    target = next(t for t in document["targets"] if t["identifier"] == "casino.casino:Casino.BET")
    assert target["cover"] == "Casino" and target["rank"] == 1
    assert document["modules"][0]["onlyCover"] == ["Casino"]
    found = witnesses_of(document, "casino.casino:Casino.BET")
    assert found, document["tests"]
    for witness in found:
        assert witness["old"] in FAILING and witness["new"] in PASSING  # the old version's values fail the new one's assertions
        assert witness["oldFailure"]
    out, indices, commits = casino
    text = (out / str(indices[commits[RAISE_THE_BET]]) / found[0]["test"].partition("::")[0]).read_text()
    assert "Casino" in text


def test_the_callee_effect_is_witnessed_on_new_gambler(casino: tuple[Path, dict[str, int], list[str]]) -> None:
    document = generated(casino, GAMBLERS_KEEP_MORE)
    assert [t["identifier"] for t in document["targets"]][:1] == ["casino.casino:Casino.new_gambler"]
    found = witnesses_of(document, "casino.casino:Casino.new_gambler")
    assert found, document["tests"]
    assert all(w["old"] in FAILING and w["new"] in PASSING for w in found)
    witnessing = {w["test"] for w in found}
    tests = {t["id"]: t for t in document["tests"]}
    assert all(tests[test]["witness"] and tests[test]["old"]["runs"] == [tests[test]["old"]["outcome"]] * 2 for test in witnessing)
    assert document["summary"]["witnesses"] >= 1 and document["summary"]["targetsWithWitnesses"] >= 1
