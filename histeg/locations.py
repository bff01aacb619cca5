"""Repository locations as histeg stores and shows them: without the credentials a URL may carry.

A leaf: the settings show the repository's location and name the default output directory after it, and
extraction clones from it, all through the same rule (see ``remote``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")
_SSH_SCHEMES = frozenset({"ssh", "git+ssh", "ssh+git"})


def is_url(source: str) -> bool:
    return "://" in source or bool(_SCP_LIKE.match(source))


@dataclass(frozen=True)
class Remote:
    """A repository URL split into what may be stored and shown (``url``) and what only git's environment carries."""

    url: str
    config: tuple[tuple[str, str], ...] = ()
    """git configuration entries that carry the rest, for ``git_environment``."""


def remote(location: str) -> Remote:
    """``location`` without the user information of its authority, and how git still uses it.

    git is given ``url.<location>.insteadOf=<url>`` through its environment:
    it rewrites the stored URL back to the user's when it connects, so
    authentication works exactly as with the URL on the command line, while
    ``git clone`` stores the URL it was given, the one without credentials
    (and git writes ``FETCH_HEAD`` with credentials removed). The user's
    credential helpers are switched off for these runs, so none of them can
    store what the URL carried. Everything up to the last ``@`` before the
    first ``/`` counts as user information, so a password with an unescaped
    ``@``, ``:`` or ``?`` is removed whole; an ``ssh://`` user names the
    account and is kept.
    """
    if "://" not in location:
        return Remote(location)
    scheme, _, rest = location.partition("://")
    end = rest.find("/")
    authority, path = (rest, "") if end < 0 else (rest[:end], rest[end:])
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return Remote(location)
    username = userinfo.partition(":")[0]
    kept = f"{username}@" if username and scheme.lower() in _SSH_SCHEMES else ""
    url = f"{scheme}://{kept}{host}{path}"
    if url == location:
        return Remote(location)
    return Remote(url, (("credential.helper", ""), (f"url.{location}.insteadOf", url)))


def redact(location: str) -> str:
    """The location as histeg stores and shows it: without credentials."""
    return remote(location).url
