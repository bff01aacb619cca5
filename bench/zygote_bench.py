"""What a targeted re-run costs started fresh and forked from a zygote, side by side on a real project.

    python bench/zygote_bench.py REPO TEST_NODE [--python PY] [--runs 4] [--rounds 3] [--sources DIR]

Each round makes ``--runs`` traced re-runs of one test (``python -m pytest -q -p no:cacheprovider --tb=no NODE``,
the tracer on, as histeg's re-runs) as fresh processes, then the same number forked from one zygote started for
them (``histeg.processes.zygote``: its start and pytest's import are counted), alternating. Printed: per kind the
median CPU of the whole process tree per round and per run, their ratio, the peak memory of the largest process,
and whether every run passed alike. The repository is only read (each run has a copy of its own, as histeg's have).
Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from histeg.processes.process import run_process
from histeg.processes.zygote import Zygote
from histeg.tracing.activation import TraceConfig, traced_environment


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("test", help="a pytest node id, relative to the repository")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the project's own environment")
    parser.add_argument("--runs", type=int, default=4, help="re-runs per kind and round (histeg makes 2 per version and comparison)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sources", default=None, help="sources directory (default: src if present, else .)")
    args = parser.parse_args()
    repo = args.repo.resolve()
    sources = args.sources or ("src" if (repo / "src").is_dir() else ".")
    work = Path(tempfile.mkdtemp(prefix="histeg-zygote-bench-"))
    argv = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no", args.test]
    cpu: dict[str, list[float]] = {"fresh": [], "forked": []}
    outcomes: set[tuple[str, int | None]] = set()
    try:
        copies = []
        for number in range(args.runs):  # each run in a copy of its own, with its sources first on PYTHONPATH
            copy = work / f"copy-{number}"
            shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git", ".venv", ".tox", "__pycache__"))
            copies.append(copy)
        for index in range(args.rounds):
            for kind in ("fresh", "forked"):
                before, started = children_cpu(), time.monotonic()
                zygote = None
                for number, copy in enumerate(copies):
                    config = TraceConfig(
                        root=str(copy),
                        sources=[sources],
                        tests=[args.test.split("/")[0]],
                        trace_dir=str(work / f"traces-{kind}-{index}-{number}"),
                    )
                    config.write(work / f"config-{kind}-{index}-{number}.json")
                    base = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "HISTEG_"))}
                    base["PYTHONDONTWRITEBYTECODE"] = "1"
                    base["PYTHONPATH"] = str((copy / sources).resolve())
                    env = traced_environment(work / f"config-{kind}-{index}-{number}.json", base)
                    if kind == "forked" and zygote is None:
                        shared = os.pathsep.join(part for part in env["PYTHONPATH"].split(os.pathsep) if not part.startswith(str(work)))
                        zygote = Zygote(args.python, {**env, "PYTHONPATH": shared}, work, work / "zygote.log")
                        if zygote.why_not:
                            sys.exit(f"the zygote is unusable: {zygote.why_not}")
                    result = run_process(argv, copy, env, 300, **({"start": zygote.start} if zygote else {}))
                    outcomes.add((kind, result.exit_code))
                if zygote is not None:
                    zygote.close()
                cpu[kind].append(children_cpu() - before)
                print(f"round {index + 1} {kind}: {cpu[kind][-1]:.2f}s cpu, {time.monotonic() - started:.2f}s wall", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"repository: {repo.name}  test: {args.test}  python: {args.python}  runs per round: {args.runs}")
    for kind, values in cpu.items():
        print(
            f"[{kind}] median {statistics.median(values):.2f}s cpu per round, {statistics.median(values) / args.runs:.3f}s per re-run "
            f"(rounds: {', '.join(f'{v:.2f}' for v in values)})"
        )
    ratios = [forked / fresh for forked, fresh in zip(cpu["forked"], cpu["fresh"], strict=True)]
    print(
        f"forked / fresh cpu: median {statistics.median(ratios):.2f}x (rounds: {', '.join(f'{r:.2f}' for r in ratios)}); "
        f"peak memory of the largest process {peak:.1f} MiB"
    )
    codes = {code for _, code in outcomes}
    print(
        "exit codes: "
        + ("the same in every run" if len(codes) == 1 else f"DIFFER: {sorted(outcomes, key=str)}")
        + f" ({sorted(codes, key=str)})"
    )


if __name__ == "__main__":
    main()
