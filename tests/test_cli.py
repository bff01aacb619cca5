"""The command line as a user meets it: help, version, demo, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from histeg import __version__
from histeg.samples import load_steps
from tests.conftest import validate_output


def test_help_lists_the_pipeline_steps(histeg) -> None:
    result = histeg("--help")
    assert result.code == 0
    for step in ("extract", "build", "instrument", "analyze", "compute", "demo"):
        assert step in result.stdout


def test_version_and_console_script(histeg) -> None:
    assert histeg("--version").stdout.strip().endswith(__version__)
    script = Path(sys.executable).with_name("histeg")
    assert subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True).stdout.strip().endswith(__version__)


def test_unknown_option_is_a_usage_error(histeg) -> None:
    result = histeg("extract", "--no-such-flag")
    assert result.code == 2
    assert "No such option" in result.stderr


@pytest.mark.slow  # the whole demo (50 s), also what make demo runs: run by make test-slow
def test_demo_builds_the_casino_sample_and_extracts_it(histeg, tmp_path: Path) -> None:
    result = histeg("demo", "--dir", str(tmp_path), "--json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    versions = summary["steps"]["extract"]["versions"]
    steps = load_steps("casino")
    assert len(versions) == len(steps)
    history = validate_output(tmp_path / "out" / "history.json")
    assert [c["msg"] for c in history["commits"]] == [step.message.strip() for step in steps]
    assert "results are in" in result.stderr
    again = histeg("demo", "--dir", str(tmp_path), "--json")
    assert again.code == 0, again.stderr
    assert {v["status"] for v in json.loads(again.stdout)["steps"]["extract"]["versions"]} == {"reused"}
