"""The C collector in use is the one built from this histeg: a build taking other arguments counts as not built."""

from __future__ import annotations

import pytest

from histeg.tracing import native


def test_the_built_collector_speaks_this_histegs_interface() -> None:
    if native._ctracer is None:
        pytest.skip("the C collector is not built here")
    assert native._ctracer.INTERFACE == native.INTERFACE
    assert native.available() and native.resolve("auto") == "c"


def test_the_built_decoder_speaks_this_histegs_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    """A decoder built by another histeg (without ``Decoder.index``, say) leaves sealing to the Python reference."""
    from histeg.traces import seal

    if seal._decode is None:
        pytest.skip("the C decoder is not built here")
    assert seal._decode.INTERFACE == seal.INTERFACE and seal.native()
    monkeypatch.setattr(seal, "INTERFACE", seal.INTERFACE + 1)
    assert not seal.native()
