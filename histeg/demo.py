"""``histeg demo``: build a bundled sample repository and run the pipeline on it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from histeg.errors import HistegError
from histeg.history.git import GitRepository
from histeg.options import RunOptions
from histeg.pipeline import emit_json, run_pipeline
from histeg.report.console import Console
from histeg.samples import build_sample


def _sample_repository(base: Path, sample: str) -> Path:
    """Build the sample once; its SHAs are deterministic, so an existing build is reused."""
    repo = base / sample
    if repo.exists() and any(repo.iterdir()):
        GitRepository.open(repo)  # fails with a clear message when it is something else
        return repo
    return build_sample(sample, repo)


def run_demo(directory: Path | None, sample: str, json_output: bool) -> None:
    console = Console(1)
    base = directory if directory is not None else Path(tempfile.mkdtemp(prefix="histeg-demo-"))
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistegError(f"cannot create demo directory {base}: {exc.strerror}") from None
    repo = _sample_repository(base, sample)
    console.info(f"built sample repository '{sample}' in {repo}")
    options = RunOptions(repo=str(repo), out=base / "out", all_versions=True, json_output=False)
    run = run_pipeline(options, console)
    console.info(f"results are in {options.out} (one directory per version; start with {options.out / 'history.json'})")
    if json_output:
        emit_json({"repository": str(repo), **run.to_json()})
