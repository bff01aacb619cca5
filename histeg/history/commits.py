"""The analysed branch's commits, oldest first, as stored in ``history.json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydriller import Git

from histeg.errors import HistegError
from histeg.history.git import GitRepository


@dataclass(frozen=True)
class CommitRecord:
    index: int
    identifier: str
    author: str
    author_email: str
    date: str
    committer_date: str
    message: str
    parents: tuple[str, ...]

    @property
    def merge(self) -> bool:
        return len(self.parents) > 1

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "identifier": self.identifier,
            "author": self.author,
            "authorEmail": self.author_email,
            "date": self.date,
            "committerDate": self.committer_date,
            "msg": self.message,
            "parents": list(self.parents),
            "merge": self.merge,
        }


def list_commits(repo: GitRepository, tip: str) -> list[CommitRecord]:
    """Every commit reachable from ``tip``, parents before children."""
    driller = Git(str(repo.git_dir))
    try:
        commits = driller.get_list_commits(rev=tip, topo_order=True)
        return [
            CommitRecord(
                index=index,
                identifier=commit.hash,
                author=commit.author.name,
                author_email=commit.author.email,
                date=commit.author_date.isoformat(),
                committer_date=commit.committer_date.isoformat(),
                message=commit.msg,
                parents=tuple(commit.parents),
            )
            for index, commit in enumerate(commits)
        ]
    except Exception as exc:  # pydriller wraps every git failure in a bare Exception
        raise HistegError(f"cannot read the history of {tip} in {repo.path}: {str(exc).splitlines()[0]}") from None
    finally:
        driller.clear()
