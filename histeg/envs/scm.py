"""The version string a git-derived build (setuptools-scm, hatch-vcs) would compute, for a snapshot without ``.git``.

Follows setuptools-scm's default scheme: on a tag, the tag's version; after
it, the next patch release as a development version with the distance and
the commit (``4.16.1.dev5+gc3a124c``); with no tag, ``0.1.devN``.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

PRETEND_VARIABLES = ("SETUPTOOLS_SCM_PRETEND_VERSION",)
"""setuptools-scm reads it, and hatch-vcs builds through setuptools-scm."""


def scm_version(describe: str | None, commits: int, identifier: str) -> str:
    """``describe``: ``git describe --tags --long`` of the version (None when no tag is reachable)."""
    short = identifier[:7]
    parsed = _parse(describe) if describe else None
    if parsed is None:
        return f"0.1.dev{commits}+g{short}"
    version, distance = parsed
    if distance == 0:
        return str(version)
    release = list(version.release) + [0] * (3 - len(version.release))
    release[-1] += 1
    return f"{'.'.join(map(str, release))}.dev{distance}+g{short}"


def _parse(describe: str) -> tuple[Version, int] | None:
    match = re.fullmatch(r"(?P<tag>.+)-(?P<distance>\d+)-g[0-9a-f]+", describe.strip())
    if match is None:
        return None
    tag = re.sub(r"^[^0-9]*", "", match.group("tag"))
    try:
        return Version(tag), int(match.group("distance"))
    except InvalidVersion:
        return None


def pretend_environment(version: str) -> dict[str, str]:
    return {name: version for name in PRETEND_VARIABLES}
