"""Bundled sample projects, stored as readable step folders, built into real git repositories.

A sample lives in ``histeg/sample_data/<name>/steps/NN-slug/``: ``message.txt`` is the
commit message, ``files/`` holds every file added or changed at that step with
its full content, an optional ``deleted.txt`` lists removed paths. Building
replays the steps as commits with a fixed author, committer and clock, and
without the user's git configuration, so the same sample always has the same
SHAs and tests can name its commits.

The step folders are package data, read through ``importlib.resources`` so that
an installed wheel finds them where a checkout does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

from histeg.errors import HistegError

SAMPLES_ROOT: Traversable = resources.files("histeg") / "sample_data"

AUTHOR_NAME = "Histeg Samples"
AUTHOR_EMAIL = "samples@histeg.invalid"
FIRST_COMMIT_DATE = datetime.fromisoformat("2024-01-01T12:00:00+00:00")
STEP_INTERVAL = timedelta(hours=1)
FILE_MODE = 0o644

BUILD_LEFTOVERS = ("__pycache__", ".pytest_cache")  # appear when a step's files are run in place; never part of a sample
STEP_FOLDER = re.compile(r"^(\d{2})-[a-z0-9][a-z0-9-]*$")
GIT_OPTIONS = (
    "-c", "init.defaultBranch=main",
    "-c", "commit.gpgsign=false",
    "-c", "core.autocrlf=false",
    "-c", "user.useConfigOnly=false",
)  # fmt: skip


@dataclass(frozen=True)
class Step:
    """One commit of a sample: what it writes, what it deletes, its message."""

    folder: Traversable
    message: str
    files: dict[str, Traversable]  # POSIX path in the repository -> source file in the step folder
    deleted: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.folder.name


def available_samples() -> list[str]:
    """Names of the bundled samples (directories with a ``steps`` folder)."""
    if not SAMPLES_ROOT.is_dir():
        return []
    return sorted(entry.name for entry in SAMPLES_ROOT.iterdir() if (entry / "steps").is_dir())


def sample_dir(name: str) -> Traversable:
    """The sample's directory; an unknown name is a user error listing the known ones."""
    known = available_samples()
    if name not in known:
        listing = ", ".join(known) or "none"
        raise HistegError(f"unknown sample '{name}': available samples are {listing}")
    return SAMPLES_ROOT / name


def load_steps(name: str) -> list[Step]:
    """The sample's steps in commit order, checked for gaps and malformed folders."""
    steps_dir = sample_dir(name) / "steps"
    folders = sorted((entry for entry in steps_dir.iterdir() if entry.is_dir()), key=lambda entry: entry.name)
    steps: list[Step] = []
    for expected_number, folder in enumerate(folders):
        match = STEP_FOLDER.match(folder.name)
        if match is None or int(match.group(1)) != expected_number:
            raise HistegError(f"sample '{name}': step folder {folder.name!r} should be named {expected_number:02d}-<slug>")
        steps.append(_read_step(folder))
    if not steps:
        raise HistegError(f"sample '{name}' has no steps in {steps_dir}")
    return steps


def _read_step(folder: Traversable) -> Step:
    message_file = folder / "message.txt"
    if not message_file.is_file() or not message_file.read_text(encoding="utf-8").strip():
        raise HistegError(f"step {folder.name}: message.txt is missing or empty")
    files: dict[str, Traversable] = {}
    files_dir = folder / "files"
    if files_dir.is_dir():
        for relative, source in _walk(folder, files_dir, PurePosixPath()):
            files[_repository_path(folder, relative.as_posix())] = source
    deleted_file = folder / "deleted.txt"
    deleted: tuple[str, ...] = ()
    if deleted_file.is_file():
        lines = deleted_file.read_text(encoding="utf-8").splitlines()
        deleted = tuple(_repository_path(folder, line.strip()) for line in lines if line.strip())
    if not files and not deleted:
        raise HistegError(f"step {folder.name}: neither files/ nor deleted.txt change anything")
    return Step(folder=folder, message=message_file.read_text(encoding="utf-8"), files=files, deleted=deleted)


def _walk(folder: Traversable, directory: Traversable, prefix: PurePosixPath) -> Iterator[tuple[PurePosixPath, Traversable]]:
    """Every regular file below ``directory`` in path order; resources have no ``rglob``."""
    for entry in sorted(directory.iterdir(), key=lambda entry: entry.name):
        relative = prefix / entry.name
        if entry.name in BUILD_LEFTOVERS:
            continue
        if isinstance(entry, Path) and entry.is_symlink():  # only a folder on disk can hold links
            raise HistegError(f"step {folder.name}: {relative} is a symbolic link; samples hold regular files only")
        if entry.is_dir():
            yield from _walk(folder, entry, relative)
        elif entry.is_file():
            yield relative, entry


def _repository_path(folder: Traversable, path: str) -> str:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or ".git" in pure.parts or not pure.parts:
        raise HistegError(f"step {folder.name}: path {path!r} must stay inside the repository and outside .git")
    return pure.as_posix()


def tree_after(steps: list[Step]) -> dict[str, bytes]:
    """Content of every file once ``steps`` are applied in order (what the last commit holds)."""
    tree: dict[str, bytes] = {}
    for step in steps:
        for path in step.deleted:
            if path not in tree:
                raise HistegError(f"step {step.name}: deleted.txt names {path!r}, which does not exist at that point")
            del tree[path]
        for path, source in step.files.items():
            tree[path] = source.read_bytes()
    return tree


def commit_date(step_index: int) -> str:
    return (FIRST_COMMIT_DATE + step_index * STEP_INTERVAL).isoformat()


def git_environment(date: str | None = None) -> dict[str, str]:
    """A child environment that ignores the user's git configuration and pins identity and clock."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_SYSTEM=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME=AUTHOR_NAME,
        GIT_AUTHOR_EMAIL=AUTHOR_EMAIL,
        GIT_COMMITTER_NAME=AUTHOR_NAME,
        GIT_COMMITTER_EMAIL=AUTHOR_EMAIL,
        GIT_TERMINAL_PROMPT="0",
    )
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return env


def _git(repository: Path, *args: str, date: str | None = None, stdin: str | None = None) -> str:
    try:
        result = subprocess.run(
            ["git", *GIT_OPTIONS, *args],
            cwd=repository,
            env=git_environment(date),
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        raise HistegError("git is not installed or not on PATH; it is needed to build sample repositories") from None
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise HistegError(f"git {args[0]} failed in {repository}: {detail}")
    return result.stdout


def _prepare_destination(destination: Path) -> bool:
    """Create the destination, or accept an empty directory; True when it was created here."""
    if destination.exists() or destination.is_symlink():
        if not destination.is_dir():
            raise HistegError(f"cannot build a sample at {destination}: it exists and is not a directory")
        if any(destination.iterdir()):
            raise HistegError(f"cannot build a sample at {destination}: the directory is not empty")
        return False
    try:
        destination.mkdir(parents=True)
    except OSError as exc:
        raise HistegError(f"cannot create {destination}: {exc.strerror}") from None
    return True


def _clear(destination: Path, created: bool) -> None:
    if created:
        shutil.rmtree(destination, ignore_errors=True)
        return
    for entry in destination.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _apply(step: Step, repository: Path) -> None:
    for path in step.deleted:
        target = repository / path
        if not target.is_file():
            raise HistegError(f"step {step.name}: deleted.txt names {path!r}, which does not exist at that point")
        target.unlink()
    for path, source in step.files.items():
        target = repository / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
        os.chmod(target, FILE_MODE)


def build_sample(name: str, destination: Path) -> Path:
    """Build sample ``name`` as a git repository at ``destination`` (absent or empty); return its path.

    One commit per step on branch ``main``; identical input gives identical SHAs
    whatever the user's git configuration, umask or clock.
    """
    steps = load_steps(name)
    destination = Path(destination).absolute()
    created = _prepare_destination(destination)
    try:
        _git(destination, "init", "--quiet", "--template=", ".")
        for index, step in enumerate(steps):
            _apply(step, destination)
            _git(destination, "add", "--all", "--force", ".")
            _git(
                destination,
                "commit",
                "--quiet",
                "--allow-empty",
                "--no-verify",
                "--cleanup=whitespace",
                "-F",
                "-",
                date=commit_date(index),
                stdin=step.message,
            )
    except BaseException:
        _clear(destination, created)
        raise
    return destination


def main(argv: list[str] | None = None) -> int:
    """``python -m histeg.samples NAME DEST``: build one sample and print its path."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] in ("-h", "--help"):
        available = ", ".join(available_samples()) or "none"
        print(f"usage: python -m histeg.samples NAME DEST   (samples: {available})", file=sys.stderr)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    try:
        print(build_sample(args[0], Path(args[1])))
    except HistegError as exc:
        print(f"histeg: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
