"""``-j 2`` against ``-j 1`` on a real project: wall time, peak memory, and whether the results are the same bytes.

    python bench/parallel_bench.py REPO [--versions 12] [--jobs 2] [--rounds 1] [--scheduler] [--work DIR] [--keep]

The repository is only read: a clone is made in a scratch folder. First the
environments of the last N versions are made (``histeg build`` into a
throw-away output folder, with a scratch ``--environments``), so that what is
measured is the rest of ``histeg compute --last N``: snapshots, static facts,
syntax changes, traced suites, comparisons with their re-runs, ranking (each
version's build then only installs the project into its folder). Then
``compute --last N`` runs with ``-j 1`` and with ``-j JOBS``, each into a
fresh output folder (``--rounds N``: N pairs, alternating, and the median of
the pairs' ratios). Printed: wall seconds of each, their ratio, the peak
resident memory of the largest process of each run (``getrusage`` of the
children of a wrapper process, so the two runs are measured apart), and
whether every version's ``testingTargets.json`` is byte-identical, and if
not, whether it is once the noise counts are set apart (clock-reading tests
give other counts on every run). ``--scheduler`` adds a third run on a Dask
scheduler and JOBS workers started apart, as the README shows (``dask
scheduler``, ``dask worker ADDRESS --nthreads 1``), each worker in its own
working directory with its own ``TMPDIR``. It also measures what the machine gives two processes at once (a
CPU-bound loop alone and side by side), and per run what the parallel run's
own CPU allows at best. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_repos import ROOT, clone, scratch_directory  # noqa: E402

MEASURED = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
sys.stderr.write(done.stderr)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(done.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""
"""Run histeg as the only child of a fresh process: its RUSAGE_CHILDREN is that run's alone."""


def measured_run(args: list[str]) -> tuple[int, float, float, int, str]:
    """Exit code, wall seconds, CPU seconds of the process tree, peak RSS (KiB) of the largest process, and stderr of
    ``histeg ARGS``."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", MEASURED, sys.executable, "-m", "histeg", *args], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    seconds = time.perf_counter() - started
    code, cpu, peak = done.stdout.split()[-3:]
    return int(code), seconds, float(cpu), int(peak), done.stderr


def targets(out: Path) -> dict[str, bytes]:
    return {path.parent.name: path.read_bytes() for path in sorted(out.glob("*/testingTargets.json"))}


def without_noise(payload: bytes) -> object:
    """A targets file with every noise count and list set apart: what must not depend on how versions were spread."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {key: strip(item) for key, item in value.items() if "noise" not in key.lower()}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    return strip(json.loads(payload))


def differing(serial: dict[str, bytes], other: dict[str, bytes], same: object = None) -> list[str]:
    """Versions whose files differ (compared through ``same`` when given)."""
    compare = same or (lambda payload: payload)
    names = set(serial) | set(other)
    return sorted((n for n in names if n not in serial or n not in other or compare(serial[n]) != compare(other[n])), key=int)


@contextlib.contextmanager
def cluster(scratch: Path, workers: int) -> Iterator[str]:
    """A scheduler and ``workers`` single-threaded workers, each its own process tree with its own folder and TMPDIR."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    dask = str(Path(sys.executable).parent / "dask")
    processes = []

    def start(name: str, *args: str) -> None:
        folder = scratch / name
        (folder / "tmp").mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "TMPDIR": str(folder / "tmp")}
        with open(folder / "log", "wb") as log:  # kept with --keep
            processes.append(subprocess.Popen([dask, *args], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT))

    start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0")
    time.sleep(3)
    for number in range(1, workers + 1):
        start(f"worker-{number}", "worker", address, "--nthreads", "1", "--local-directory", str(scratch / f"worker-{number}"))
    try:
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=60)


SPIN = """
import time
started = time.process_time()
total, table = 0, {}
for number in range(4_000_000):
    total += number * number % 7
    table[number % 1000] = total
print(time.process_time() - started)
"""
"""A fixed amount of pure-Python work: its CPU time alone and side by side says what the machine gives two processes."""


def said(name: str, out: Path, code: int, stderr: str) -> None:
    """Keeps a run's stderr beside its output folder (kept with --keep) and prints its warnings when it did not exit 0:
    exit 1 is also what a version that failed gives, and its results then differ for that reason alone."""
    out.with_name(out.name + ".stderr").write_text(stderr)
    if code:
        for line in stderr.splitlines():
            if "warning" in line or "error" in line:
                print(f"{name}: {line}")


def side_by_side_cost(jobs: int, rounds: int = 3) -> tuple[float, float]:
    """Median CPU seconds of SPIN alone and, over the processes, of JOBS copies at once. On a shared virtual machine two
    busy cores can be slower than one (siblings of one physical core, an oversubscribed host): then CPU-bound work
    costs more CPU side by side, and ``-j JOBS`` cannot be JOBS times faster whatever histeg does."""
    alone: list[float] = []
    together: list[float] = []
    for _ in range(rounds):
        alone.append(float(subprocess.run([sys.executable, "-c", SPIN], capture_output=True, text=True, check=True).stdout))
        children = [subprocess.Popen([sys.executable, "-c", SPIN], stdout=subprocess.PIPE, text=True) for _ in range(jobs)]
        together += [float(child.communicate()[0]) for child in children]
    return statistics.median(alone), statistics.median(together)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--versions", type=int, default=12, help="the last N first-parent versions")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--scheduler", action="store_true", help="also run on a scheduler and JOBS workers started apart")
    parser.add_argument("--rounds", type=int, default=1,
                        help="pairs of -j 1 and -j JOBS runs, alternating (each into a fresh folder): the speed-up is the median "
                             "of the pairs' own ratios, which a machine whose speed drifts between two runs moves less")
    options = parser.parse_args()
    with scratch_directory("histeg-parallel-", options.work, options.keep, print) as scratch:
        project = clone(options.repo, scratch / "clone")
        environments = scratch / "environments"
        common = ["--repo", str(project), "--last", str(options.versions), "--environments", str(environments), "-q"]
        code, seconds, _, _, stderr = measured_run(["build", *common, "--out", str(scratch / "warm")])
        print(f"environments made in {seconds:.1f} s (exit {code})")
        rows: dict[str, tuple[float, int, dict[str, bytes]]] = {}
        cpus: dict[str, float] = {}
        parallel = f"-j {options.jobs}"
        runs: list[tuple[str, list[str]]] = [("-j 1", ["-j", "1"]), (parallel, ["-j", str(options.jobs)])]
        pairs: list[tuple[float, float]] = []
        serial_seconds_now = 0.0
        for round_number in range(options.rounds):
            for name, flags in runs:
                out = scratch / f"out-{round_number}-{len(pairs)}-{name.replace(' ', '')}"
                code, seconds, cpu, peak, stderr = measured_run(["compute", *common, "--out", str(out), *flags, "--json"])
                if code not in (0, 1):
                    print(f"{name} failed with exit {code}:\n{stderr}", file=sys.stderr)
                    return 1
                said(name, out, code, stderr)
                found = targets(out)
                if name in rows and differing(rows[name][2], found, without_noise):
                    print(f"{name}: round {round_number + 1} found other targets than round 1, the noise set apart", file=sys.stderr)
                rows.setdefault(name, (seconds, peak, found))
                cpus[name] = cpu
                print(f"round {round_number + 1}, {name}: {seconds:8.1f} s wall, {cpu:8.1f} s CPU ({cpu / seconds:.2f} cores busy on "
                      f"average), peak RSS {peak / 1024:7.1f} MiB (largest process), {len(found)} testingTargets.json, exit {code}")
                if name == parallel:
                    print(f"{name}: the same work took {cpu / cpus['-j 1'] - 1:+.0%} CPU; with {options.jobs} cores busy all along it "
                          f"would take {cpu / options.jobs:.1f} s: at most {serial_seconds_now / (cpu / options.jobs):.2f}x faster than -j 1")
                    pairs.append((serial_seconds_now, seconds))
                else:
                    serial_seconds_now = seconds
        if options.rounds > 1:
            ratios = [serial / other for serial, other in pairs]
            print(f"{parallel}: speed-up over -j 1, median of {len(pairs)} alternating pairs {statistics.median(ratios):.2f}x "
                  f"(pairs: {', '.join(f'{r:.2f}' for r in ratios)})")
        if options.scheduler:
            name = f"scheduler and {options.jobs} workers started apart"
            with cluster(scratch / "cluster", options.jobs) as address:
                out = scratch / "out-scheduler"
                code, seconds, _, peak, stderr = measured_run(["compute", *common, "--out", str(out), "--scheduler", address, "--json"])
            if code not in (0, 1):
                print(f"{name} failed with exit {code}:\n{stderr}", file=sys.stderr)
                return 1
            said(name, out, code, stderr)
            rows[name] = (seconds, peak, targets(out))
            print(f"{name}: {seconds:8.1f} s wall (the workers' memory is theirs), exit {code}")
        alone, together = side_by_side_cost(options.jobs)
        print(f"this machine: a CPU-bound process takes {alone:.2f} s of CPU alone, {together:.2f} s with {options.jobs - 1} "
              f"other(s) beside it ({together / alone:.2f}x): at best, -j {options.jobs} is {options.jobs * alone / together:.2f}x faster "
              f"than one process kept busy")
        serial_seconds, _, serial_targets = rows["-j 1"]
        for name, (seconds, _, found) in rows.items():
            if name == "-j 1":
                continue
            exact, apart = differing(serial_targets, found), differing(serial_targets, found, without_noise)
            print(f"{name}: speed-up over -j 1 {serial_seconds / seconds:.2f}x; testingTargets.json byte-identical: "
                  + ("yes" if not exact else f"no ({len(exact)} versions)")
                  + "; identical with the noise set apart: " + ("yes" if not apart else f"no, versions {json.dumps(apart)}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
