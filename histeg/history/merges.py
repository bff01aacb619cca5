"""Merge mode: which extra versions a selected merge needs, and what each version's ``version.json`` says of it.

A merge is compared with both parents and their merge base (after the TOM
paper), so the second parent and the base are extracted, built and traced like
any selected version, even when the selection (first-parent history) does not
hold them. They are extracted without a predecessor: they are compared only as
parts of the merge, never ranked themselves unless selected.
"""

from __future__ import annotations

from dataclasses import dataclass

from histeg.history.git import GitRepository
from histeg.records.history import Commit, MergeParents, MergeRole, MergeRoleName, MergeVersion


@dataclass(frozen=True)
class MergeTriple:
    """A merge's first parent, second parent and base (None when the parents share no history), as commits."""

    merge: Commit
    first: Commit
    second: Commit
    base: Commit | None

    def parents_record(self) -> MergeParents:
        return MergeParents(
            first_parent=_ref(self.first), second_parent=_ref(self.second), base=_ref(self.base) if self.base is not None else None
        )

    def members(self) -> list[tuple[MergeRoleName, Commit]]:
        found: list[tuple[MergeRoleName, Commit]] = [("firstParent", self.first), ("secondParent", self.second)]
        return found + ([("base", self.base)] if self.base is not None else [])


def _ref(commit: Commit) -> MergeVersion:
    return MergeVersion(index=commit.index, identifier=commit.identifier)


def merge_base(repo: GitRepository, first: str, second: str) -> str | None:
    """The best common ancestor of two commits; None when they have none. Octopus merges are read as their first two parents."""
    result = repo.run("merge-base", first, second, check=False)
    found = result.stdout.decode().strip()
    return found or None


def merge_triples(repo: GitRepository, selected: list[str], by_id: dict[str, Commit]) -> list[MergeTriple]:
    """The merges among the selected commits, with their parents and base (all reachable from the branch, so all numbered)."""
    triples = []
    for identifier in selected:
        commit = by_id[identifier]
        if len(commit.parents) < 2:
            continue
        first, second = by_id[commit.parents[0]], by_id[commit.parents[1]]
        base = merge_base(repo, first.identifier, second.identifier)
        triples.append(MergeTriple(commit, first, second, by_id[base] if base is not None and base in by_id else None))
    return triples


def extra_commits(triples: list[MergeTriple], selected: list[str]) -> list[Commit]:
    """Parents and bases the selection does not hold, once each, in the order the merges name them."""
    chosen = set(selected)
    extra: dict[str, Commit] = {}
    for triple in triples:
        for _, commit in triple.members():
            if commit.identifier not in chosen:
                extra.setdefault(commit.identifier, commit)
    return list(extra.values())


def merge_sections(triples: list[MergeTriple]) -> tuple[dict[str, MergeParents], dict[str, list[MergeRole]]]:
    """Per commit: its ``merge`` section (a merge) and its ``mergeRoles`` (a parent or base), as this run makes them."""
    parents: dict[str, MergeParents] = {}
    roles: dict[str, list[MergeRole]] = {}
    for triple in triples:
        parents[triple.merge.identifier] = triple.parents_record()
        for role, commit in triple.members():
            roles.setdefault(commit.identifier, []).append(MergeRole(role=role, merge=_ref(triple.merge)))
    return parents, roles
