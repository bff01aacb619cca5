"""The repository histeg works on: a private mirror of the user's repository.

histeg never works on the user's repository directly. Even read-only tools
write there (pydriller sets ``blame.markUnblamableLines`` in the repository's
config when it opens one), so the user's repository is only *read* once per
run by ``git clone --mirror --shared`` into ``OUT/repository.git``; a URL is
cloned there with the user's git and credentials and fetched on reruns.

Credentials in a URL (``https://user:token@host/…``, or a token alone) are
never written anywhere: the mirror's ``remote.origin.url``, ``history.json``
and every message carry the URL without them, and git receives them through
its environment only (see ``histeg.locations.remote``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from histeg.errors import HistegError
from histeg.history.git import GitRepository, first_line, git_environment
from histeg.locations import is_url, remote

MIRROR_DIR = "repository.git"


@dataclass(frozen=True)
class Source:
    """Where the history came from, and the mirror histeg reads it through."""

    location: str
    is_url: bool
    mirror: GitRepository


def _git(*args: str, what: str, env: dict[str, str] | None = None) -> None:
    result = subprocess.run(["git", *args], capture_output=True, env=env or git_environment(), check=False)
    if result.returncode != 0:
        raise HistegError(f"{what}: {first_line(result.stderr)}")


Acceptor = Callable[[GitRepository], None]


def open_source(location: str, out: Path, accept: Acceptor) -> Source:
    """Validate the user's repository and (re)create histeg's mirror of it.

    ``accept`` sees the new mirror before it replaces the old one and may
    refuse it (raise), leaving the output directory as it was.
    """
    mirror_path = out / MIRROR_DIR
    if is_url(location):
        origin = remote(location)
        if (mirror_path / "HEAD").is_file():
            accept(GitRepository.open(mirror_path))
            # the URL given now, without credentials (this also clears those a mirror made by an older histeg kept)
            _git(f"--git-dir={mirror_path}", "remote", "set-url", "--", "origin", origin.url, what=f"cannot fetch {origin.url}")
            _git(
                f"--git-dir={mirror_path}",
                "remote",
                "update",
                "--prune",
                what=f"cannot fetch {origin.url}",
                env=git_environment(origin.config),
            )
        else:
            _clone(origin.url, mirror_path, shared=False, accept=accept, env=git_environment(origin.config))
        return Source(origin.url, True, GitRepository.open(mirror_path))
    user_repo = GitRepository.open_with_commits(Path(location).expanduser())
    mirror = _update_local_mirror(mirror_path, user_repo, accept)
    if mirror is None:
        _clone(str(user_repo.git_dir), mirror_path, shared=True, accept=accept)
        mirror = GitRepository.bare(mirror_path)
    return Source(str(user_repo.path), False, mirror)


def _update_local_mirror(mirror_path: Path, user_repo: GitRepository, accept: Acceptor) -> GitRepository | None:
    """Bring a mirror of the same repository up to date in place: an unchanged repository then changes no file
    of the output directory (no FETCH_HEAD either), and when its refs are the mirror's, nothing is fetched at all
    (a fetch starts three git processes; a nightly rerun should cost next to nothing). None when there is no such
    mirror to update."""
    if not (mirror_path / "HEAD").is_file():
        return None
    location = str(user_repo.git_dir)
    mirror = GitRepository.bare(mirror_path)
    recorded = mirror.run("config", "--get", "remote.origin.url", check=False).stdout.decode("utf-8", "surrogateescape").strip()
    if recorded != location:
        return None
    try:
        if mirror.refs() != user_repo.refs():
            _git(
                f"--git-dir={mirror_path}",
                "fetch",
                "--quiet",
                "--prune",
                "--no-write-fetch-head",
                "origin",
                what=f"cannot read repository {location}",
            )
        accept(mirror)
    except HistegError:
        shutil.rmtree(mirror_path, ignore_errors=True)  # made again from the repository on the next run
        raise
    return mirror


def _clone(location: str, mirror_path: Path, shared: bool, accept: Acceptor, env: dict[str, str] | None = None) -> None:
    staging = mirror_path.with_name(mirror_path.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    args = ["clone", "--quiet", "--mirror", *(["--shared"] if shared else []), "--", location, str(staging)]
    try:
        _git(*args, what=f"cannot read repository {location}", env=env)
        mirror = GitRepository.open(staging)
        if not mirror.has_commits():
            raise HistegError(f"repository {location} has no commits")
        accept(mirror)
    except HistegError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(mirror_path, ignore_errors=True)
    staging.rename(mirror_path)
