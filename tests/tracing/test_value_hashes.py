"""A value's digest for sealing, read from its encoded record, is the digest of its text."""

from __future__ import annotations

from histeg.traces.records import Definitions, parse_record, text_hash
from histeg.tracing import format as fmt


VALUES = [
    ("int", "12"),
    ("builtins.object", None),
    ("str", "'caf\u00e9 \U0001f600'"),
    ("str", "'\udcff'"),
    ("", ""),
    ("pkg.Node", "{text='x' * 200, parent=pkg.Node}" * 3),
    ("bytes", "b'" + "y" * 300 + "'"),
]


def value_record(value_id: int, type_name: str, rep: str | None) -> bytes:
    flag = b"\x00" if rep is None else b"\x01" + fmt.text(rep)
    return bytes([fmt.REC_VALUE]) + fmt.varint(value_id) + fmt.text(type_name) + flag


def test_the_digest_from_the_encoded_record_is_the_digest_of_the_values_text() -> None:
    for value_id, (type_name, rep) in enumerate(VALUES, start=1):
        record = value_record(value_id, type_name, rep)
        definitions = Definitions()
        end, _ = parse_record(record, 0, definitions)
        assert end == len(record)
        table = definitions.values
        assert table.digest(table.last) == text_hash(str(table.latest())), (type_name, rep)


def value_records(first_id: int = 1) -> bytes:
    return b"".join(value_record(value_id * 1000, type_name, rep) for value_id, (type_name, rep) in enumerate(VALUES, start=first_id))


def test_runs_of_value_records_read_in_c_as_one_by_one_in_python() -> None:
    """``seal.value_run`` (C) against ``parse_record``: the same table, the same digests, and where a record is cut
    short, a stop just before it (the Python parser says NeedMore there), at every byte of the run."""
    from array import array

    import pytest

    from histeg.traces import seal
    from histeg.traces.records import NeedMore

    if not seal.native():
        pytest.skip("histeg.traces._decode is not built")
    label = bytes([fmt.REC_LABEL]) + fmt.varint(1) + fmt.text("t.py::test") + fmt.text("call")
    data = b"\x00\x00" + value_records() + label + value_records(first_id=100)
    for cut in range(2, len(data) + 1):
        piece = bytearray(data[:cut])
        fast, slow = Definitions(), Definitions()
        pos, ids, hashes = seal.value_run(piece, 2, fast)
        expected_hashes, at = array("Q"), 2
        while at < len(piece) and piece[at] == fmt.REC_VALUE:
            try:
                at, _ = parse_record(piece, at, slow)
            except NeedMore:
                break
            expected_hashes.append(slow.values.digest(slow.values.last))
        assert pos == at, cut
        assert fast.values == slow.values and len(fast.values) == len(ids) and (ids[-1:] == array("Q", [slow.values.last]) or not ids)
        assert hashes == expected_hashes and [fast.values.digest(i) for i in ids] == list(expected_hashes)
    whole = seal.read_definitions(value_records() + label + value_records(first_id=100))
    assert len(whole.values) == 2 * len(VALUES) and whole.labels == {1: ("t.py::test", "call")}
    assert str(whole.values.get(104000)) == " " and str(whole.values.get(1000)) == "int 12"


def test_the_c_digest_is_hashlibs_blake2b_at_every_length_across_block_boundaries() -> None:
    """Sealing digests value records in C (its own BLAKE2b): the digest must be ``bytes_hash``'s, byte for byte, where a
    block ends (128 bytes), where one more starts, for the empty input and for long ones."""
    import random

    import pytest

    from histeg.traces import seal
    from histeg.traces.records import bytes_hash

    if not seal.native():
        pytest.skip("histeg.traces._decode is not built")
    draw = random.Random(7)
    for size in [*range(0, 300), 383, 384, 385, 4096, 70_001]:
        data = bytes(draw.getrandbits(8) for _ in range(size))
        assert seal._decode.digest(data) == bytes_hash(data), size


def test_values_defined_in_one_call_decode_as_values_defined_one_by_one() -> None:
    """``Decoder.define_values`` (sealing's runs of value records) against ``define_value``: the same digests of an
    entry point that passes and returns those values; a value's hash is part of them; ids that name no defined value
    (an inline int, past 32 bits) and buffers of different lengths are refused."""
    from array import array

    import pytest

    from histeg.traces import seal

    if not seal.native():
        pytest.skip("histeg.traces._decode is not built")
    ids, hashes = array("Q", [3, 1, 70_000]), array("Q", [11, 22, 2**63 + 5])
    words = array("H", [fmt.OP_CALL | fmt.CALL_ROOT, 7, 0, 0, 0, 3])
    for value_id in ids:
        words.extend([value_id & 0xFFFF, value_id >> 16])
    words.extend([fmt.OP_RETURN, 1, 0])

    def digest(define: str, hashes: array) -> bytes:
        decoder = seal._decode.Decoder()
        decoder.define(7, 1, (1, 2), 99)
        if define == "one by one":
            for value_id, value_hash in zip(ids, hashes, strict=True):
                decoder.define_value(value_id, value_hash)
        else:
            decoder.define_values(ids, hashes)
        return decoder.index(words.tobytes())[0]

    assert digest("in one call", hashes) == digest("one by one", hashes)
    assert digest("in one call", array("Q", [11, 22, 6])) != digest("in one call", hashes)
    decoder = seal._decode.Decoder()
    for bad_ids, bad_hashes in (
        (array("Q", [0x8000_0001]), array("Q", [1])),
        (array("Q", [2**40]), array("Q", [1])),
        (array("Q", [1, 2]), array("Q", [1])),
    ):
        with pytest.raises(ValueError):
            decoder.define_values(bad_ids, bad_hashes)
