"""``histeg config``: the settings in force and where each came from."""

from __future__ import annotations

import json
from typing import Any

from histeg.settings.kinds import to_json
from histeg.settings.model import DEFAULT, Settings
from histeg.settings.table import BY_KEY, OPTIONS, Option, Step

PER_VERSION_NOTE = " (or the version's pyproject.toml)"
"""Where a per-version setting nobody gave may still come from."""


def settings_json(settings: Settings, step: Step | None = None) -> dict[str, dict[str, Any]]:
    """``{key: {"value": ..., "origin": ...}}`` of the shown options, or of those that change ``step``'s results."""
    chosen = [o for o in OPTIONS if o.shown] if step is None else [o for o in OPTIONS if o.step == step]
    return {option.key: {"value": _shown(option, settings.value(option.key)), "origin": settings.origin(option.key)} for option in chosen}


def _shown(option: Option, value: Any) -> Any:
    """A repository URL is shown without its credentials, as everything histeg writes or says."""
    if option.key == "repo" and isinstance(value, str):
        from histeg.locations import redact

        return redact(value)
    return to_json(value)


def _text(option: Option, value: Any) -> str:
    if value is None:
        return f"({option.default_text or 'none'})"
    return value if isinstance(value, str) else json.dumps(value)


def _origin(option: Option, origin: str) -> str:
    return origin + PER_VERSION_NOTE if option.per_version and origin == DEFAULT else origin


def settings_text(settings: Settings) -> str:
    """One aligned line per setting: key, value, origin; the weights one per line under ``scaling.``."""
    rows = [("setting", "value", "origin")]
    for key, entry in settings_json(settings).items():
        if isinstance(entry["value"], dict):
            rows += [(f"{key}.{name}", json.dumps(value), entry["origin"]) for name, value in entry["value"].items()]
        else:
            option = BY_KEY[key]
            rows.append((key, _text(option, entry["value"]), _origin(option, entry["origin"])))
    widths = [max(len(row[column]) for row in rows) for column in range(2)]
    return "\n".join(f"{key:<{widths[0]}}  {value:<{widths[1]}}  {origin}".rstrip() for key, value, origin in rows) + "\n"
