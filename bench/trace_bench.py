"""Tracer overhead on a real repository's test suite.

    python bench/trace_bench.py REPO_PATH [--pairs 3] [--tracer c|python|both] [--tests DIR] [--sources DIR] [--only PATH]

Runs the suite untraced and traced by each collector, alternating, ``--pairs``
rounds, and prints per collector the median time ratio traced/untraced, the
bytes stored per recorded line event and the peak memory (ru_maxrss of the
child), and the time ratio of the C collector to the Python one.
Goals: ratio <= 5, <= 1 byte per line event, traced peak <= untraced + 300 MiB.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from histeg.traces import read_trace, trace_files  # noqa: E402
from histeg.tracing.activation import TraceConfig, traced_environment  # noqa: E402


def run_suite(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, str, int]:
    """Wall time, exit code with pytest's summary line, and peak RSS (KiB) of one run of the suite."""
    started = time.perf_counter()
    with open(log, "wb") as output:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    lines = log.read_text(errors="replace").strip().splitlines()
    summary = lines[-1].strip("= ") if lines else ""
    summary = re.sub(r" in [0-9.]+s.*$", "", summary)  # the duration differs, the counts must not
    return elapsed, f"exit {os.waitstatus_to_exitcode(status)}: {summary}", usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--tests", default="tests", help="tests directory inside the repository (default: tests)")
    parser.add_argument("--sources", default=None, help="sources directory (default: src if present, else .)")
    parser.add_argument("--only", default=None, help="what pytest runs (default: the tests directory), e.g. tests/test_more.py")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--no-values", action="store_true", help="trace without parameter/return values")
    parser.add_argument("--tracer", choices=("c", "python", "both"), default="both", help="collector(s) to measure (default: both)")
    parser.add_argument("--pytest-args", default="-q -p no:cacheprovider", help="extra pytest arguments")
    args = parser.parse_args()

    repo = args.repo.resolve()
    sources = args.sources or ("src" if (repo / "src").is_dir() else ".")
    work = Path(tempfile.mkdtemp(prefix="histeg-trace-bench-"))
    command = [args.python, "-m", "pytest", *args.pytest_args.split(), args.only or args.tests]
    base = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    tracers = ["c", "python"] if args.tracer == "both" else [args.tracer]
    times: dict[str, list[float]] = {kind: [] for kind in ("untraced", *tracers)}
    peaks: dict[str, list[int]] = {kind: [] for kind in times}
    codes: set[tuple[str, str]] = set()
    stored: dict[str, tuple[int, int, int]] = {}
    try:
        for pair in range(args.pairs):
            for kind in times:  # alternating: one run of each kind per round
                env = base
                trace_dir = work / f"traces-{kind}-{pair}"
                if kind != "untraced":
                    config = TraceConfig(
                        root=str(repo), sources=[sources], tests=[args.tests], trace_dir=str(trace_dir),
                        capture_values=not args.no_values, tracer=kind,
                    )
                    config_path = work / f"config-{kind}-{pair}.json"
                    config.write(config_path)
                    env = traced_environment(config_path, base)
                elapsed, code, rss = run_suite(command, repo, env, work / f"{kind}.log")
                times[kind].append(elapsed)
                peaks[kind].append(rss)
                codes.add((kind, code))
                if pair:  # keep the last round's traces only
                    shutil.rmtree(work / f"traces-{kind}-{pair - 1}", ignore_errors=True)
            print(f"round {pair + 1}: " + ", ".join(f"{kind} {times[kind][-1]:.2f}s" for kind in times), flush=True)
        # read after every run: a child's peak RSS (ru_maxrss) starts at this process's at fork time
        for kind in tracers:
            files = trace_files(work / f"traces-{kind}-{args.pairs - 1}")
            size = sum(path.stat().st_size for path in files)
            events = sum(read_trace(path, build=False).line_events for path in files)
            stored[kind] = (size, events, len(files))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"repository: {repo.name}  sources: {sources}  tests: {args.tests}  ran: {args.only or args.tests}  python: {args.python}")
    for kind, outcome in sorted(codes):
        print(f"{kind:9s} {outcome}")
    same = len({outcome for _, outcome in codes}) == 1
    print("traced and untraced runs " + ("ended alike" if same else "DIFFER"))
    plain = times["untraced"]
    print(f"untraced median {statistics.median(plain):.2f}s, peak memory {max(peaks['untraced']) / 1024:.1f} MiB")
    for kind in tracers:
        ratios = [t / p for t, p in zip(times[kind], plain)]
        size, events, count = stored[kind]
        print(f"[{kind} tracer{', no values' if args.no_values else ''}]")
        print(f"  traced median {statistics.median(times[kind]):.2f}s; time ratio traced/untraced: median {statistics.median(ratios):.2f}x "
              f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})  goal <= 5x")
        print(f"  line events recorded: {events:,} in {count} trace files, {size:,} bytes stored; bytes per line event: {size / max(events, 1):.3f}  goal <= 1")
        print(f"  peak memory traced {max(peaks[kind]) / 1024:.1f} MiB, difference {(max(peaks[kind]) - max(peaks['untraced'])) / 1024:.1f} MiB  goal <= 300 MiB")
    if len(tracers) == 2:
        ratios = [c / py for c, py in zip(times["c"], times["python"])]
        print(f"C tracer / Python tracer time: median {statistics.median(ratios):.2f}x (rounds: {', '.join(f'{r:.2f}' for r in ratios)})")

if __name__ == "__main__":
    main()
