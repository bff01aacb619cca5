"""The second round of re-runs on a real history, side by side with a histeg that has none.

    python bench/second_round_bench.py REPO [--last 8] [--reference CHECKOUT] [--work DIR]

Runs ``histeg compute --last N`` on REPO with this checkout and, given ``--reference``
(another histeg checkout whose C extensions are built in place), with that one too,
each into its own output folder. Per version it prints: the entry points re-run in
round 1 and in round 2, the seconds spent confirming, the targets, and the targets
charged with nothing but an unexplained divergence. Round 2 is meant to cost nothing
where every surviving divergence has changed code on its chain, and to remove targets
only where the divergence was noise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def compute(checkout: Path, repo: Path, out: Path, last: int) -> tuple[dict[str, Any], float]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "histeg", "compute", "--repo", str(repo), "--last", str(last), "--out", str(out), "--json"],
        cwd=checkout, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode not in (0, 3):
        raise SystemExit(f"histeg in {checkout} failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout), time.perf_counter() - started


def per_version(out: Path, summary: dict[str, Any]) -> dict[int, dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for item in summary["steps"].get("compare", []):
        if "skipped" in item or "divergences" not in item:
            continue
        index = item["index"]
        confirmation = json.loads((out / str(index) / "traceDivergences.json").read_text())["confirmation"]
        targets = json.loads((out / str(index) / "testingTargets.json").read_text())["targets"]
        rows[index] = {
            "round1": confirmation["entryPoints"],
            "round2": confirmation.get("unexplainedEntryPoints", 0),
            "confirm_s": item["seconds"]["confirm"],
            "targets": len(targets),
            "unmapped": sum(1 for target in targets if not target.get("syntaxChanges")),
        }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--last", type=int, default=8)
    parser.add_argument("--reference", type=Path, help="another histeg checkout to run side by side")
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="second-round-"))
    sides = {"this": ROOT} | ({"reference": args.reference.resolve()} if args.reference else {})
    found = {}
    for name, checkout in sides.items():
        out = work / name
        summary, seconds = compute(checkout, args.repo.resolve(), out, args.last)
        found[name] = (per_version(out, summary), seconds)
        print(f"{name}: {seconds:.1f} s wall for {args.last} versions")
    print(f"{'version':>7} " + " ".join(f"{name + ':' + column:>22}" for name in found for column in ("r1/r2", "confirm s", "targets/unmapped")))
    for index in sorted(found["this"][0]):
        cells = []
        for name in found:
            row = found[name][0].get(index)
            if row is None:
                cells += ["-", "-", "-"]
                continue
            cells += [f"{row['round1']}/{row['round2']}", f"{row['confirm_s']:.1f}", f"{row['targets']}/{row['unmapped']}"]
        print(f"{index:>7} " + " ".join(f"{cell:>22}" for cell in cells))


if __name__ == "__main__":
    main()
