"""Acceptance: on the casino sample, carving turns the recorded calls whose result changed into plain pytest files that
witness the change, with no Pynguin (histeg/sample_data/casino/README.md says what each commit changes).

The raised bet (version 1) and the gamblers who keep more (version 5) change what ``Casino.new_gambler`` returns, so a
carved test asserting the old gambler passes on the predecessor and fails on the version. The croupier's small talk
(version 6) changes no call's result that is not noise: carving says so instead of writing a test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from histeg.envs.runtime import runtime_of
from tests.conftest import computed_casino, run_histeg, validate_output

pytestmark = pytest.mark.slow  # six casino versions built, traced and compared, then carving and its pytest runs

RAISE_THE_BET, GAMBLERS_KEEP_MORE, SMALL_TALK = 1, 5, 6
GOLDEN = Path(__file__).parent / "golden" / "carved_gamblers_keep_more.txt"  # not .py: a formatter must not rewrite it


@pytest.fixture(scope="module")
def casino(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int], list[str]]:
    return computed_casino(tmp_path_factory.mktemp("casino-carve"), [(RAISE_THE_BET - 1, RAISE_THE_BET), (GAMBLERS_KEEP_MORE - 1, SMALL_TALK)])


def carved(casino: tuple[Path, dict[str, int], list[str]], step: int) -> tuple[int, dict]:
    out, indices, commits = casino
    index = indices[commits[step]]
    result = run_histeg("generate", str(index), "--out", str(out), "--carve", "--json")
    document = validate_output(out / str(index) / "generation.json")
    assert document["settings"]["stages"] == ["carve"] and document["modules"] == []
    assert result.code == (0 if document["carved"]["tests"] else 1), result.stderr
    return index, document


@pytest.mark.parametrize("step", [RAISE_THE_BET, GAMBLERS_KEEP_MORE])
def test_a_changed_result_is_witnessed_by_a_carved_test(casino: tuple[Path, dict[str, int], list[str]], step: int) -> None:
    _, document = carved(casino, step)
    target = document["targets"][0]
    witnesses = [w for w in target["witnesses"] if w["carved"]]
    assert witnesses, document["carved"]
    for witness in witnesses:
        assert witness["old"] == "passed" and witness["new"] == "failed"
        assert witness["test"].startswith("generated/carved/") and "keeps_old_result" in witness["test"]
        assert "Casino.new_gambler()" in witness["source"]
    tests = {test["id"]: test for test in document["carved"]["tests"]}
    assert all(tests[w["test"]]["outcome"] == "witness" and tests[w["test"]]["old"]["runs"] == ["passed", "passed"] for w in witnesses)
    assert document["carved"]["witnesses"] == len([t for t in tests.values() if t["outcome"] == "witness"])
    assert document["summary"]["targetsWithWitnesses"] >= 1


def test_a_carved_witness_passes_alone_with_plain_pytest_on_the_old_version(
    casino: tuple[Path, dict[str, int], list[str]], tmp_path: Path
) -> None:
    """What the closing note tells a reviewer to run: the file, in the predecessor's environment, its sources on the path."""
    index, document = carved(casino, GAMBLERS_KEEP_MORE)
    out = casino[0]
    witness = next(w for t in document["targets"] for w in t["witnesses"] if w["carved"])
    file = out / str(index) / witness["test"].partition("::")[0]
    old = document["comparingAgainstIndex"]
    for version, expected in ((old, 0), (index, 1)):
        work = tmp_path / str(version)
        shutil.copytree(out / str(version) / "snapshot", work)
        shutil.copy(file, work / "test_carved.py")
        env = {**os.environ, "PYTHONPATH": str(work), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        python = runtime_of(out / str(version)).python
        run = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_carved.py"],
            check=False,
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        assert run.returncode == expected, run.stdout + run.stderr


def test_the_carved_file_reads_as_the_golden_one(casino: tuple[Path, dict[str, int], list[str]]) -> None:
    """No pickles, no encoded blobs, no eval: literals, the call, the old result asserted."""
    index, document = carved(casino, GAMBLERS_KEEP_MORE)
    out, _, commits = casino
    path = next(out / str(index) / t["id"].partition("::")[0] for t in document["carved"]["tests"])
    text = path.read_text()
    text = text.replace(commits[GAMBLERS_KEEP_MORE][:12], "<new>").replace(commits[GAMBLERS_KEEP_MORE - 1][:12], "<old>")
    text = re.sub(r"version \d+", "version N", text)
    for banned in ("pickle", "base64", "eval(", "exec("):
        assert banned not in text
    if os.environ.get("HISTEG_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_a_version_whose_changes_alter_no_result_gets_no_carved_test(casino: tuple[Path, dict[str, int], list[str]]) -> None:
    """The small talk only adds calls; the remarks it appends are unseeded, so their values are noise: nothing to assert."""
    _, document = carved(casino, SMALL_TALK)
    assert document["carved"]["candidates"] == 0 and document["carved"]["tests"] == []
    assert document["summary"]["witnesses"] == 0


def test_reports_show_each_witness_as_its_source(casino: tuple[Path, dict[str, int], list[str]]) -> None:
    """The Markdown comment, the HTML target page and the terminal tables each show the carved witness's test source."""
    index, document = carved(casino, GAMBLERS_KEEP_MORE)
    out = casino[0]
    witness = next(w for t in document["targets"] for w in t["witnesses"] if w["carved"])
    first_line = witness["source"].splitlines()[0]
    markdown = run_histeg("report", "--out", str(out), "--format", "markdown")
    assert markdown.code == 0, markdown.stderr
    assert "#### Witnesses" in markdown.stdout and first_line in markdown.stdout and "```python" in markdown.stdout
    terminal = run_histeg("report", "--out", str(out), "--format", "terminal")
    assert "witness of casino.casino:Casino.new_gambler (carved)" in terminal.stdout and "Casino.new_gambler()" in terminal.stdout
    assert run_histeg("report", "--out", str(out)).code == 0
    page = (out / "report" / f"{index}.html").read_text()
    assert "Witnesses (" in page and "def test_casino_new_gambler_keeps_old_result_1() -&gt; None:" in page
