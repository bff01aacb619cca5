"""Carved witnesses on real projects: how many versions whose top target changed a call's result get one, and how fast.

    python bench/carve_bench.py OUT [OUT ...] [--top 1] [--json FILE]

Each OUT is an output folder ``histeg compute`` made (``bench/ground_truth.py --keep`` leaves one per project, with
seeded mutants, constants and their reverts; ``bench/real_bugs.py`` one with re-introduced fixes). For every version
whose top target has a divergence whose result changed (a return value or an exception, in ``testingTargets.json``),
``histeg generate VERSION --carve`` runs once (nothing else: no Pynguin), timed on the wall clock. Printed per
project: eligible versions, those whose top target got a carved witness (the goal is at least 60 %), the median and
largest seconds per version (the goal is at most 10 s), and the divergences not carved or not kept, by reason.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any


def eligible(folder: Path) -> bool:
    """The version's top target has a divergence whose result changed (charged locally or not)."""
    path = folder / "testingTargets.json"
    if not path.is_file():
        return False
    targets = json.loads(path.read_text())["targets"]
    if not targets:
        return False
    top = targets[0]
    return any("return" in d["kinds"] for d in [*top["localDivergences"], *top["nonLocalDivergences"]])


def versions(out: Path) -> list[int]:
    return sorted(int(p.name) for p in out.iterdir() if p.name.isdigit() and eligible(p))


def carve(out: Path, index: int, top: int) -> tuple[dict[str, Any] | None, float, str]:
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "histeg", "generate", str(index), "--out", str(out), "--carve", "--top", str(top), "--json", "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - started
    try:
        return json.loads(run.stdout), seconds, ""
    except ValueError:
        return None, seconds, (run.stderr.strip().splitlines() or [f"exit code {run.returncode}"])[-1]


def measure(out: Path, top: int) -> dict[str, Any]:
    rows = []
    reasons: Counter[str] = Counter()
    for index in versions(out):
        document, seconds, error = carve(out, index, top)
        if document is None:
            rows.append({"index": index, "witness": False, "seconds": seconds, "error": error})
            continue
        first = document["targets"][0]["identifier"] if document["targets"] else None
        ranked = json.loads((out / str(index) / "testingTargets.json").read_text())["targets"][0]["identifier"]
        witnessed = any(w.get("carved") for t in document["targets"] if t["identifier"] == ranked for w in t["witnesses"])
        carving = document.get("carved") or {}
        reasons.update(carving.get("reasons", {}))
        rows.append(
            {
                "index": index,
                "target": ranked,
                "listed": first,
                "witness": witnessed,
                "seconds": round(seconds, 2),
                "candidates": carving.get("candidates", 0),
                "carved": len(carving.get("tests", [])),
            }
        )
    return {"out": str(out), "versions": rows, "reasons": dict(reasons.most_common())}


def report(figures: dict[str, Any]) -> None:
    rows = figures["versions"]
    witnessed = sum(row["witness"] for row in rows)
    seconds = [row["seconds"] for row in rows]
    print(f"{figures['out']}")
    if not rows:
        print("  no version whose top target changed a call's result")
        return
    print(
        f"  witnessed by carving alone: {witnessed}/{len(rows)} ({100 * witnessed / len(rows):.0f} %); seconds per version: "
        f"median {statistics.median(seconds):.1f}, largest {max(seconds):.1f}"
    )
    for row in rows:
        state = "witness" if row["witness"] else row.get("error") or f"no witness ({row['carved']} carved of {row['candidates']})"
        print(f"    version {row['index']:>3}  {row['seconds']:>5.1f} s  {row.get('target', '?')}: {state}")
    for reason, count in figures["reasons"].items():
        print(f"    {count:>5}  {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=1, help="targets carved per version (the top one decides)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    figures = [measure(out, args.top) for out in args.out]
    for found in figures:
        report(found)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
