"""``-j 2`` against ``-j 1`` on a real project: wall time, peak memory, and whether the results are the same bytes.

    python bench/parallel_bench.py REPO [--versions 12] [--jobs 2] [--work DIR] [--keep]

The repository is only read: a clone is made in a scratch folder. First the
environments of the last N versions are made (``histeg build`` into a
throw-away output folder, with a scratch ``--environments``), so that what is
measured is the rest of ``histeg compute --last N``: snapshots, static facts,
syntax changes, traced suites, comparisons with their re-runs, ranking (each
version's build then only installs the project into its folder). Then
``compute --last N`` runs with ``-j 1`` and with ``-j JOBS``, each into a
fresh output folder. Printed: wall seconds of each, their ratio, the peak
resident memory of the largest process of each run (``getrusage`` of the
children of a wrapper process, so the two runs are measured apart), and
whether every version's ``testingTargets.json`` is byte-identical. Not part
of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_repos import ROOT, clone, scratch_directory  # noqa: E402

MEASURED = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
sys.stderr.write(done.stderr)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""
"""Run histeg as the only child of a fresh process: its RUSAGE_CHILDREN is that run's alone."""


def measured_run(args: list[str]) -> tuple[int, float, int, str]:
    """Exit code, wall seconds, peak RSS (KiB) of the largest process, and stderr of ``histeg ARGS``."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", MEASURED, sys.executable, "-m", "histeg", *args], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    seconds = time.perf_counter() - started
    code, peak = (int(word) for word in done.stdout.split()[-2:])
    return code, seconds, peak, done.stderr


def targets(out: Path) -> dict[str, bytes]:
    return {path.parent.name: path.read_bytes() for path in sorted(out.glob("*/testingTargets.json"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--versions", type=int, default=12, help="the last N first-parent versions")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    options = parser.parse_args()
    with scratch_directory("histeg-parallel-", options.work, options.keep, print) as scratch:
        project = clone(options.repo, scratch / "clone")
        environments = scratch / "environments"
        common = ["--repo", str(project), "--last", str(options.versions), "--environments", str(environments), "-q"]
        code, seconds, _, stderr = measured_run(["build", *common, "--out", str(scratch / "warm")])
        print(f"environments made in {seconds:.1f} s (exit {code})")
        rows = {}
        for jobs in (1, options.jobs):
            out = scratch / f"out-j{jobs}"
            code, seconds, peak, stderr = measured_run(["compute", *common, "--out", str(out), "-j", str(jobs), "--json"])
            if code not in (0, 1):
                print(f"-j {jobs} failed with exit {code}:\n{stderr}", file=sys.stderr)
                return 1
            rows[jobs] = (seconds, peak, targets(out))
            print(f"-j {jobs}: {seconds:8.1f} s wall, peak RSS {peak / 1024:7.1f} MiB (largest process), "
                  f"{len(rows[jobs][2])} testingTargets.json, exit {code}")
        (serial, _, serial_targets), (parallel, _, parallel_targets) = rows[1], rows[options.jobs]
        differing = sorted(set(serial_targets) ^ set(parallel_targets) |
                           {name for name in set(serial_targets) & set(parallel_targets) if serial_targets[name] != parallel_targets[name]},
                           key=int)
        print(f"ratio -j {options.jobs} / -j 1: {parallel / serial:.2f}")
        print("testingTargets.json byte-identical: " + ("yes" if not differing else f"no, versions {json.dumps(differing)}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
