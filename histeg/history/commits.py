"""The analysed branch's commits, oldest first, as stored in ``history.json``."""

from __future__ import annotations

from pydriller import Git

from histeg.errors import HistegError
from histeg.history.git import GitRepository
from histeg.records.history import Commit


def list_commits(repo: GitRepository, tip: str) -> list[Commit]:
    """Every commit reachable from ``tip``, parents before children."""
    driller = Git(str(repo.git_dir))
    try:
        commits = driller.get_list_commits(rev=tip, topo_order=True)
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
    except Exception as exc:  # pydriller wraps every git failure in a bare Exception
        raise HistegError(f"cannot read the history of {tip} in {repo.path}: {str(exc).splitlines()[0]}") from None
    finally:
        driller.clear()
