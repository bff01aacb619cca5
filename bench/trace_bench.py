"""Tracer cost on a real repository's test suite, side by side with coverage.py.

    python bench/trace_bench.py REPO_PATH [--python PY] [--rounds 3] [--tracer c|python|both]
                                [--tests DIR] [--sources DIR] [--pytest-args "..."] [--no-coverage] [--floor]

Runs the suite untraced, traced by each collector (values on, the default)
and under ``coverage run --branch`` (COVERAGE_CORE=sysmon), alternating, one
run of each per round, and prints per kind the median ratio of CPU time
(user + system of the process tree) to the untraced run, the same with the
sealing of the run's traces added (sealed in a process of their own after
each traced run, as histeg does: its CPU and peak memory), the bytes stored per
recorded line event (as stored: recompressed after the run) and the peak memory. With pytest-benchmark installed, benchmarks run once each (``--benchmark-disable``): timed
repetitions would do less work in a slower run. Every run writes a junit XML file:
the per-test outcomes of every run must equal the untraced ones.
``--decompose`` measures the floor as well and the first collector twice more, with values off and with a value budget
of 1, and prints where the tracer's CPU goes, row by row. ``--floor`` adds two kinds: the suite under a monitoring tool whose callbacks do nothing
(``noop_monitor.py``), on the calls histeg's tracer takes (``noop-calls``) and on their lines as well
(``noop-lines``): CPython's own cost of dispatching those events, which no tracer can go below.
The suite runs once before the rounds with bytecode written into the repository's ``__pycache__`` folders, as any
run of a checkout leaves them (``--cold``: not, so every run compiles the project's modules and pytest rewrites its
test modules: on sqlparse 4.1 G of an untraced run's 18.1 G instructions, which flattered every ratio).
One more run, untimed, counts every line event the traced functions execute (the line budget and the line cap
off, values off; ``--no-executed`` skips it): the bytes a run stores per executed line event are the size of
its sealed traces over that count.
Goals: traced CPU <= 1.5x untraced and below coverage.py's ratio; <= 0.1 byte per executed line event.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from histeg.envs.environment import compile_installed  # noqa: E402
from histeg.traces.reader import TraceFile, trace_files  # noqa: E402
from histeg.tracing.activation import TraceConfig, traced_environment  # noqa: E402
from histeg.tracing.tracers import LINE_BUDGET, VALUE_BUDGET  # noqa: E402


def run_suite(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, float, str, int]:
    """Wall time, CPU time (children included), exit code with pytest's summary line, peak RSS (KiB)."""
    for leftover in (".coverage",):
        (cwd / leftover).unlink(missing_ok=True)
    started = time.perf_counter()
    with open(log, "wb") as output:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    cpu = usage.ru_utime + usage.ru_stime
    lines = log.read_text(errors="replace").strip().splitlines()
    summary = lines[-1].strip("= ") if lines else ""
    summary = re.sub(r" in [0-9.]+s.*$", "", summary)
    return elapsed, cpu, f"exit {os.waitstatus_to_exitcode(status)}: {summary}", usage.ru_maxrss


SEAL_ALL = """
import sys, time
from pathlib import Path
from histeg.traces.reader import trace_files
from histeg.traces.seal import seal
started = time.process_time()
for path in trace_files(Path(sys.argv[1])):
    seal(path)
print(time.process_time() - started)
"""


def seal_run(directory: Path) -> tuple[float, int]:
    """Seal a run's traces as histeg does after it, in a process of its own: the CPU seconds of sealing (the
    interpreter's start left out, as histeg seals in its own running process) and the process's peak RSS (KiB)."""
    child = subprocess.Popen([sys.executable, "-c", SEAL_ALL, str(directory)], cwd=Path(__file__).resolve().parent.parent,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) or not output.split():
        raise SystemExit(f"sealing {directory} failed")
    return float(output.split()[-1]), usage.ru_maxrss


def timed_plugins_off(python: str) -> list[str]:
    """pytest-benchmark repeats a benchmark for as long as a time budget allows: a slower (traced) run then does
    fewer rounds and less work. ``--benchmark-disable`` runs each benchmark once, as a plain test, in every kind."""
    found = subprocess.run([python, "-c", "import pytest_benchmark"], capture_output=True, check=False)
    return ["--benchmark-disable"] if found.returncode == 0 else []


def outcomes(junit: Path) -> dict[str, str]:
    """Test id -> passed / failed / error / skipped, from a junit XML file."""
    if not junit.is_file():
        return {}
    result = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                state = child.tag
        result[key] = state
    return result


def compile_environment(python: str, work: Path) -> None:
    """The runs below write no bytecode (as histeg's traced runs): the project's environment gets it first, as one histeg
    makes has it, so that neither side pays for compiling pytest and the dependencies in every run."""
    prefix, base = subprocess.run([python, "-c", "import sys; print(sys.prefix); print(sys.base_prefix)"], capture_output=True, text=True,
                                  check=True).stdout.split()
    if prefix != base:  # a virtual environment: a system interpreter's modules are compiled by its installer
        compile_installed(Path(prefix), work / "compile.log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tests", default="tests", help="tests directory inside the repository (default: tests)")
    parser.add_argument("--sources", default=None, help="sources directory (default: src if present, else .)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the project's own environment")
    parser.add_argument("--values", default="structural", choices=("structural", "off"))
    parser.add_argument("--line-budget", type=int, default=LINE_BUDGET, help="lines for the first N calls of a function per test (0: every call)")
    parser.add_argument("--value-budget", type=int, default=VALUE_BUDGET, help="values for the first N calls of a function per test (0: every call)")
    parser.add_argument("--decompose", action="store_true",
                        help="also measure the dispatch floor (as --floor) and the first collector with values off and with a value "
                             "budget of 1, and print where the tracer's CPU goes")
    parser.add_argument("--tracer", choices=("c", "python", "both"), default="c", help="collector(s) to measure (default: c)")
    parser.add_argument("--no-coverage", action="store_true", help="do not measure coverage.py")
    parser.add_argument("--cold", action="store_true", help="no bytecode written before the rounds (every run compiles)")
    parser.add_argument("--floor", action="store_true", help="also measure a monitoring tool that does nothing (noop_monitor.py)")
    parser.add_argument("--no-executed", action="store_true",
                        help="skip the run that counts every executed line event (line budget and cap off, values off)")
    parser.add_argument("--pytest-args", default="-q -p no:cacheprovider", help="pytest arguments before the tests directory")
    args = parser.parse_args()

    repo = args.repo.resolve()
    sources = args.sources or ("src" if (repo / "src").is_dir() else ".")
    work = Path(tempfile.mkdtemp(prefix="histeg-trace-bench-"))
    compile_environment(args.python, work)
    pytest_args = [*shlex.split(args.pytest_args), *timed_plugins_off(args.python), *shlex.split(args.tests)]
    base = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    base.pop("PYTHONPATH", None)
    if not args.cold:
        warm = {key: value for key, value in base.items() if key != "PYTHONDONTWRITEBYTECODE"}
        print(f"bytecode written: {run_suite([args.python, '-m', 'pytest', *pytest_args], repo, warm, work / 'warm.log')[2]}", file=sys.stderr)
    collectors = ["c", "python"] if args.tracer == "both" else [args.tracer]
    traced = {kind: TracedKind(kind, args.values, args.value_budget) for kind in collectors}
    if args.decompose:  # the first collector again, without values and with values for one call per function and test
        traced[f"{collectors[0]}-values-off"] = TracedKind(collectors[0], "off", args.value_budget)
        traced[f"{collectors[0]}-value-budget-1"] = TracedKind(collectors[0], args.values, 1)
    tracers = list(traced)
    floors = ["noop-calls", "noop-lines"] if args.floor or args.decompose else []
    kinds = ["untraced", *floors, *tracers, *([] if args.no_coverage else ["coverage"])]
    wall: dict[str, list[float]] = {kind: [] for kind in kinds}
    cpu: dict[str, list[float]] = {kind: [] for kind in kinds}
    peaks: dict[str, list[int]] = {kind: [] for kind in kinds}
    seal_cpu: dict[str, list[float]] = {kind: [] for kind in tracers}
    seal_peaks: dict[str, list[int]] = {kind: [] for kind in tracers}
    codes: set[tuple[str, str]] = set()
    differ: list[str] = []
    stored: dict[str, tuple[int, int, int]] = {}
    try:
        for index in range(args.rounds):
            reference: dict[str, str] = {}
            for kind in kinds:  # alternating: one run of each kind per round
                env = dict(base)
                junit = work / f"{kind}-{index}.xml"
                command = [args.python, "-m", "pytest", f"--junitxml={junit}", *pytest_args]
                if kind == "coverage":
                    env["COVERAGE_CORE"] = "sysmon"
                    command = [args.python, "-m", "coverage", "run", "--branch", f"--data-file={work / 'coverage.data'}", *command[1:]]
                elif kind in floors:
                    command = [args.python, str(Path(__file__).resolve().parent / "noop_monitor.py"), kind.removeprefix("noop-"), str(repo),
                               sources, args.tests.split()[0], *command[3:]]
                elif kind != "untraced":
                    trace_dir = work / f"traces-{kind}-{index}"
                    config = TraceConfig(root=str(repo), sources=[sources], tests=[args.tests.split()[0]], trace_dir=str(trace_dir),
                                         values=traced[kind].values, tracer=traced[kind].collector, line_budget=args.line_budget,
                                         value_budget=traced[kind].value_budget)
                    config_path = work / f"config-{kind}-{index}.json"
                    config.write(config_path)
                    env = traced_environment(config_path, base)
                elapsed, seconds, code, rss = run_suite(command, repo, env, work / f"{kind}.log")
                wall[kind].append(elapsed)
                cpu[kind].append(seconds)
                peaks[kind].append(rss)
                codes.add((kind, code))
                found = outcomes(junit)
                if kind == "untraced":
                    reference = found
                elif found != reference:
                    changed = sorted(key for key in reference.keys() | found.keys() if reference.get(key) != found.get(key))
                    differ.append(f"round {index + 1} {kind}: {len(changed)} test(s) differ, e.g. {changed[:3]}: "
                                  f"{[(reference.get(k), found.get(k)) for k in changed[:3]]}")
                if kind in tracers:
                    sealing, seal_peak = seal_run(work / f"traces-{kind}-{index}")
                    seal_cpu[kind].append(sealing)
                    seal_peaks[kind].append(seal_peak)
                if index and kind in tracers:  # keep the last round's traces only
                    shutil.rmtree(work / f"traces-{kind}-{index - 1}", ignore_errors=True)
            print(f"round {index + 1}: " + ", ".join(f"{kind} {cpu[kind][-1]:.2f}s cpu" for kind in kinds), flush=True)
        executed = None
        if not args.no_executed:  # every line event the traced functions make: what a line budget and cap leave undispatched
            trace_dir = work / "traces-executed"
            config = TraceConfig(root=str(repo), sources=[sources], tests=[args.tests.split()[0]], trace_dir=str(trace_dir),
                                 values="off", tracer=collectors[0], line_budget=0, line_cap=0)
            config.write(work / "config-executed.json")
            command = [args.python, "-m", "pytest", f"--junitxml={work / 'executed.xml'}", *pytest_args]
            run_suite(command, repo, traced_environment(work / "config-executed.json", base), work / "executed.log")
            seal_run(trace_dir)
            executed = sum(TraceFile(path).line_events for path in trace_files(trace_dir))
        for kind in tracers:  # read after every run: a child's peak RSS starts at this process's at fork time
            files = trace_files(work / f"traces-{kind}-{args.rounds - 1}")  # sealed after the run, as histeg stores them
            size = sum(path.stat().st_size for path in files)
            events = sum(TraceFile(path).line_events for path in files)
            stored[kind] = (size, events, len(files))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"repository: {repo.name}  sources: {sources}  tests: {args.tests}  python: {args.python}  values: {args.values}  "
          f"line budget: {args.line_budget or 'none'}")
    for kind, outcome in sorted(codes):
        print(f"  {kind:9s} {outcome}")
    print("per-test outcomes: " + ("identical in every run" if not differ else "DIFFER"))
    for line in differ:
        print("  " + line)
    plain = cpu["untraced"]
    print(f"untraced: median {statistics.median(plain):.2f}s cpu, {statistics.median(wall['untraced']):.2f}s wall, "
          f"peak memory {max(peaks['untraced']) / 1024:.1f} MiB")
    for kind in kinds[1:]:
        ratios = [t / p for t, p in zip(cpu[kind], plain)]
        print(f"[{kind}] cpu ratio to untraced: median {statistics.median(ratios):.2f}x (rounds: {', '.join(f'{r:.2f}' for r in ratios)}); "
              f"wall median {statistics.median(wall[kind]):.2f}s; peak memory {max(peaks[kind]) / 1024:.1f} MiB")
        if kind in tracers:
            with_seal = [(t + v) / p for t, v, p in zip(cpu[kind], seal_cpu[kind], plain)]
            shares = [v / t for v, t in zip(seal_cpu[kind], cpu[kind])]
            print(f"  sealing: median {statistics.median(seal_cpu[kind]):.2f}s cpu = {statistics.median(shares):.1%} of the traced run "
                  f"(goal <= 10%), peak memory {max(seal_peaks[kind]) / 1024:.1f} MiB (goal <= 100); traced + sealing / untraced: "
                  f"median {statistics.median(with_seal):.2f}x (rounds: {', '.join(f'{r:.2f}' for r in with_seal)})")
        if kind in stored:
            size, events, count = stored[kind]
            print(f"  line events recorded: {events:,} in {count} trace files, {size:,} bytes stored; "
                  f"bytes per recorded line event: {size / max(events, 1):.3f}")
            if executed:
                print(f"  line events executed by the traced functions (one run, line budget and cap off): {executed:,}; "
                      f"bytes stored per executed line event: {size / executed:.3f} (goal <= 0.1)")
    if "coverage" in kinds:
        for kind in tracers:
            ratios = [t / c for t, c in zip(cpu[kind], cpu["coverage"])]
            sealed = [(t + v) / c for t, v, c in zip(cpu[kind], seal_cpu[kind], cpu["coverage"])]
            print(f"{kind} tracer / coverage.py cpu: median {statistics.median(ratios):.2f}x, sealing included "
                  f"{statistics.median(sealed):.2f}x  goal < 1, and traced <= 1.5x untraced")
    for kind in collectors if floors else []:
        over = {floor: statistics.median(t / f for t, f in zip(cpu[kind], cpu[floor])) for floor in floors}
        print(f"{kind} tracer / dispatch floor cpu: " + ", ".join(f"{ratio:.2f}x {floor}" for floor, ratio in over.items())
              + " (what the tracer and its line budget add to CPython's dispatch of its events)")
    if args.decompose:
        print_decomposition(collectors[0], cpu, seal_cpu)


@dataclass(frozen=True)
class TracedKind:
    """One traced kind of run: which collector, and what it records of values."""

    collector: str
    values: str
    value_budget: int


def print_decomposition(collector: str, cpu: dict[str, list[float]], seal_cpu: dict[str, list[float]]) -> None:
    """Where one collector's CPU goes, as medians of per-round ratios to the untraced run: CPython's dispatch of the
    calls, of every line as well, the tracer without values (calls, lines within their budget, the stream), with values
    for one call per function and test, with every value it records, and its sealing. Each step is measured, not
    derived: a row's share is its median minus the row before it."""
    plain = cpu["untraced"]

    def ratio(kind: str, sealing: bool = False) -> float:
        return statistics.median((t + (s if sealing else 0.0)) / p for t, s, p in zip(cpu[kind], seal_cpu.get(kind, cpu[kind]), plain))

    rows = [
        ("CPython's dispatch of the tracer's call events (noop-calls)", ratio("noop-calls")),
        ("and of every line event of those functions (noop-lines)", ratio("noop-lines")),
        (f"{collector} tracer, values off", ratio(f"{collector}-values-off")),
        (f"{collector} tracer, values for one call per function and test", ratio(f"{collector}-value-budget-1")),
        (f"{collector} tracer, as histeg runs it", ratio(collector)),
        (f"{collector} tracer and its sealing", ratio(collector, sealing=True)),
    ]
    print(f"where the {collector} tracer's cpu goes (medians of ratios to untraced; goal: the last row <= 1.5x):")
    before = 1.0
    for label, value in rows:
        print(f"  {value:5.2f}x  ({value - before:+.2f})  {label}")
        before = value


if __name__ == "__main__":
    main()
