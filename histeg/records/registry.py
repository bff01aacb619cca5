"""``versions.json``: the number of every commit histeg has seen in this output directory, which names its folder."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Record
from histeg.records.types import CommitId, Index


class Registry(Record, kw_only=True):
    """A commit's number is given the first time histeg sees it, in history order (parents first), and never changes
    or goes to another commit: a version's folder stays its own across branches, history growth and reruns."""

    FILE = "versions.json"
    TITLE = "versions.json"
    schema_version: Literal[1] = 1
    commits: Annotated[dict[CommitId, Index], msgspec.Meta(description="Commit identifier -> number (the folder OUT/<number>).")]

    def number(self, identifier: str) -> int:
        """The commit's number, given now when it has none."""
        found = self.commits.get(identifier)
        if found is None:
            found = self.commits[identifier] = max(self.commits.values(), default=-1) + 1
        return found
