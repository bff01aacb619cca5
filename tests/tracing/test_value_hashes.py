"""A value's digest for sealing, read from its encoded record, is the digest of its text."""

from __future__ import annotations

from histeg.traces.records import Definitions, parse_record, text_hash
from histeg.tracing import format as fmt


def test_the_digest_from_the_encoded_record_is_the_digest_of_the_values_text() -> None:
    values = [("int", "12"), ("builtins.object", None), ("str", "'caf\u00e9 \U0001f600'"), ("str", "'\udcff'"), ("", ""),
              ("pkg.Node", "{text='x' * 200, parent=pkg.Node}" * 3)]
    for value_id, (type_name, rep) in enumerate(values, start=1):
        flag = b"\x00" if rep is None else b"\x01" + fmt.text(rep)
        record = bytes([fmt.REC_VALUE]) + fmt.varint(value_id) + fmt.text(type_name) + flag
        definitions = Definitions()
        end, _ = parse_record(record, 0, definitions)
        assert end == len(record)
        table = definitions.values
        assert table.latest_hash() == text_hash(str(table.latest())), (type_name, rep)
