"""Where a lost or introduced merge divergence is charged: the function a tester should look at.

Every such divergence becomes a target, whatever the impact set says: a
merge that drops a side's change to ``g`` (``git merge -s ours``) leaves ``g``
far from the other side's changes, outside the impact set, and yet ``g`` is
exactly what lost its behaviour. So the charge goes to the divergent function
when it is project code (code the targets step ranks: in the sources, not a
test, not an ignored name), else to its closest such caller in the trace's
call chain (a test's helper or callback diverges because the project code that
called it changed), else, when the chain holds no project code at all, to the
function itself, which is then reported beside the ranked list as the targets
step would report it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from histeg.impact.ranking import Layout, ignored, section_of
from histeg.impact.targets import FunctionInfo


@dataclass(frozen=True)
class ProjectCode:
    """Which functions the targets step would rank: those of the sources outside the tests, by the merge's function table."""

    functions: Mapping[str, FunctionInfo]
    """The function table of the merge and its parents (the merge's rows win)."""
    layout: Layout

    def __contains__(self, identifier: object) -> bool:
        if not isinstance(identifier, str) or ignored(identifier, self.layout.ignored_functions):
            return False
        info = self.functions.get(identifier)
        return section_of(info.file if info is not None else None, self.layout) == "product"


def charged_to(function: str, chain: Iterable[str], project: ProjectCode) -> str:
    """The divergent function when it is project code, else its closest project caller in ``chain`` (entry point first),
    else the function itself."""
    if function in project:
        return function
    return next((caller for caller in reversed(tuple(chain)) if caller in project), function)
