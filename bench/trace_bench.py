"""Tracer overhead on a real repository's test suite.

    python bench/trace_bench.py REPO_PATH [--pairs 3] [--tests DIR] [--sources DIR] [--only PATH]

Runs the suite untraced and traced, alternating, ``--pairs`` times, and prints
the median time ratio traced/untraced, the bytes stored per recorded line
event, and the peak memory (ru_maxrss of the child) of both kinds of run.
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
    parser.add_argument("--pytest-args", default="-q -p no:cacheprovider", help="extra pytest arguments")
    args = parser.parse_args()

    repo = args.repo.resolve()
    sources = args.sources or ("src" if (repo / "src").is_dir() else ".")
    work = Path(tempfile.mkdtemp(prefix="histeg-trace-bench-"))
    command = [args.python, "-m", "pytest", *args.pytest_args.split(), args.only or args.tests]
    base = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    plain_times: list[float] = []
    traced_times: list[float] = []
    plain_rss: list[int] = []
    traced_rss: list[int] = []
    codes: set[tuple[str, str]] = set()
    try:
        last_dir = work
        for pair in range(args.pairs):
            elapsed, code, rss = run_suite(command, repo, base, work / "untraced.log")
            plain_times.append(elapsed)
            plain_rss.append(rss)
            codes.add(("untraced", code))
            last_dir = work / f"traces-{pair}"
            config = TraceConfig(root=str(repo), sources=[sources], tests=[args.tests], trace_dir=str(last_dir), capture_values=not args.no_values)
            config_path = work / f"config-{pair}.json"
            config.write(config_path)
            elapsed, code, rss = run_suite(command, repo, traced_environment(config_path, base), work / "traced.log")
            traced_times.append(elapsed)
            traced_rss.append(rss)
            codes.add(("traced", code))
            print(f"pair {pair + 1}: untraced {plain_times[-1]:.2f}s, traced {traced_times[-1]:.2f}s", flush=True)
        files = trace_files(last_dir)
        stored = sum(path.stat().st_size for path in files)
        events = sum(read_trace(path, build=False).line_events for path in files)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    ratios = [t / p for t, p in zip(traced_times, plain_times)]
    print(f"repository: {repo.name}  sources: {sources}  tests: {args.tests}  ran: {args.only or args.tests}  python: {args.python}")
    for kind, outcome in sorted(codes):
        print(f"{kind:9s} {outcome}")
    same = len({outcome for _, outcome in codes}) == 1
    print("traced and untraced runs " + ("ended alike" if same else "DIFFER"))
    print(f"untraced median {statistics.median(plain_times):.2f}s, traced median {statistics.median(traced_times):.2f}s")
    print(f"time ratio traced/untraced: median {statistics.median(ratios):.2f}x (pairs: {', '.join(f'{r:.2f}' for r in ratios)})  goal <= 5x")
    print(f"line events recorded: {events:,} in {len(files)} trace files, {stored:,} bytes stored")
    print(f"bytes per line event: {stored / max(events, 1):.3f}  goal <= 1")
    print(f"peak memory: untraced {max(plain_rss) / 1024:.1f} MiB, traced {max(traced_rss) / 1024:.1f} MiB, difference {(max(traced_rss) - max(plain_rss)) / 1024:.1f} MiB  goal <= 300 MiB")


if __name__ == "__main__":
    main()
