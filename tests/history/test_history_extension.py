"""A run on a branch that moved on lists only the new commits, and ends with the history a whole listing gives.

Each test marks the message of the first commit in ``history.json``: a run that kept the commits it had listed
keeps the mark, a run that listed the whole history again writes the commit's real message.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepo, validate_output

MARK = "(kept from the earlier listing)"


def extract(histeg, repo: GitRepo, out: Path) -> dict:
    result = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out))
    assert result.code == 0, result.stderr
    return validate_output(out / "history.json")


def mark_first_commit(out: Path) -> None:
    path = out / "history.json"
    document = json.loads(path.read_text())
    document["commits"][0]["msg"] = MARK
    path.write_text(json.dumps(document))


def listed_and_marked(make_repo, histeg, out: Path) -> tuple[GitRepo, Path]:
    """A repository of two commits, extracted into ``out``, the first commit's message marked."""
    repo = make_repo()
    repo.commit("base", {"app.py": "A = 1\n"})
    repo.commit("second", {"app.py": "A = 2\n"})
    extract(histeg, repo, out)
    mark_first_commit(out)
    return repo, out


def listing(history: dict) -> list[tuple[str, list[str]]]:
    return [(commit["identifier"], commit["parents"]) for commit in history["commits"]]


def test_new_commits_and_a_merge_are_added_to_the_listed_history(make_repo, histeg, tmp_path: Path) -> None:
    repo, out = listed_and_marked(make_repo, histeg, tmp_path / "out")
    repo.git("checkout", "-q", "-b", "feature", "HEAD~1")  # a side branch from an older commit, merged later
    side = repo.commit("feature work", {"feature.py": "def feature():\n    return 1\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main work", {"app.py": "A = 3\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    repo.commit("after the merge", {"app.py": "A = 4\n"})

    extended = extract(histeg, repo, out)
    whole = extract(histeg, repo, tmp_path / "fresh")

    assert extended["commits"][0]["msg"] == MARK  # the commits listed before were kept, not listed again
    assert listing(extended) == listing(whole)
    assert side in [identifier for identifier, _ in listing(extended)]
    assert extended["repository"]["tip"] == repo.git("rev-parse", "HEAD")
    numbers = json.loads((out / "versions.json").read_text())["commits"]
    assert sorted(numbers.values()) == list(range(len(numbers)))  # every new commit numbered once, after the old ones


def test_a_rewritten_branch_is_listed_whole(make_repo, histeg, tmp_path: Path) -> None:
    repo, out = listed_and_marked(make_repo, histeg, tmp_path / "out")
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.commit("second, rewritten", {"app.py": "A = 20\n"})  # the earlier tip is no longer in the branch

    rewritten = extract(histeg, repo, out)

    assert rewritten["commits"][0]["msg"] == "base"  # listed again from git
    assert listing(rewritten) == listing(extract(histeg, repo, tmp_path / "fresh"))
