"""Read-only access to a git repository through the user's git.

Nothing here writes to the repository: no checkout, no index refresh
(``GIT_OPTIONAL_LOCKS=0``), no config change. Paths are always passed with
``-z`` output and never as option-like arguments.
"""

from __future__ import annotations

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
        if not path.exists():
            raise HistegError(f"repository {path} does not exist")
        if not path.is_dir():
            raise HistegError(f"repository {path} is not a directory")
        try:
            result = subprocess.run(
                ["git", "-C", str(path), "rev-parse", "--absolute-git-dir"],
                capture_output=True, env=git_environment(), check=False,
            )
        except FileNotFoundError:
            raise HistegError("git is not installed or not on PATH") from None
        if result.returncode != 0:
            raise HistegError(f"{path} is not a git repository")
        git_dir = Path(result.stdout.decode().strip())
        return cls(path=path.resolve(), git_dir=git_dir)

    def run(self, *args: str, check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        result = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "-c", "core.quotepath=off", *args],
            capture_output=True, env=git_environment(), input=stdin, check=False,
        )
        if check and result.returncode != 0:
            raise HistegError(f"git {args[0]} failed in {self.path}: {first_line(result.stderr)}")
        return result

    def text(self, *args: str) -> str:
        return self.run(*args).stdout.decode("utf-8", "replace").strip()

    def has_commits(self) -> bool:
        return self.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).returncode == 0

    def is_shallow(self) -> bool:
        return self.text("rev-parse", "--is-shallow-repository") == "true"

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
