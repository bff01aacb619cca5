"""What a nightly job pays on a real project: a first run, an unchanged rerun, and one new commit.

    python bench/rerun_bench.py REPO [REPO ...] [--last 3] [--work DIR]

For each repository (only read: a clone is made in a scratch folder): ``histeg
compute --last N`` into a fresh output folder; the same again (nothing
changed); then one new commit on the clone (a no-op edit of the first
changed Python file's last line: a comment) and ``compute --last 2``. Prints,
side by side, the wall times, the rerun's share of the first run, how many
steps ran or were reused, and how many files under the output folder each
rerun rewrote (by modification time). Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_repos import HistegRun, clone, git, run_histeg, scratch_directory  # noqa: E402


def modification_times(out: Path) -> dict[str, int]:
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file() and p.name != ".histeg.lock"}


def rewritten(before: dict[str, int], after: dict[str, int]) -> int:
    return sum(1 for name, mtime in after.items() if before.get(name) != mtime)


def step_counts(run: HistegRun) -> str:
    if run.summary is None:
        return "no summary"
    states = [step["status"] for version in run.summary["versions"] for step in version["steps"].values()]
    return f"{states.count('ran')} ran, {states.count('reused')} reused"


def seed_commit(clone_dir: Path) -> None:
    """A comment appended to a tracked Python file of the sources: a commit that changes no behaviour."""
    files = [line for line in git(clone_dir, "ls-files", "*.py").splitlines() if not line.startswith(("test", "docs"))]
    target = clone_dir / files[0]
    target.write_text(target.read_text(encoding="utf-8") + "\n# nightly benchmark: a comment\n", encoding="utf-8")
    git(clone_dir, "commit", "-q", "-am", "a comment", clock=1)


def measure(repo: str, last: int, work: Path | None, keep: bool) -> dict[str, float]:
    with scratch_directory("histeg-rerun-", work, keep, print) as scratch:
        project = clone(repo, scratch / "clone")
        out = scratch / "out"
        base = ("compute", "--repo", str(project), "--out", str(out), "-q")
        first = run_histeg(*base, "--last", str(last))
        times = modification_times(out)
        again = run_histeg(*base, "--last", str(last))
        unchanged_rewrites = rewritten(times, modification_times(out))
        seed_commit(project)
        times = modification_times(out)
        new = run_histeg(*base, "--last", "2")
        name = Path(repo.rstrip("/")).name
        print(f"{name:18} first {first.seconds:7.1f} s (exit {first.code}, {step_counts(first)})")
        print(f"{'':18} unchanged rerun {again.seconds:5.2f} s = {again.seconds / first.seconds:6.1%} of the first "
              f"({step_counts(again)}; {unchanged_rewrites} files rewritten)")
        print(f"{'':18} one new commit {new.seconds:6.1f} s = {new.seconds / first.seconds:6.1%} of the first "
              f"({step_counts(new)}; {rewritten(times, modification_times(out))} files written)")
        return {"first": first.seconds, "rerun": again.seconds, "new": new.seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", help="repository paths or URLs (only read)")
    parser.add_argument("--last", type=int, default=3, help="versions of the first run (default 3)")
    parser.add_argument("--work", type=Path, default=None, help="where the scratch folders go")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    args = parser.parse_args()
    figures = [measure(repo, args.last, args.work, args.keep) for repo in args.repos]
    print(f"median share of the first run: unchanged rerun {statistics.median(f['rerun'] / f['first'] for f in figures):.1%}, "
          f"one new commit {statistics.median(f['new'] / f['first'] for f in figures):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
