"""``OUT/<index>/settings.json``: the settings a version's traces and targets were made with.

Only settings that change results are kept (not the number of workers, not
how messages look), each with its origin, one section per step; a step
rewrites its own section and keeps the other's.
"""

from __future__ import annotations

from typing import Any

from histeg.atomic import read_json, write_json
from histeg.errors import HistegError
from histeg.settings.model import Settings
from histeg.settings.show import settings_json
from histeg.settings.table import Step
from histeg.store import OutputStore

SETTINGS = "settings.json"
SCHEMA_VERSION = 1


STEPS: tuple[Step, ...] = ("traces", "targets")


def record_settings(store: OutputStore, index: int, settings: Settings, step: Step) -> None:
    path = store.file(index, SETTINGS)
    previous: Any = {}
    if path.is_file():
        try:
            previous = read_json(path)
        except HistegError:  # a damaged record is written anew
            previous = {}
    if not isinstance(previous, dict) or previous.get("schemaVersion") != SCHEMA_VERSION:
        previous = {}
    sections = {name: previous[name] for name in STEPS if name in previous} | {step: settings_json(settings, step)}
    write_json(path, {"schemaVersion": SCHEMA_VERSION, **{name: sections[name] for name in STEPS if name in sections}})
