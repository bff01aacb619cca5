"""Records are decoded from several threads at once (the re-runs of both versions): that must never crash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import threading
from histeg.records.runs import Confirmations, TraceHeader
from histeg.records.base import convert
payload = b'{"schemaVersion": 2, "identifier": "' + b"a" * 40 + b'", "batches": []}'
barrier = threading.Barrier(8)
def first_use():
    barrier.wait()
    Confirmations.decode(payload, "confirmations.json")
    try:
        convert({}, TraceHeader)
    except Exception:
        pass
threads = [threading.Thread(target=first_use) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
"""


def test_first_decodes_of_a_record_in_many_threads_at_once_do_not_crash() -> None:
    """msgspec works a type's layout out on its first use; done by two threads at once it crashed the process
    about one time in twenty. Each try is a fresh interpreter, where every type is used for the first time."""
    codes = [subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, check=False).returncode for _ in range(12)]
    assert codes == [0] * 12
