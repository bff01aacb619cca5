"""Turning the user's revision list into an ordered list of versions.

``A..B`` is first-parent history from A to B with both ends included; a
single revision on its own means itself and its first parent. The order the
user gives is kept: each version is compared with the one before it in the
list (thesis section 4.1), not necessarily its parent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from histeg.errors import HistegError
from histeg.history.git import GitRepository

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


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


def resolve_all(repo: GitRepository, revisions: Sequence[str]) -> list[str]:
    """``resolve`` of each revision in one git run; when git has anything to say about one of them, each is resolved
    on its own, so the error names it exactly as ``resolve`` does."""
    names = list(revisions)
    if names and all(name and not name.startswith("-") and "\n" not in name for name in names):
        request = "".join(f"{name}^{{commit}}\n" for name in names).encode("utf-8", "surrogateescape")
        answer = repo.run("cat-file", "--batch-check=%(objectname)", stdin=request, check=False)
        identifiers = answer.stdout.decode("utf-8", "replace").splitlines()
        clean = answer.returncode == 0 and not answer.stderr.strip()  # git warns of an ambiguous name and goes on
        if clean and len(identifiers) == len(names) and all(_OBJECT_ID.fullmatch(i) for i in identifiers):
            return identifiers
    return [resolve(repo, name) for name in names]


def first_parent_chain(repo: GitRepository, tip: str) -> list[str]:
    """First-parent ancestors of ``tip``, oldest first, ``tip`` last."""
    return repo.run("rev-list", "--first-parent", "--reverse", tip).stdout.decode().split()


def select_versions(repo: GitRepository, specs: Sequence[str], tip: str) -> list[str]:
    """Resolve ``specs`` (revisions and ``A..B`` ranges) in the user's order."""
    for spec in specs:
        if "..." in spec:
            raise HistegError(f"'{spec}': symmetric ranges (A...B) are not supported; use A..B")
    named = [name for spec in specs for name in (_ends(spec, tip) if ".." in spec else (spec,)) if name]
    identifier_of = dict(zip(named, resolve_all(repo, named), strict=True))
    selected: list[str] = []
    for spec in specs:
        if ".." in spec:
            start, end = _ends(spec, tip)
            end_id = identifier_of[end]
            chain = first_parent_chain(repo, end_id)
            if start:
                start_id = identifier_of[start]
                if start_id not in chain:
                    raise HistegError(f"'{start}' is not on the first-parent history of '{end}' in {repo.path}")
                chain = chain[chain.index(start_id) :]
            selected.extend(chain)
        else:
            selected.append(identifier_of[spec])
    if len(specs) == 1 and ".." not in specs[0]:
        parent = _first_parent(repo, selected[0])
        if parent is not None:
            selected.insert(0, parent)
    unique: list[str] = []
    for identifier in selected:
        if identifier not in unique:
            unique.append(identifier)
    return unique


def _ends(spec: str, tip: str) -> tuple[str, str]:
    """``A..B`` as its two revisions, oldest first; a missing end is the tip."""
    start, _, end = spec.partition("..")
    return start, end or tip


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
