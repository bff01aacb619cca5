"""Time ``histeg extract`` on a real repository: fresh output directory versus a rerun.

Usage: python bench/extract_bench.py REPO [--versions 100] [--repeat 3]

Prints the median wall time of a fresh extraction of the newest N first-parent
versions, of a rerun on the same output directory (everything reused), and
their ratio, plus the size of the output directory.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--versions", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    fresh, rerun = [], []
    with tempfile.TemporaryDirectory(prefix="histeg-bench-") as scratch:
        out = Path(scratch) / "out"
        command = [sys.executable, "-m", "histeg", "extract", "--repo", args.repo,
                   "--versions", f"HEAD~{args.versions - 1}..HEAD", "--out", str(out), "-q"]
        for _ in range(args.repeat):
            shutil.rmtree(out, ignore_errors=True)
            fresh.append(timed(command))
            rerun.append(timed(command))
        commits = subprocess.run(["git", "-C", args.repo, "rev-list", "--count", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        megabytes = size_of(out) / 2**20
    fresh_median, rerun_median = statistics.median(fresh), statistics.median(rerun)
    print(f"repository: {commits} commits; extracting the newest {args.versions} first-parent versions, {args.repeat} runs")
    print(f"fresh extraction   median {fresh_median:7.2f} s  ({fresh_median / args.versions * 1000:.0f} ms per version)")
    print(f"rerun (all reused) median {rerun_median:7.2f} s  ratio rerun/fresh {rerun_median / fresh_median:.2f}")
    print(f"output directory   {megabytes:.0f} MiB")


if __name__ == "__main__":
    main()
