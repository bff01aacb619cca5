"""Constrained scalar types shared by the records; each becomes a named JSON Schema definition."""

from __future__ import annotations

from typing import Annotated

import msgspec

CommitId = Annotated[
    str, msgspec.Meta(pattern="^[0-9a-f]{40}([0-9a-f]{24})?$", title="commitId", description="A full git object name (SHA-1 or SHA-256).")
]
Index = Annotated[
    int,
    msgspec.Meta(
        ge=0,
        description=(
            "A version's number in its output directory: given to its commit the first time histeg sees it, in history order, and never "
            "changed (versions.json); it names the folder OUT/<index>."
        ),
    ),
]
DateTime = Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]
RelativePath = Annotated[str, msgspec.Meta(min_length=1, pattern="^[^/]", description="A path inside the snapshot, '/'-separated.")]
RelativeDir = Annotated[str, msgspec.Meta(pattern="^(?!/)(?!(.*/)?\\.\\.(/|$))", description="A directory inside the repository.")]
Count = Annotated[int, msgspec.Meta(ge=0)]
Seconds = Annotated[float, msgspec.Meta(ge=0)]
