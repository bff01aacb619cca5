"""Value records written by the C collector itself (a batch before each chunk) against the Python collector's.

Why: the C collector encodes each new value's record and shortens long texts (``values.cap``) without calling into
Python; a byte off in a length, a surrogate encoded otherwise, a digest of other bytes, or a record handed over after
the chunk that names it would change what a value reads as, or the digests entry points are compared by.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from histeg.traces.call_tree import Call
from histeg.traces.reader import TraceFile, read_trace, trace_files
from histeg.traces.records import Value
from histeg.tracing import activation, native, values
from histeg.tracing.activation import traced_environment
from tests.tracing.conftest import base_environment, project_config, write_project

pytestmark = pytest.mark.skipif(not native.available(), reason="the C collector (_ctracer) is not built")

LONG_TEXTS = [
    "a" * values.MAX_REPR,
    "a" * (values.MAX_REPR + 1),
    "é" * 200,
    "x\ud800y" * 50,
    "\U0001f600" * 130,
    "abc" * 1000,
    "ascii then ü " * 20,
]

TRACED_MODULE = '''
class Größe:
    def __init__(self, name, number):
        self.name = name
        self.number = number


class Plain:
    def __init__(self, text):
        self.text = text


def keep(value):
    return value


def run(texts, count):
    kept = [keep(Größe(text, 1)) for text in texts]
    kept += [keep(Plain(f"{number:05d} " + "z" * 150)) for number in range(count)]
    kept += [keep({"name": "ü" * number, "number": number}) for number in range(count // 10)]
    return len(kept)
'''


def test_the_c_cap_is_values_cap() -> None:
    from histeg.tracing import _ctracer

    for text in [*LONG_TEXTS, "", "short", "é" * values.MAX_REPR]:
        assert _ctracer.cap(text, values.MAX_REPR) == values.cap(text), text[:20]


def traced(tracer: str, tmp_path: Path, count: int) -> Path:
    root = tmp_path / tracer / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "records_mod.py").write_text(TRACED_MODULE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("records_mod", root / "src" / "records_mod.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = activation.TraceConfig(root=str(root), sources=["src"], tests=[], trace_dir=str(tmp_path / tracer / "traces"),
                                    tracer=tracer, line_budget=0, value_budget=0)
    collector = activation.start(config)
    try:
        for test in ("t::first", "t::second"):
            collector.set_label(test, "call")
            assert module.run(LONG_TEXTS, count) == len(LONG_TEXTS) + count + count // 10
    finally:
        stopped = activation.stop()
    assert stopped is not None
    return Path(stopped)


def shown(call: Call) -> list[tuple[str, list[tuple[str, str | None] | None], tuple[str, str | None] | None]]:
    def text(value: Value | None) -> tuple[str, str | None] | None:
        return None if value is None else (value.type, value.repr)

    return [(c.function.ident.split(":", 1)[1], [text(p) for p in c.params], text(c.returned)) for c in call.walk()]


def test_the_c_collector_defines_every_value_as_the_python_collector_does(tmp_path: Path) -> None:
    """3,000 values whose records pass 64 KiB, so that several batches are handed over while chunks are shipped;
    texts longer than the bound, non-ASCII type names and texts, surrogates."""
    count = 3000
    by_tracer = {tracer: traced(tracer, tmp_path, count) for tracer in ("python", "c")}
    trees = {tracer: [shown(root) for root in read_trace(path).entry_points] for tracer, path in by_tracer.items()}
    assert trees["c"] == trees["python"]
    texts = {entry[2] for tree in trees["c"] for entry in tree[1:] if entry[0] == "keep" and entry[2] is not None}
    assert ("records_mod.Größe", None) not in texts
    assert any(t[1] is not None and "\u2026[len=" in t[1] for t in texts), "no text was shortened"
    assert sum(1 for t in texts if t[0] == "records_mod.Plain") == count
    digests = {tracer: [info.digest for info in TraceFile(path).entries] for tracer, path in by_tracer.items()}
    assert digests["c"] == digests["python"]


FORKING = '''
from pkg.boxes import Box, keep, split

keep(Box("parent-1"))
split("parent-2", "parent-3")
keep(Box("parent-4"))
'''

BOXES = '''
import os
import sys


class Box:
    def __init__(self, label):
        self.label = label


def keep(value):
    return value


def split(*labels):
    kept = [keep(Box(label)) for label in labels]
    pid = os.fork()
    if pid == 0:
        keep(Box("child-1"))
        sys.exit(0)
    os.waitpid(pid, 0)
    return kept
'''


def test_a_forked_child_never_writes_the_records_its_parent_had_not_handed_over(tmp_path: Path) -> None:
    """The parent's boxes made in the call that forks are walked and interned in C, and their records are still in
    the batch when the process forks: only the parent's file may define them; the child numbers its own values
    afresh (and makes fewer, so that a record of the parent's would not be overwritten by one of its own)."""
    project = tmp_path / "p"
    write_project(project, {"src/pkg/__init__.py": "", "src/pkg/boxes.py": BOXES, "tests/test_none.py": "", "forking.py": FORKING})
    env = traced_environment(project_config(project, tracer="c"), base_environment(project))
    subprocess.run([sys.executable, "forking.py"], cwd=project, env=env, check=True)
    traces = [read_trace(path) for path in trace_files(project / "traces")]
    labels = sorted([call.params[0].repr for call in trace.entry_points if call.function.ident.endswith(":keep") and call.params[0]]
                    for trace in traces)
    assert labels == [["{label='child-1'}"], ["{label='parent-1'}", "{label='parent-4'}"]]
    child = next(trace for trace in traces if any("child-1" in str(call.params[0]) for call in trace.entry_points))
    defined = [str(value) for _, value in TraceFile(child.path).definitions.values.items()]
    assert not [text for text in defined if "parent" in text]
