"""``histeg compute`` on a stretch of a real project's history: targets, time by step, noise.

    python bench/real_history_bench.py REPO [--versions 30] [--timed 20] [--end REV]
                                            [--sources src] [--tests tests] [--work DIR] [--keep] [--json FILE]

1. Time by step: on a fresh output directory, the step commands ``extract``,
   ``build``, ``instrument``, ``analyze`` and ``compute`` run in this order
   over the ``--timed`` newest versions ending at ``--end`` (each reuses what
   the previous one produced), timed one by one; plus the untraced test suite
   of the newest version for reference.
2. ``histeg compute`` over ``--versions`` consecutive first-parent versions
   ending at ``--end`` (reusing step 1's results). A version whose
   ``fileChanges.json`` lists no Python file must get zero testing targets:
   the figures are how many such versions there were, the targets they got
   (goal: 0), and the targets of every other version.
3. Noise: the ``noise`` section of every ``testingTargets.json`` (functions
   that diverge between two runs of one version), with what differed between
   the runs, which says why they are nondeterministic.

REPO is only read: histeg mirrors it into its output directory.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_repos import ROOT, add_common_arguments, run_histeg, scratch_directory, untraced_suite  # noqa: E402

sys.path.insert(0, str(ROOT))

from histeg.compare.divergences import compare_entry_points, load_run  # noqa: E402
from histeg.compare.entry_points import match_entry_points  # noqa: E402
from histeg.records.runs import Runs  # noqa: E402
from histeg.records.steps import StepStates  # noqa: E402

STEPS = ("extract", "build", "instrument", "analyze", "compute")
DETAIL_CHARACTERS = 240


@dataclass
class StepTime:
    step: str
    seconds: float
    code: int


@dataclass
class VersionFigures:
    index: int
    short: str
    message: str
    python_changes: list[str]
    other_changes: int
    targets: int | None
    """None for the first version of the list (nothing to compare with) or a version histeg could not finish."""
    top: list[str]
    test_code: int
    divergences: int
    noise_functions: list[str]
    noise_divergences: int
    outcomes: list[str]
    untraced: str = ""
    reused_from: str | None = None
    """The predecessor whose traces this version took (``runs.json`` ``reusedFrom``): its suite did not run."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall seconds of this version's steps as histeg recorded them (``steps.json``): build, statics, traces (all
    repetitions), one traced run (traces / repetitions), compare (without re-runs), confirm (the re-runs), targets."""

    @property
    def compare_per_run(self) -> float | None:
        """The comparison's cost against one traced run of the version (goal <= 1); none for traces taken from the
        predecessor, which ran no suite."""
        run = None if self.reused_from else self.seconds.get("run")
        return self.seconds["compare"] / run if run and "compare" in self.seconds else None


@dataclass
class NoiseExample:
    index: int
    entry_point: str
    function: str
    kinds: list[str]
    details: str


@dataclass
class HistoryReport:
    versions_range: str
    timed_range: str
    step_times: list[StepTime]
    untraced_seconds: float
    untraced_summary: str
    compute_seconds: float
    compute_code: int
    failed: list[dict[str, Any]]
    versions: list[VersionFigures]
    output: str
    """histeg's output directory (removed at the end unless kept)."""
    noise_examples: list[NoiseExample] = field(default_factory=list)

    def without_python(self) -> list[VersionFigures]:
        return [v for v in self.versions if v.targets is not None and not v.python_changes]

    def with_python(self) -> list[VersionFigures]:
        return [v for v in self.versions if v.targets is not None and v.python_changes]


def _revision_range(end: str, count: int) -> str:
    return f"{end}~{count - 1}..{end}"


def time_steps(repo: str, out: Path, versions: str) -> list[StepTime]:
    """Each step command in order on one output directory; each reuses what the ones before it wrote."""
    times = []
    for step in STEPS:
        run = run_histeg(step, "--repo", repo, "--versions", versions, "--out", str(out), "-q")
        times.append(StepTime(step, run.seconds, run.code))
        if run.code not in (0, 1):
            raise RuntimeError(f"histeg {step} exited with {run.code}: {run.stderr.strip()[-500:]}")
    return times


def _last_line(text: str) -> str:
    """An uncaught exception's last line (histeg stopped without a summary)."""
    lines = text.strip().splitlines()
    return f"histeg stopped: {lines[-1]}" if lines else "histeg stopped without a message"


def _read(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.is_file() else None


def version_figures(out: Path, index: int, sources: Sequence[str], tests: Sequence[str]) -> VersionFigures:
    version = json.loads((out / str(index) / "version.json").read_text())
    changes = json.loads((out / str(index) / "fileChanges.json").read_text())["changes"]
    targets = _read(out / str(index) / "testingTargets.json")
    runs = Runs.read(out / str(index) / Runs.FILE) if (out / str(index) / Runs.FILE).is_file() else None
    code, _, last = untraced_suite(out / str(index) / "snapshot", sources, tests)
    seconds: dict[str, float] = {}
    states = StepStates.read(out / str(index) / StepStates.FILE).steps if (out / str(index) / StepStates.FILE).is_file() else {}
    for name in ("build", "statics", "traces", "targets"):
        if name in states:
            seconds[name] = states[name].seconds
    if "compare" in states:
        split = states["compare"].summary.get("seconds", {})
        seconds["compare"], seconds["confirm"] = split.get("compare", states["compare"].seconds), split.get("confirm", 0.0)
    if "traces" in seconds and runs is not None and runs.repeat:
        seconds["run"] = seconds["traces"] / runs.repeat
    python = [c["newPath"] or c["oldPath"] for c in changes if c["python"]]
    return VersionFigures(
        index=index,
        short=version["shortIdentifier"][:10],
        message=version["msg"].splitlines()[0] if version["msg"] else "",
        python_changes=python,
        other_changes=len(changes) - len(python),
        targets=None if targets is None or version["comparingAgainstIndex"] is None else len(targets["targets"]),
        top=[t["identifier"] for t in targets["targets"][:3]] if targets else [],
        test_code=len(targets["testCode"]) if targets else 0,
        divergences=targets["summary"]["divergences"] if targets else 0,
        noise_functions=targets["noise"]["functions"] if targets else [],
        noise_divergences=targets["noise"]["divergences"] if targets else 0,
        outcomes=sorted({r.outcome for r in runs.runs}) if runs else [],
        untraced=f"exit {code}: {last}",
        reused_from=runs.reused_from if runs else None,
        seconds=seconds,
    )


def noise_examples(out: Path, index: int) -> list[NoiseExample]:
    """What differs between run 1 and run 2 of one version for its noisy functions: the reason they are noise."""
    runs = sorted((out / str(index) / "traces").glob("run-*"), key=lambda p: int(p.name.split("-")[1]))
    targets = _read(out / str(index) / "testingTargets.json")
    if len(runs) < 2 or not targets or not targets["noise"]["functions"]:
        return []
    noisy = set(targets["noise"]["functions"])
    first, second = load_run(runs[0]), load_run(runs[1])
    found = []
    for a, b in match_entry_points(first, second).pairs:
        for call in compare_entry_points(first[a], second[b]):
            if call.function in noisy:
                found.append(NoiseExample(index, b.label or b.root, call.function, call.kinds, json.dumps(call.details)[:DETAIL_CHARACTERS]))
    for key in (*match_entry_points(first, second).only_old, *match_entry_points(first, second).only_new):
        found.append(NoiseExample(index, key.label or key.root, key.root, ["entry point"], "only in one of the two runs"))
    return found


def history_check(repo: str, versions: int = 30, timed: int = 20, end: str = "HEAD", sources: Sequence[str] = ("src",),
                  tests: Sequence[str] = ("tests",), work: Path | None = None, keep: bool = False, log: Any = print) -> HistoryReport:
    with scratch_directory("histeg-history-", work, keep, log) as scratch:
        out = scratch / "out"
        timed_range, versions_range = _revision_range(end, timed), _revision_range(end, versions)
        step_times = time_steps(repo, out, timed_range) if timed else []
        for item in step_times:
            log(f"histeg {item.step:10s} over {timed_range}: {item.seconds:7.1f}s (exit {item.code})")
        run = run_histeg("compute", "--repo", repo, "--versions", versions_range, "--out", str(out), "-q")
        log(f"histeg compute over {versions_range}: {run.seconds:.1f}s (exit {run.code})")
        failed = run.summary["failedVersions"] if run.summary else [{"index": None, "reason": _last_line(run.stderr)}]
        indices = sorted(int(p.parent.name) for p in out.glob("*/version.json"))
        figures = [version_figures(out, index, sources, tests) for index in indices]
        untraced_code, untraced_seconds, untraced_last = untraced_suite(out / str(indices[-1]) / "snapshot", sources, tests)
        examples = [example for index in indices for example in noise_examples(out, index)]
        return HistoryReport(versions_range, timed_range, step_times, untraced_seconds, f"exit {untraced_code}: {untraced_last}",
                             run.seconds, run.code, failed, figures, str(out), examples)


def print_report(report: HistoryReport) -> None:
    print()
    if report.step_times:
        count = report.timed_range
        print(f"time by step over {count} (each step command reuses what the previous one wrote)")
        print(f"{'step':12s} {'seconds':>8s}  exit")
        for item in report.step_times:
            print(f"{item.step:12s} {item.seconds:8.1f}  {item.code}")
        print(f"{'total':12s} {sum(i.seconds for i in report.step_times):8.1f}")
        print(f"untraced test suite of the newest version: {report.untraced_seconds:.2f}s ({report.untraced_summary})")
    print(f"\nhisteg compute over {report.versions_range}: {report.compute_seconds:.1f}s, exit {report.compute_code}, "
          f"failed versions: {report.failed or 'none'}")
    print(f"{'index':>5} {'commit':10s} {'py':>3} {'other':>5} {'targets':>7} {'tests':>5} {'diverg.':>7} {'noise':>5}  {'runs':14s} message / top targets")
    for v in report.versions:
        targets = "-" if v.targets is None else str(v.targets)
        print(f"{v.index:5d} {v.short:10s} {len(v.python_changes):3d} {v.other_changes:5d} {targets:>7} {v.test_code:5d} {v.divergences:7d} "
              f"{v.noise_divergences:5d}  {','.join(v.outcomes):14s} {v.message[:50]}" + (f"  -> {', '.join(v.top)}" if v.top else ""))
    print("\ncost by version, wall seconds as histeg recorded them (one traced run = traces / repetitions):")
    print(f"{'index':>5} {'commit':10s} {'build':>6} {'statics':>7} {'run':>6} {'compare':>7} {'confirm':>7} {'targets':>7} {'compare/run':>11}")
    for v in report.versions:
        t = v.seconds
        ratio = v.compare_per_run
        run = "reused" if v.reused_from else f"{t.get('run', 0):6.1f}"
        print(f"{v.index:5d} {v.short:10s} {t.get('build', 0):6.1f} {t.get('statics', 0):7.1f} {run:>6s} {t.get('compare', 0):7.1f} "
              f"{t.get('confirm', 0):7.1f} {t.get('targets', 0):7.1f} {'-' if ratio is None else f'{ratio:.2f}x':>11}")
    rated = [v for v in report.versions if v.compare_per_run is not None and v.targets is not None]
    if rated:
        worst = max(rated, key=lambda v: v.compare_per_run or 0.0)
        print(f"slowest comparison against its traced run: {worst.index} {worst.short} ({worst.message[:60]}): "
              f"{worst.seconds['compare']:.1f}s against {worst.seconds['run']:.1f}s, {worst.compare_per_run:.2f}x (goal <= 1); "
              f"{sum(1 for v in rated if (v.compare_per_run or 0) <= 1)}/{len(rated)} versions within the goal")
    reused = [v for v in report.versions if v.reused_from]
    print(f"versions that took their predecessor's traces (no test read a file they changed): {len(reused)}"
          + (f", their traces step {sum(v.seconds.get('traces', 0) for v in reused):.2f}s in all" if reused else ""))
    quiet = report.without_python()
    print(f"\nversions without a Python change: {len(quiet)}, testing targets on them: {sum(v.targets or 0 for v in quiet)} (goal 0)")
    for v in quiet:
        if v.targets:
            print(f"  {v.index} {v.short}: {v.targets} target(s): {', '.join(v.top)}")
    changed = report.with_python()
    print(f"versions with a Python change: {len(changed)}, targets per version: {[v.targets for v in changed]}")
    bad = [v for v in report.versions if not v.untraced.startswith("exit 0")]
    print(f"untraced test suite fails at {len(bad)} version(s)" + "".join(f"\n  {v.index} {v.short}: {v.untraced}" for v in bad))
    noisy = Counter(f for v in report.versions for f in v.noise_functions)
    print(f"\nnoise: {sum(v.noise_divergences for v in report.versions)} divergences between the versions set apart as noise; "
          f"noisy functions (versions): {dict(noisy) or 'none'}")
    seen = set()
    for example in report.noise_examples:
        key = (example.entry_point, example.function, tuple(example.kinds))
        if key not in seen:
            seen.add(key)
            print(f"  {example.function} under {example.entry_point} ({', '.join(example.kinds)}): {example.details}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    parser.add_argument("--versions", type=int, default=30, help="consecutive first-parent versions for the targets check")
    parser.add_argument("--timed", type=int, default=20, help="versions for the time by step (0: skip)")
    parser.add_argument("--end", default="HEAD", help="newest version of both ranges (default HEAD)")
    args = parser.parse_args()
    started = time.perf_counter()
    report = history_check(args.repo, args.versions, args.timed, args.end, args.sources or ["src"], args.tests or ["tests"],
                           args.work, args.keep)
    print_report(report)
    print(f"\ntotal time {time.perf_counter() - started:.0f}s")
    if args.json:
        args.json.write_text(json.dumps(asdict(report), indent=1))


if __name__ == "__main__":
    main()
