"""What the syntax analysis can be asked to do differently."""

from __future__ import annotations

from dataclasses import dataclass, field

from histeg.records.syntax import AnalysisOptions
from histeg.syntax.matcher import MatcherOptions
from histeg.syntax.parse import DEFAULT_MAX_BYTES


@dataclass(frozen=True)
class SyntaxOptions:
    matcher: MatcherOptions = field(default_factory=MatcherOptions)
    renames: bool = True
    """Report renamed functions, classes and parameters as renames; when off, a
    renamed definition is a removal plus an addition (what a tool without
    rename detection reports) and a renamed parameter a modification."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """Larger files are flagged ``tooLarge`` and reported as one module modification."""

    def record(self) -> AnalysisOptions:
        matcher = self.matcher
        return AnalysisOptions(
            min_height=matcher.min_height,
            min_dice=matcher.min_dice,
            max_size=matcher.max_size,
            renames=self.renames,
            max_bytes=self.max_bytes,
        )
