"""What the merge tests share: a base with two branches off it, finishing a merge left uncommitted (``--no-commit``), and
finding a commit's version."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepo


def branched(repo: GitRepo, module: str, base: dict[str, str | bytes], side: tuple[str, str, str], main: tuple[str, str]) -> dict[str, str]:
    """Commit ``base`` on main, then ``module`` as ``side`` (branch, message, source) on a branch off it and as ``main``
    (message, source) on main, which stays checked out; the commits by name: base, the side branch's name, main."""
    commits = {"base": repo.commit("base", base)}
    branch, message, source = side
    repo.git("checkout", "-q", "-b", branch)
    commits[branch] = repo.commit(message, {module: source})
    repo.git("checkout", "-q", "main")
    commits["main"] = repo.commit(main[0], {module: main[1]})
    return commits


def commit_merge(repo: GitRepo, files: dict[str, str | bytes], message: str, second_parent: str) -> str:
    """Write the merge's resolution, commit the merge under way and return its commit (checked to have ``second_parent``)."""
    repo.write(files)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", message)
    merge = repo.git("rev-parse", "HEAD")
    assert repo.git("rev-parse", "HEAD^2") == second_parent
    return merge


def version_index(out: Path, commit: str) -> int:
    """The version number histeg gave ``commit`` in the output directory ``out``."""
    return int(json.loads((out / "versions.json").read_text())["commits"][commit])
