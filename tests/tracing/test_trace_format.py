"""The value abstraction and the .htrace format, in-process: round trips, truncation, damage."""

from __future__ import annotations

import importlib.util
import json
import sys
from array import array
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from histeg.errors import HistegError
from histeg.tracing import activation, native, values
from histeg.tracing import format as fmt
from histeg.compare.divergences import compare_entry_points
from histeg.compare.entry_points import EntryRef
from histeg.traces.events import STREAM_DIGEST
from histeg.traces.reader import TraceFile, read_trace
from histeg.traces.records import Value
from histeg.traces.seal import seal, split_stream
from tests.conftest import SCHEMAS, run_histeg

MODULE = '''
def outer(n):
    total = 0
    for i in range(n):
        total += inner(i)
    return total


def inner(i):
    return i * 2
'''


def test_cap():
    assert values.cap("x" * values.MAX_REPR) == "x" * values.MAX_REPR
    assert values.cap("x" * (values.MAX_REPR + 1)).endswith(f"[len={values.MAX_REPR + 1} hash={values._digest('x' * (values.MAX_REPR + 1))}]")


def trace_in_process(tmp_path: Path, capture: bool = True, n: int = 3) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "inproc_mod.py").write_text(MODULE)
    config = activation.TraceConfig(root=str(root), sources=["src"], tests=[], trace_dir=str(tmp_path / "traces"), values="structural" if capture else "off")
    spec = importlib.util.spec_from_file_location("inproc_mod", root / "src" / "inproc_mod.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    collector = activation.start(config)
    try:
        collector.set_label("manual", "call")
        assert module.outer(n) == n * (n - 1)
        collector.record_outcome("manual", "call", "passed")
    finally:
        path = activation.stop()
    assert activation.active() is None
    return Path(path)


def test_in_process_round_trip(tmp_path):
    trace = read_trace(trace_in_process(tmp_path))
    assert not trace.truncated and trace.version == fmt.FORMAT_VERSION
    assert trace.meta["pid"] > 0 and trace.meta["values"] == "structural"
    (root,) = trace.entry_points
    assert (root.function.ident, root.label, root.phase) == ("inproc_mod:outer", "manual", "call")
    assert root.lines == [1, 2, 3, 2, 3, 2, 3, 2, 4]
    assert [pos for pos, _ in root.children] == [3, 5, 7]
    assert [child.params for _, child in root.children] == [[Value("int", str(i))] for i in range(3)]
    assert [child.returned for _, child in root.children] == [Value("int", str(2 * i)) for i in range(3)]
    assert root.returned == Value("int", "6")
    assert trace.outcomes == {"manual": {"call": "passed"}}
    assert trace.line_events == 9 + 3


def test_json_export_matches_its_schema_and_the_nested_form(tmp_path):
    exported = read_trace(trace_in_process(tmp_path)).to_json()
    schema = json.loads((SCHEMAS / "trace.schema.json").read_text())
    jsonschema.validate(exported, schema)
    root = exported["traces"][0]
    assert root["trace"][:5] == [1, 2, 3, root["trace"][3], 2]
    assert root["trace"][3]["called"] == "inproc_mod:inner"
    assert root["calledWithParameters"] == [{"name": "n", "type": "int", "repr": "3"}]
    assert root["entryPoint"] == {"label": "manual", "phase": "call"}


STREAMS = {
    "raw": {},
    "raw, then deflated": {"batch_bytes": 1, "raw_bytes": 60},
    "deflated from the start": {"raw_bytes": 0},
}
"""Writer settings for each shape of body: every batch written as it is, the first batches raw and the rest one zlib
stream (batches of one record), a ``REC_DEFLATE`` before the first record."""


def write_by_hand(path: Path, **writer: int) -> None:
    writer = fmt.TraceWriter(str(path), {"pid": 1}, **writer)
    writer.function(1, "m:f", "m.py", 10, 0, ("x",), [11, 12, 13, 14])
    writer.function(2, "m:g", "m.py", 20, fmt.FUNC_GENERATOR, (), [21, 22])
    writer.value(1, "int", "7")
    writer.value(2, "m.Obj", None)
    writer.label(1, "t::a", "call")
    writer.thread(0, 123, "MainThread")
    words = array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 1, 0, 1, 1, 0, 11, 12])
    words += array("H", [fmt.OP_CALL | fmt.CALL_GEN, 2, 0, 5, 0, 0, 21, fmt.OP_YIELD, 1, 0, 13])
    writer.chunk(0, words.tobytes())
    words = array("H", [fmt.OP_RESUME, 5, 0, 22, fmt.OP_RETURN, 2, 0, 14, fmt.OP_RAISE, 1, 0])
    writer.chunk(0, words.tobytes())
    writer.close()


def as_written_before_raw_streams(path: Path) -> None:
    """Rewrite a file deflated from the start as earlier versions wrote it: no ``stream`` in the meta, no ``Z``."""
    with open(path, "rb") as handle:
        version, meta, body = fmt.read_header(handle)
        handle.seek(body)
        rest = handle.read()
    assert meta.pop("stream") == fmt.STREAM_RAW and rest[0] == fmt.REC_DEFLATE
    header = json.dumps(meta).encode()
    path.write_bytes(fmt.MAGIC + bytes([version]) + fmt.varint(len(header)) + header + rest[1:])


@pytest.mark.parametrize("stream", [*STREAMS, "earlier versions"])
def test_hand_written_events_give_the_documented_tree(tmp_path, stream, monkeypatch):
    monkeypatch.setattr(fmt, "_other_threads", lambda: 0)  # batches written as they fill, not held for a pytest-xdist worker's threads
    path = tmp_path / "hand.htrace"
    write_by_hand(path, **STREAMS.get(stream, STREAMS["deflated from the start"]))
    if stream == "earlier versions":
        as_written_before_raw_streams(path)
    body = path.read_bytes()
    visible = {"raw": [True, True], "raw, then deflated": [True, False]}.get(stream, [False, False])
    assert [b"m:f" in body, b"MainThread" in body] == visible  # the first record, one of the last
    trace = read_trace(path)
    (root,) = trace.entry_points
    assert (root.function.ident, root.label, root.params, root.lines) == ("m:f", "t::a", [Value("int", "7")], [1, 2, 3, 4])
    assert root.raised == Value("int", "7") and root.ended
    ((position, gen),) = root.children
    assert position == 2 and gen.function.kind == "generator"
    assert gen.lines == [1, 2] and gen.yielded == [Value("int", "7")] and gen.returned == Value("m.Obj", None)
    assert trace.threads == {0: (123, "MainThread")} and trace.line_events == 6


def write_uncaptured_calls(path: Path, bare: bool) -> None:
    """A root call of ``m:g`` (two parameters) and two calls of ``m:f`` (one) in it, no value of which was captured:
    as bare calls and returns, or with their counts and value ids 0 written out."""
    writer = fmt.TraceWriter(str(path), {"pid": 1})
    writer.function(1, "m:f", "m.py", 10, 0, ("x",), [11, 12])
    writer.function(2, "m:g", "m.py", 20, 0, ("a", "b"), [21, 22])
    writer.label(1, "t::a", "call")
    writer.thread(0, 123, "MainThread")
    root = [fmt.OP_CALL | fmt.CALL_ROOT | fmt.CALL_BARE, 2, 0, 1, 0] if bare else [fmt.OP_CALL | fmt.CALL_ROOT, 2, 0, 1, 0, 2, 0, 0, 0, 0]
    call = [fmt.OP_CALL | fmt.CALL_BARE, 1, 0] if bare else [fmt.OP_CALL, 1, 0, 1, 0, 0]
    returned = [fmt.OP_RETURN_BARE] if bare else [fmt.OP_RETURN, 0, 0]
    words = [*root, 21, *call, 11, 12, *returned, *call, 11, *returned, 22, *returned]
    writer.chunk(0, array("H", words).tobytes())
    writer.close()


def test_bare_calls_and_returns_read_as_their_written_out_form(tmp_path):
    """``CALL_BARE`` and ``OP_RETURN_BARE`` leave out what a call past the value budget has not got (its parameter
    count and ids, its return value's id): read, indexed and digested, they are the calls written out in full."""
    written, bare = tmp_path / "written.htrace", tmp_path / "bare.htrace"
    write_uncaptured_calls(written, bare=False)
    write_uncaptured_calls(bare, bare=True)
    assert bare.stat().st_size < written.stat().st_size
    before = [read_trace(path).to_json()["traces"] for path in (written, bare)]
    assert before[0] == before[1]
    (root,) = read_trace(bare).entry_points
    assert root.function.ident == "m:g" and len(root.params) == 2 and [len(child.params) for _, child in root.children] == [1, 1]
    for path in (written, bare):
        seal(path)
    assert read_trace(bare).to_json()["traces"] == read_trace(written).to_json()["traces"] == before[0]
    assert [entry.digest for entry in TraceFile(bare).entries] == [entry.digest for entry in TraceFile(written).entries]


@pytest.mark.parametrize("tracer", ["c", "python"])
def test_calls_past_the_value_budget_are_written_bare(tmp_path, tracer):
    """Both collectors write a call past the value budget, and a return whose value was not captured, in their short
    forms; read back, those calls have their parameter, not captured, and the calls within the budget their values."""
    if tracer == "c" and not native.available():
        pytest.skip("the C collector is not built")
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "budget_mod.py").write_text(MODULE)
    config = activation.TraceConfig(root=str(root), sources=["src"], tests=[], trace_dir=str(tmp_path / "traces"), tracer=tracer,
                                    value_budget=4)
    spec = importlib.util.spec_from_file_location("budget_mod", root / "src" / "budget_mod.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    activation.start(config)
    try:
        assert module.outer(6) == 30
    finally:
        path = Path(activation.stop())
    words = array("H")
    split_stream(path, lambda number, info, entry: words.frombytes(bytes(entry)))
    assert words.count(fmt.OP_CALL | fmt.CALL_BARE) == 2 and words.count(fmt.OP_RETURN_BARE) == 2  # inner's 5th and 6th calls
    (outer,) = read_trace(path).entry_points
    inner = [child for _, child in outer.children]
    assert [call.params for call in inner[4:]] == [[None], [None]] and [call.returned for call in inner[4:]] == [None, None]
    assert [call.params for call in inner[:4]] == [[Value("int", str(i))] for i in range(4)]


@pytest.mark.parametrize("stream", STREAMS)
def test_every_cut_of_a_file_is_truncated_or_a_one_line_error(tmp_path, stream, monkeypatch):
    monkeypatch.setattr(fmt, "_other_threads", lambda: 0)
    path = tmp_path / "full.htrace"
    write_by_hand(path, **STREAMS[stream])
    data = path.read_bytes()
    cut = tmp_path / "cut.htrace"
    truncated = 0
    for size in range(len(data)):
        cut.write_bytes(data[:size])
        try:
            trace = read_trace(cut)
        except HistegError as exc:
            assert "\n" not in str(exc) and str(cut) in str(exc)
            continue
        if not trace.truncated:  # only the zlib trailer is missing: every record is there
            assert size > len(data) - 20 and trace.to_json()["traces"] == read_trace(path).to_json()["traces"]
        truncated += trace.truncated
    assert truncated > len(data) // 2


def test_killed_writer_leaves_a_readable_prefix(tmp_path, monkeypatch):
    monkeypatch.setattr(fmt, "_other_threads", lambda: 0)  # this process's own threads (a pytest-xdist worker's) aside
    path = tmp_path / "partial.htrace"
    writer = fmt.TraceWriter(str(path), {}, batch_bytes=1)
    writer.function(1, "m:f", "m.py", 1, 0, (), [])
    writer.thread(0, 1, "MainThread")
    writer.chunk(0, array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 0, 0, 0, 2, fmt.OP_RETURN, 0, 0]).tobytes())
    writer.chunk(0, array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 0, 0, 0, 3, 4]).tobytes())
    trace = read_trace(path)  # never closed: as if killed
    assert trace.truncated
    assert [(c.lines, c.ended) for c in trace.entry_points] == [([1], True), ([2, 3], False)]
    writer.close()
    assert not read_trace(path).truncated


def test_batches_wait_while_other_threads_run(tmp_path, monkeypatch):
    """Writing would release the GIL to a waiting thread of the program: batches wait, up to HELD_BYTES."""
    threads = [1]
    monkeypatch.setattr(fmt, "_other_threads", lambda: threads[0])
    monkeypatch.setattr(fmt, "HELD_BYTES", 1 << 12)
    path = tmp_path / "held.htrace"
    writer = fmt.TraceWriter(str(path), {}, batch_bytes=1)
    header = path.stat().st_size
    writer.function(1, "m:f", "m.py", 1, 0, (), [])
    writer.chunk(0, array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 0, 0, 0, 2, fmt.OP_RETURN, 0, 0]).tobytes())
    assert path.stat().st_size == header  # held
    writer.chunk(0, array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 0, 0, 0, *[2] * 2100, fmt.OP_RETURN, 0, 0]).tobytes())
    assert path.stat().st_size > header  # past HELD_BYTES: written
    size = path.stat().st_size
    writer.chunk(0, array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 0, 0, 0, 3, fmt.OP_RETURN, 0, 0]).tobytes())
    assert path.stat().st_size == size
    threads[0] = 0  # the program's threads ended: the next record writes what waited
    writer.chunk(0, array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 0, 0, 0, 4, fmt.OP_RETURN, 0, 0]).tobytes())
    assert [c.lines for c in read_trace(path).entry_points] == [[1], [1] * 2100, [2], [3]]
    writer.close()
    assert not read_trace(path).truncated


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"hello world", "is not a histeg trace file"),
        (fmt.MAGIC + bytes([99]) + b"\x02{}", "has format version 99"),
        (fmt.MAGIC + bytes([fmt.FORMAT_VERSION]) + b"\x02{}" + b"\x78\x01garbage-garbage", "corrupt trace file"),
    ],
)
def test_damaged_files_give_one_line_errors(tmp_path, content, message):
    path = tmp_path / "bad.htrace"
    path.write_bytes(content)
    with pytest.raises(HistegError, match=message):
        read_trace(path)
    result = run_histeg("trace", "show", str(path))
    assert result.code == 2 and message in result.stderr and result.stderr.count("\n") == 1


def test_trace_show_prints_nested_calls(tmp_path):
    path = trace_in_process(tmp_path)
    result = run_histeg("trace", "show", str(path))
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2] == "trace 1: manual [call] on MainThread"
    assert lines[3] == "  inproc_mod:outer(n=int 3)  src/inproc_mod.py:2"
    assert lines[4:8] == ["    lines [1] [2] [3]", "      inproc_mod:inner(i=int 0)  src/inproc_mod.py:9", "        lines [1]", "        returned int 0"]
    assert lines[-4:] == ["    returned int 6", "", "outcomes:", "  manual: call passed"]


def test_trace_show_notes_truncation(tmp_path):
    path = tmp_path / "hand.htrace"
    write_by_hand(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 12])
    result = run_histeg("trace", "show", str(path))
    assert result.code == 0 and "truncated" in result.stderr and "TRUNCATED" in result.stdout.splitlines()[0]


def test_values_off_in_process(tmp_path):
    trace = read_trace(trace_in_process(tmp_path, capture=False))
    root = trace.entry_points[0]
    assert root.params == [] and root.returned is None and root.ended and root.lines[-1] == 4
    assert sys.monitoring.get_tool(4) is None


def test_tracer_choice_without_the_c_extension(monkeypatch, tmp_path):
    """Where no compiler built the extension, ``auto`` falls back to Python and ``c`` says why it cannot."""
    from histeg.tracing import native
    from histeg.tracing.selection import Selector

    assert native.available() and native.resolve("auto") == "c"
    monkeypatch.setattr(native, "_ctracer", None)
    assert native.resolve("auto") == "python" and native.resolve("c") == "c"
    writer = fmt.TraceWriter(str(tmp_path / "t.htrace"), {})
    try:
        with pytest.raises(RuntimeError, match="the C tracer is not built"):
            native.make_collector("c", Selector(str(tmp_path), ["."], []), writer)
        assert type(native.make_collector("auto", Selector(str(tmp_path), ["."], []), writer)).implementation == "python"
        with pytest.raises(ValueError, match="unknown tracer 'java'"):
            native.resolve("java")
    finally:
        writer.close()


def test_a_stopped_c_collector_is_freed(tmp_path):
    """The C tracer holds bound methods of its collector; the cycle must not outlive them."""
    import gc
    import weakref

    from histeg.tracing import native
    from histeg.tracing.selection import Selector

    collector = native.make_collector("c", Selector(str(tmp_path), ["."], []), fmt.TraceWriter(str(tmp_path / "t.htrace"), {}))
    collector.start()
    collector.stop()
    alive = weakref.ref(collector)
    del collector
    gc.collect()
    assert alive() is None


def test_sealing_keeps_every_record_and_the_status(tmp_path):
    path = trace_in_process(tmp_path)
    before = read_trace(path).to_json()
    assert fmt.read_meta(str(path))["stream"] == fmt.STREAM_RAW
    assert seal(path) and fmt.read_meta(str(path))["sealed"] and "stream" not in fmt.read_meta(str(path))  # its body is no stream
    after = read_trace(path).to_json()
    assert after["traces"] == before["traces"] and after["outcomes"] == before["outcomes"] and not after["truncated"]
    assert fmt.read_status(str(path)) == "complete" and not seal(path), "sealing twice is a no-op"


def test_sealing_lets_go_of_what_it_read_while_a_profiler_holds_its_frames(tmp_path):
    """A sampling profiler in the same process (a Dask worker's, on by default) keeps the frames it read: a frame that
    outlives its call keeps its locals, and a view of the stream's buffer among them made resizing the buffer fail
    (BufferError), so that version's traces failed."""
    path = trace_in_process(tmp_path, n=40_000)  # a stream of several read blocks, each with chunks of events
    expected = read_trace(path).to_json()
    held = []

    def profiler(frame, event, arg):
        if event == "call":
            held.append(frame)  # kept, as a sampler keeps the stacks it took

    sys.setprofile(profiler)
    try:
        assert seal(path)
    finally:
        sys.setprofile(None)
    assert len(held) > 100
    assert read_trace(path).to_json()["traces"] == expected["traces"]


def test_sealing_keeps_truncated_and_broken_states(tmp_path):
    cut = tmp_path / "cut.htrace"
    write_by_hand(cut)
    cut.write_bytes(cut.read_bytes()[:-10])
    before = read_trace(cut)
    assert before.truncated and seal(cut) and fmt.read_status(str(cut)) == "truncated"
    assert read_trace(cut).to_json()["traces"] == before.to_json()["traces"]
    broken = tmp_path / "broken.htrace"
    writer = fmt.TraceWriter(str(broken), {"pid": 1})
    writer.broken("sys.monitoring tool id 4 was freed")
    writer.close()
    assert seal(broken) and fmt.read_status(str(broken)) == "broken"
    assert read_trace(broken).broken == "sys.monitoring tool id 4 was freed"


def test_every_cut_of_a_sealed_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "full.htrace"
    write_by_hand(path)
    seal(path)
    data = path.read_bytes()
    cut = tmp_path / "cut.htrace"
    for size in range(0, len(data) - 1, 7):
        cut.write_bytes(data[:size])
        with pytest.raises(HistegError) as caught:
            read_trace(cut)
        assert "\n" not in str(caught.value) and str(cut) in str(caught.value)


def sealed_as_xz(source: Path, target: Path) -> None:
    """A file sealed by this histeg written again as earlier versions sealed it: the same sections as xz streams."""
    import lzma
    import struct
    import zlib

    import zstandard

    data = source.read_bytes()
    with open(source, "rb") as handle:
        version, meta, body = fmt.read_header(handle)
    offset, length = struct.unpack_from("<QQ", data, len(data) - 22)
    index = json.loads(zlib.decompress(data[offset : offset + length]))
    header = json.dumps({**meta, "compression": "xz"}, sort_keys=True).encode()
    out = bytearray(fmt.MAGIC + bytes([version]) + fmt.varint(len(header)) + header)

    def moved(where: list[int]) -> list[int]:
        section = lzma.compress(zstandard.ZstdDecompressor().decompress(data[where[0] : where[0] + where[1]]), format=lzma.FORMAT_XZ)
        out.extend(section)
        return [len(out) - len(section), len(section)]

    index["blocks"] = [moved(block) for block in index["blocks"]]
    index["definitions"] = moved(index["definitions"])
    packed = zlib.compress(json.dumps(index).encode())
    out += packed + struct.pack("<QQ", len(out), len(packed)) + data[-6:]
    target.write_bytes(bytes(out))


def test_files_sealed_as_xz_by_earlier_versions_read_alike(tmp_path):
    """Traces sealed before zstd stay readable: a rerun reuses them instead of tracing again."""
    path = trace_in_process(tmp_path)
    seal(path)
    assert fmt.read_meta(str(path))["compression"] == "zstd"
    old = tmp_path / "old.htrace"
    sealed_as_xz(path, old)
    then, now = read_trace(old).to_json(), read_trace(path).to_json()
    assert then.pop("meta")["compression"] == "xz" and now.pop("meta")["compression"] == "zstd"
    assert then == now and now["traces"]
    damaged = tmp_path / "damaged.htrace"
    damaged.write_bytes(old.read_bytes().replace(b"\xfd7zXZ", b"\xfd7zXY", 1))
    with pytest.raises(HistegError, match="compressed data damaged"):
        read_trace(damaged)



def with_index(source: Path, target: Path, change: Callable[[dict], None]) -> None:
    """``source`` sealed again into ``target`` with its index changed by ``change``."""
    import struct
    import zlib

    data = source.read_bytes()
    offset, length = struct.unpack_from("<QQ", data, len(data) - 22)
    index = json.loads(zlib.decompress(data[offset : offset + length]))
    change(index)
    packed = zlib.compress(json.dumps(index).encode())
    target.write_bytes(data[:offset] + packed + struct.pack("<QQ", offset, len(packed)) + data[-6:])


def test_digests_of_files_sealed_before_their_scheme_never_equal_todays(tmp_path):
    """An entry point's stream digest lets a comparison skip it unread: one made by an earlier digest scheme must never
    pass for today's, whatever its bytes, and the comparison then reads both sides and finds them alike."""
    path = trace_in_process(tmp_path)
    seal(path)
    old = tmp_path / "old.htrace"

    def as_sealed_earlier(index: dict) -> None:
        assert index.pop("streamDigest") == STREAM_DIGEST

    with_index(path, old, as_sealed_earlier)
    then, now = TraceFile(old), TraceFile(path)
    assert read_trace(old).to_json() == read_trace(path).to_json()
    assert then.entries and len(then.entries) == len(now.entries)
    for a, b in zip(then.entries, now.entries, strict=True):
        assert a.digest != b.digest and a.digest[2:] == b.digest, "the same bytes, told apart by their scheme"
    assert all(compare_entry_points(EntryRef(then, k), EntryRef(now, k)) == [] for k in range(len(now.entries)))
    for bad in ("x", 0, 1.5, 70000, True):
        damaged = tmp_path / "damaged.htrace"
        with_index(path, damaged, lambda index, bad=bad: index.__setitem__("streamDigest", bad))
        with pytest.raises(HistegError, match="corrupt trace file .*unknown stream digest"):
            TraceFile(damaged)
