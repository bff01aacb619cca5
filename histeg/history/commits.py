"""The analysed branch's commits, oldest first, as stored in ``history.json``."""

from __future__ import annotations

from typing import Any

from histeg.errors import HistegError
from histeg.history.git import GitRepository
from histeg.records.history import Commit


def _reader(git_dir: str) -> Any:
    """pydriller's reader, able to open a repository whose HEAD names a branch that is not UTF-8.

    pydriller reads the current branch's name when it opens a repository and
    GitPython fails on such a name; the commits are listed from an explicit
    revision, so the name is not needed. pydriller (and GitPython) are imported
    here, when a history is read: a rerun on an unchanged branch reuses
    ``history.json`` and does not pay their 60 ms of imports.
    """
    from pydriller import Git

    class _Git(Git):
        def _discover_main_branch(self, repo: Any) -> None:
            try:
                super()._discover_main_branch(repo)
            except UnicodeDecodeError:
                self._conf.set_value("main_branch", "")

    return _Git(git_dir)


def list_commits(repo: GitRepository, tip: str, since: str | None = None) -> list[Commit]:
    """Every commit reachable from ``tip`` (and not from ``since``, when given), parents before children."""
    driller: Any = None
    try:
        driller = _reader(str(repo.git_dir))
        commits = driller.get_list_commits(rev=tip if since is None else f"{since}..{tip}", topo_order=True)
        return [
            Commit(
                index=index,
                identifier=commit.hash,
                author=commit.author.name,
                author_email=commit.author.email,
                date=commit.author_date.isoformat(),
                committer_date=commit.committer_date.isoformat(),
                msg=commit.msg,
                parents=list(commit.parents),
                merge=len(commit.parents) > 1,
            )
            for index, commit in enumerate(commits)
        ]
    except Exception as exc:  # noqa: BLE001 - pydriller wraps every git failure in a bare Exception; GitPython raises its own
        reason = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HistegError(f"cannot read the history of {tip} in {repo.path}: {reason}") from None
    finally:
        if driller is not None:
            driller.clear()
