"""The demo: build a bundled sample repository, compute its testing targets and write the HTML report of them."""

from __future__ import annotations

import tempfile
from pathlib import Path

from histeg.console import Console
from histeg.errors import HistegError
from histeg.history.git import GitRepository
from histeg.pipeline import PipelineRun
from histeg.project import Project
from histeg.report.html import write_report
from histeg.samples import build_sample


def _sample_repository(base: Path, sample: str) -> Path:
    """Build the sample once; its SHAs are deterministic, so an existing build is reused."""
    repo = base / sample
    if repo.exists() and any(repo.iterdir()):
        GitRepository.open(repo)  # fails with a clear message when it is something else
        return repo
    return build_sample(sample, repo)


def run_demo(directory: Path | None, sample: str, console: Console) -> tuple[Path, PipelineRun, Path]:
    """The sample repository built under ``directory`` (a new temporary one when None), the run on all its versions and
    the report's index page. The demo's settings are histeg's defaults: a ``histeg.toml`` where it is started plays no part."""
    base = directory if directory is not None else Path(tempfile.mkdtemp(prefix="histeg-demo-"))
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistegError(f"cannot create demo directory {base}: {exc.strerror}") from None
    repo = _sample_repository(base, sample)
    console.info(f"built sample repository '{sample}' in {repo}")
    project = Project(repo, out=base / "out", all=True, read_config=False)
    run = project.compute(console=console)
    report = write_report(project.store.root)
    console.info(f"results are in {project.store.root} (one directory per version); the report: {report}")
    return repo, run, report
