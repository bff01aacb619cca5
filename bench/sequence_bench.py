"""Comparing two long line paths: the exact comparison next to the bounded one, time and peak memory.

    python bench/sequence_bench.py [--lengths 100000 1000000 5000000] [--exact-timeout 60] [--json FILE]

Each length is measured for two pairs of paths made like a lexer's (a loop whose
branches depend on the data): one that differs in three places (another branch
once, an iteration fewer, a line never run before) and one whose iterations run
in the opposite order (every line as often as before, so only an edit script
can tell how far apart they are). Each measurement runs in a process of its own
that builds the pair, notes its peak memory, compares and reports the time and
the peak memory the comparison added (``RUSAGE_SELF`` max RSS). "exact" is what
histeg did before: python-Levenshtein's distance and opcodes on the whole paths;
it is stopped after ``--exact-timeout`` seconds. "bounded" is
``histeg.compare.sequences.compare_sequences``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import time
from pathlib import Path

KINDS = ("few places", "reversed")


def _path(length: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    path = [0, 1]
    while len(path) < length:
        path.extend((2, 3, 4) if rng.random() < 0.8 else (2, 5, 6, 7))
    return path[:length]


def _pair(kind: str, length: int) -> tuple[str, str]:
    from histeg.compare.sequences import encode

    old = _path(length, 7)
    if kind == "reversed":
        new = list(reversed(old))
    else:
        new = list(old)
        new[length // 3 : length // 3 + 3] = [2, 5, 6, 7]
        del new[2 * length // 3 : 2 * length // 3 + 3]
        new[9 * length // 10] = 9
    return encode(old), encode(new)


def _measure(method: str, kind: str, length: int, results: multiprocessing.Queue) -> None:
    import Levenshtein

    from histeg.compare.sequences import compare_sequences

    old, new = _pair(kind, length)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if method == "exact":
        distance, sections, capped = Levenshtein.distance(old, new), len(Levenshtein.opcodes(old, new)), False
    else:
        found = compare_sequences(old, new)
        distance, sections, capped = found.distance, len(found.sections), found.capped
    seconds = time.perf_counter() - started
    added = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    results.put({"seconds": round(seconds, 3), "peakMiB": round(added / 1024, 1), "distance": distance, "sectionsOrOpcodes": sections,
                 "capped": capped})


def measure(method: str, kind: str, length: int, timeout: float) -> dict[str, object]:
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue = context.Queue()
    worker = context.Process(target=_measure, args=(method, kind, length, results))
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        worker.kill()
        worker.join()
        return {"seconds": None, "unfinished": f"stopped after {timeout:g} s"}
    return results.get(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    parser.add_argument("--exact-timeout", type=float, default=60.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    print(f"{'events':>10} {'pair':<11} {'exact s':>9} {'exact MiB':>10} {'bounded s':>10} {'bounded MiB':>12}  bounded result")
    for length in args.lengths:
        for kind in KINDS:
            exact = measure("exact", kind, length, args.exact_timeout)
            bounded = measure("bounded", kind, length, args.exact_timeout)
            rows.append({"events": length, "pair": kind, "exact": exact, "bounded": bounded})
            exact_s = f"{exact['seconds']:.3f}" if exact["seconds"] is not None else f">{args.exact_timeout:g}"
            exact_mib = f"{exact['peakMiB']:.1f}" if exact["seconds"] is not None else "-"
            result = f"distance {bounded['distance']}{' (capped)' if bounded['capped'] else ''}, {bounded['sectionsOrOpcodes']} sections"
            print(f"{length:>10} {kind:<11} {exact_s:>9} {exact_mib:>10} {bounded['seconds']:>10.3f} {bounded['peakMiB']:>12.1f}  {result}",
                  flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
