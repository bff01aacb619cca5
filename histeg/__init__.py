"""histeg: what to test after each change.

    import histeg
    project = histeg.Project("path/to/repo", out="results")
    project.compute(["HEAD~3..HEAD"])

Kept import-free on purpose: the tracer imports this package inside other
people's processes, so nothing heavy may load here; the API's names are
imported when first used. It is imported there before pytest starts, so
pytest must not try to rewrite it (its warning would change the run's
summary, and fail suites that turn warnings into errors):
PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["HistegError", "Project", "Settings", "VersionResults", "__version__"]

if TYPE_CHECKING:
    from histeg.errors import HistegError
    from histeg.project import Project
    from histeg.results import VersionResults
    from histeg.settings.model import Settings
    from histeg.version import __version__

_LAZY = {
    "Project": "histeg.project",
    "VersionResults": "histeg.results",
    "Settings": "histeg.settings.model",
    "HistegError": "histeg.errors",
    "__version__": "histeg.version",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'histeg' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
