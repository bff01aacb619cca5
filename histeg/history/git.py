"""Read-only access to a git repository through the user's git.

Nothing here writes to the repository: no checkout, no index refresh
(``GIT_OPTIONAL_LOCKS=0``), no config change. Paths are always passed with
``-z`` output and never as option-like arguments.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from histeg.errors import HistegError

_READ_ONLY_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
}

_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^\s/'\"]*@")


def git_environment(config: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The environment of every git histeg runs; ``config`` entries are passed as ``GIT_CONFIG_KEY_<n>``/``VALUE``
    pairs, which git reads like ``-c`` options but which, unlike ``-c``, no other user can see in the process list."""
    env = dict(os.environ)
    env.update(_READ_ONLY_ENV)
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(key, None)
    if config:
        given = env.get("GIT_CONFIG_COUNT", "")
        count = int(given) if given.isdigit() else 0  # the user's own entries stay, ours follow them
        for offset, (key, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{count + offset}"] = key
            env[f"GIT_CONFIG_VALUE_{count + offset}"] = value
        env["GIT_CONFIG_COUNT"] = str(count + len(config))
    return env


def scrub(text: str) -> str:
    """``text`` without the user information (``user:token@``) of any URL in it: git quotes URLs in its messages."""
    return _URL_USERINFO.sub(r"\g<scheme>", text)


def display_path(path: str) -> str:
    """A path read with ``surrogateescape`` as text JSON can hold: bytes that are not UTF-8 become ``\\xNN``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_utf8(path: str) -> bool:
    """False for a path read with ``surrogateescape`` from bytes that are not UTF-8."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True)
class GitRepository:
    """A repository histeg only reads; ``path`` is its top level or git directory."""

    path: Path
    git_dir: Path

    @classmethod
    def open(cls, path: Path) -> GitRepository:
        return cls._located(path, ())[0]

    @classmethod
    def open_with_commits(cls, path: Path) -> GitRepository:
        """Open a repository whose HEAD must be a commit, in one git run."""
        repository, has_head = cls._located(path, ("--verify", "--quiet", "HEAD^{commit}"))
        if not has_head:
            raise HistegError(f"repository {repository.path} has no commits")
        return repository

    @classmethod
    def bare(cls, git_dir: Path) -> GitRepository:
        """A bare repository histeg made itself (its mirror): where it is needs no asking git."""
        resolved = git_dir.resolve()
        return cls(path=resolved, git_dir=resolved)

    @classmethod
    def _located(cls, path: Path, head_check: tuple[str, ...]) -> tuple[GitRepository, bool]:
        if not path.exists():
            raise HistegError(f"repository {path} does not exist")
        if not path.is_dir():
            raise HistegError(f"repository {path} is not a directory")
        try:
            result = subprocess.run(
                ["git", "-C", str(path), "rev-parse", "--absolute-git-dir", *head_check],
                capture_output=True,
                env=git_environment(),
                check=False,
            )
        except FileNotFoundError:
            raise HistegError("git is not installed or not on PATH") from None
        lines = result.stdout.decode("utf-8", "surrogateescape").splitlines()
        if not lines or (result.returncode != 0 and not head_check):
            raise HistegError(f"{path} is not a git repository")
        return cls(path=path.resolve(), git_dir=Path(lines[0].strip())), result.returncode == 0

    def run(self, *args: str, check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        result = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "-c", "core.quotepath=off", *args],
            capture_output=True,
            env=git_environment(),
            input=stdin,
            check=False,
        )
        if check and result.returncode != 0:
            raise HistegError(f"git {args[0]} failed in {self.path}: {first_line(result.stderr)}")
        return result

    def text(self, *args: str) -> str:
        return self.run(*args).stdout.decode("utf-8", "replace").strip()

    def has_commits(self) -> bool:
        return self.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).returncode == 0

    def is_shallow(self) -> bool:
        """git's own rule (its ``shallow`` file), read without a git run; histeg asks it of its mirror, which has
        no linked worktrees whose common directory would hold the file instead."""
        return (self.git_dir / "shallow").is_file()

    def refs(self) -> bytes:
        """Every ref and the object it names: equal for two repositories exactly when a mirror fetch has nothing to do."""
        return self.run("for-each-ref", "--format=%(objectname) %(refname)").stdout

    @functools.cached_property
    def root_commits(self) -> list[str]:
        """Asked once per opened repository: histeg changes its mirror (fetch) before it reads anything of it."""
        return sorted(self.text("rev-list", "--max-parents=0", "--all").split())

    def empty_tree(self) -> str:
        return self.run("hash-object", "-t", "tree", "--stdin", stdin=b"").stdout.decode().strip()

    def current_branch(self) -> str:
        """The branch HEAD points at, or ``HEAD`` when detached."""
        result = self.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        if result.returncode != 0:
            return "HEAD"
        try:
            return result.stdout.decode().strip()
        except UnicodeDecodeError:  # a name that cannot be recorded as text: follow HEAD itself
            return "HEAD"


def first_line(stderr: bytes) -> str:
    """The line of git's error output that says what went wrong, credentials in URLs removed."""
    lines = [scrub(line.strip()) for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    meaningful = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines
    return meaningful[0].removeprefix("fatal: ").removeprefix("error: ") if meaningful else "unknown error"
