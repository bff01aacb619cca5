"""The repository histeg works on: a private mirror of the user's repository.

histeg never works on the user's repository directly. Even read-only tools
write there (pydriller sets ``blame.markUnblamableLines`` in the repository's
config when it opens one), so the user's repository is only *read* once per
run by ``git clone --mirror --shared`` into ``OUT/repository.git``; a URL is
cloned there with the user's git and credentials and fetched on reruns.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from histeg.errors import HistegError
from histeg.history.git import GitRepository, first_line, git_environment

MIRROR_DIR = "repository.git"
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


def is_url(source: str) -> bool:
    return "://" in source or bool(_SCP_LIKE.match(source))


@dataclass(frozen=True)
class Source:
    """Where the history came from, and the mirror histeg reads it through."""

    location: str
    is_url: bool
    mirror: GitRepository


def _git(*args: str, what: str) -> None:
    result = subprocess.run(["git", *args], capture_output=True, env=git_environment(), check=False)
    if result.returncode != 0:
        raise HistegError(f"{what}: {first_line(result.stderr)}")


Acceptor = Callable[[GitRepository], None]


def root_commits(repo: GitRepository) -> list[str]:
    return sorted(repo.text("rev-list", "--max-parents=0", "--all").split())


def open_source(location: str, out: Path, accept: Acceptor) -> Source:
    """Validate the user's repository and (re)create histeg's mirror of it.

    ``accept`` sees the new mirror before it replaces the old one and may
    refuse it (raise), leaving the output directory as it was.
    """
    mirror_path = out / MIRROR_DIR
    if is_url(location):
        if (mirror_path / "HEAD").is_file():
            accept(GitRepository.open(mirror_path))
            _git(f"--git-dir={mirror_path}", "remote", "update", "--prune", what=f"cannot fetch {location}")
        else:
            _clone(location, mirror_path, shared=False, accept=accept)
        return Source(location, True, GitRepository.open(mirror_path))
    user_repo = GitRepository.open(Path(location).expanduser())
    if not user_repo.has_commits():
        raise HistegError(f"repository {user_repo.path} has no commits")
    _clone(str(user_repo.git_dir), mirror_path, shared=True, accept=accept)
    return Source(str(user_repo.path), False, GitRepository.open(mirror_path))


def _clone(location: str, mirror_path: Path, shared: bool, accept: Acceptor) -> None:
    staging = mirror_path.with_name(mirror_path.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    args = ["clone", "--quiet", "--mirror", *(["--shared"] if shared else []), "--", location, str(staging)]
    try:
        _git(*args, what=f"cannot read repository {location}")
        mirror = GitRepository.open(staging)
        if not mirror.has_commits():
            raise HistegError(f"repository {location} has no commits")
        accept(mirror)
    except HistegError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(mirror_path, ignore_errors=True)
    staging.rename(mirror_path)
