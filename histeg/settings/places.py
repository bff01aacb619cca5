"""Where results and environments go when the user does not say: each rule written once, here."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from histeg.locations import is_url, redact

ENVIRONMENTS_VARIABLE = "HISTEG_ENVIRONMENTS"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache") / "histeg" / "results"


def default_out(repo: str) -> Path:
    """A folder per repository in the user's cache: never inside the working tree, where the project's own
    pytest would collect the snapshots. Named after the repository, and told apart by a hash of where it is."""
    location = redact(repo) if is_url(repo) else str(Path(repo).expanduser().resolve())  # credentials are no part of its identity
    name = re.sub(r"[^\w.-]", "_", location.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")) or "repository"
    return cache_root() / f"{name}-{hashlib.sha256(location.encode()).hexdigest()[:12]}"


def default_environments() -> Path:
    """``$HISTEG_ENVIRONMENTS``, else ``$XDG_CACHE_HOME/histeg/environments`` (``~/.cache/...``):
    shared by every output directory."""
    if os.environ.get(ENVIRONMENTS_VARIABLE):
        return Path(os.environ[ENVIRONMENTS_VARIABLE]).expanduser().absolute()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "histeg" / "environments"
