"""``OUT/<index>/settings.json``: the settings a version's traces and targets were made with.

Only settings that change results are kept (not the number of workers, not
how messages look), each with its origin, one section per step; a step
rewrites its own section and keeps the other's. Outside ``histeg.settings``,
which the records are typed from: writing the file needs the records and the store.
"""

from __future__ import annotations

import msgspec

from histeg.errors import HistegError
from histeg.records.base import convert
from histeg.records.settings import RunSettings
from histeg.settings.model import Settings
from histeg.settings.show import settings_json
from histeg.settings.table import Step
from histeg.store import OutputStore

SETTINGS = RunSettings.FILE


def record_settings(store: OutputStore, index: int, settings: Settings, step: Step) -> None:
    path = store.file(index, SETTINGS)
    try:
        previous = msgspec.to_builtins(RunSettings.read(path)) if path.is_file() else {}
    except HistegError:  # damaged, or written by another histeg version: written anew
        previous = {}
    sections = {name: previous.get(name) for name in ("traces", "compare", "targets")} | {step: settings_json(settings, step)}
    convert({"schemaVersion": RunSettings.schema_version_expected(), **sections}, RunSettings).write(path)
