"""The casino sample, computed once per test process for every report test."""

from __future__ import annotations

from pathlib import Path

import pytest

from histeg.project import Project
from histeg.samples import build_sample


@pytest.fixture(scope="session")
def casino(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The bundled casino sample as a git repository, and its output folder with every version computed."""
    base = tmp_path_factory.mktemp("casino-report")
    repo = build_sample("casino", base / "casino")
    out = base / "out"
    run = Project(repo, out=out, all=True, read_config=False, verbosity=0).compute()
    assert run.exit_code == 0
    return repo, out
