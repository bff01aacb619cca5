"""The commands whose runs produce a version's traces.

A version is traced by running its pytest suite (the default), a module's
``__main__`` (``--run-main``) or any shell command (``--run``), each in the
snapshot with the tracing environment. Labels name the runs' log and config
files and are stored in every trace file's header, so they are unique and
safe as file names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import msgspec

from histeg.records.runs import CommandKind, TraceCommand

__all__ = [
    "CommandKind",
    "TraceCommand",
    "command_line",
    "main_command",
    "pytest_command",
    "shell_command",
    "trace_commands",
    "unique_labels",
]

PYTEST_FLAGS = ("-q", "-p", "no:cacheprovider")


def command_line(command: TraceCommand, python: str, pytest_args: Sequence[str] = ()) -> list[str]:
    """The process to start; a shell command is passed to ``/bin/sh -c``. ``pytest_args``
    come from the version's build (options that neutralise reports written into the run folder)."""
    if command.kind == "pytest":
        return [python, "-m", "pytest", *PYTEST_FLAGS, *pytest_args, *command.args]
    if command.kind == "main":
        assert command.module is not None
        return [python, "-m", command.module, *command.args]
    assert command.shell is not None
    return ["/bin/sh", "-c", command.shell]


def pytest_command(test_dirs: Sequence[str], label: str = "pytest", options: Sequence[str] = ()) -> TraceCommand:
    """``options``: the user's own pytest options (``--ignore=tests/slow``, ``-m "not network"``)."""
    return TraceCommand(kind="pytest", label=label, args=(*options, *test_dirs))


def main_command(module: str, args: Sequence[str] = ()) -> TraceCommand:
    return TraceCommand(kind="main", label=f"main-{module}", args=tuple(args), module=module)


def shell_command(command: str) -> TraceCommand:
    return TraceCommand(kind="shell", label=f"run-{command}", shell=command)


def trace_commands(
    test_dirs: Sequence[str],
    run_main: Iterable[str] = (),
    run: Iterable[str] = (),
    with_tests: bool = True,
    pytest_options: Sequence[str] = (),
) -> list[TraceCommand]:
    """The version's pytest suite (unless ``with_tests`` is off), then each ``--run-main``, then each ``--run``."""
    commands = [pytest_command(test_dirs, options=pytest_options)] if with_tests else []
    commands += [main_command(module) for module in run_main]
    commands += [shell_command(command) for command in run]
    return unique_labels(commands)


def unique_labels(commands: Iterable[TraceCommand]) -> list[TraceCommand]:
    """Labels made file-name safe (at most 60 characters) and distinct (``-2``, ``-3`` ... on repeats)."""
    seen: set[str] = set()
    result = []
    for command in commands:
        base = (
            re.sub(r"[^A-Za-z0-9._-]+", "_", command.label)[:60].strip("._") or command.kind
        )  # cut, then strip: a label made once is made again alike
        label, n = base, 1
        while label in seen:
            n += 1
            label = f"{base}-{n}"
        seen.add(label)
        result.append(msgspec.structs.replace(command, label=label))
    return result
