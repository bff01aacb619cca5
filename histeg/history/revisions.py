"""Turning the user's revision list into an ordered list of versions.

``A..B`` is first-parent history from A to B with both ends included; a
single revision on its own means itself and its first parent. The order the
user gives is kept: each version is compared with the one before it in the
list (thesis section 4.1), not necessarily its parent.
"""

from __future__ import annotations

from collections.abc import Sequence

from histeg.errors import HistegError
from histeg.history.git import GitRepository


def resolve(repo: GitRepository, revision: str) -> str:
    """Full commit identifier of ``revision``; unknown or ambiguous names are errors."""
    if not revision or revision.startswith("-"):
        raise HistegError(f"invalid revision '{revision}'")
    result = repo.run("rev-parse", "--verify", "--end-of-options", f"{revision}^{{commit}}", check=False)
    stderr = result.stderr.decode("utf-8", "replace")
    if "ambiguous" in stderr:
        raise HistegError(f"revision '{revision}' is ambiguous in {repo.path}: use a longer identifier or a full ref name")
    if result.returncode != 0:
        raise HistegError(f"unknown revision '{revision}' in {repo.path}")
    return result.stdout.decode().strip()


def first_parent_chain(repo: GitRepository, tip: str) -> list[str]:
    """First-parent ancestors of ``tip``, oldest first, ``tip`` last."""
    return repo.run("rev-list", "--first-parent", "--reverse", tip).stdout.decode().split()


def select_versions(repo: GitRepository, specs: Sequence[str], tip: str) -> list[str]:
    """Resolve ``specs`` (revisions and ``A..B`` ranges) in the user's order."""
    selected: list[str] = []
    for spec in specs:
        if "..." in spec:
            raise HistegError(f"'{spec}': symmetric ranges (A...B) are not supported; use A..B")
        if ".." in spec:
            start, _, end = spec.partition("..")
            end_id = resolve(repo, end or tip)
            chain = first_parent_chain(repo, end_id)
            if start:
                start_id = resolve(repo, start)
                if start_id not in chain:
                    raise HistegError(f"'{start}' is not on the first-parent history of '{end or tip}' in {repo.path}")
                chain = chain[chain.index(start_id):]
            selected.extend(chain)
        else:
            selected.append(resolve(repo, spec))
    if len(specs) == 1 and ".." not in specs[0]:
        parent = _first_parent(repo, selected[0])
        if parent is not None:
            selected.insert(0, parent)
    unique: list[str] = []
    for identifier in selected:
        if identifier not in unique:
            unique.append(identifier)
    return unique


def _first_parent(repo: GitRepository, identifier: str) -> str | None:
    """The first parent named in the commit object (a shallow clone may lack it)."""
    header = repo.text("cat-file", "commit", identifier).split("\n\n", 1)[0]
    parents = [line.split()[1] for line in header.splitlines() if line.startswith("parent ")]
    if not parents:
        return None
    if repo.run("cat-file", "-e", f"{parents[0]}^{{commit}}", check=False).returncode != 0:
        raise HistegError(
            f"the predecessor of {identifier[:12]} is not available in {repo.path}: the repository is a shallow clone "
            "(fetch more history with 'git fetch --deepen')"
        )
    return parents[0]

