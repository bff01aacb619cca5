"""What confirmation costs after a core change: a sample per (function, kind) against re-running every divergent test.

    python bench/confirm_bench.py REPO --function FILE:QUALNAME [--operator constant] [--edit 0]
                                  [--sample 4] [--sources DIR] [--work DIR] [--keep]

On a clone of REPO (only read), one seeded mutant of the named function (``bench/mutant_edits.py``'s operators)
is committed; ``histeg compute --versions HEAD`` (the mutant against its parent) then runs with ``--confirm-sample N``. The output folder is
copied and the compare step made again in the copy with ``--confirm-sample 0``: the same traces, so the two
comparisons differ by their re-runs alone. Prints, side by side: divergent entry points, entry points re-run,
the confirmation's wall seconds, the widened groups, and whether the targets (identifiers, order, entry
points) and the noise are the same. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutant_edits import apply_edit, candidate_edits, functions_in  # noqa: E402
from real_repos import HistegRun, clone, git, log_to_stderr, run_histeg, scratch_directory  # noqa: E402


def seed(clone_dir: Path, function: str, operator: str, number: int, sources: list[str]) -> str:
    path, qualname = function.split(":", 1)
    site = next((s for s in functions_in(clone_dir, path, sources) if s.identifier.endswith(":" + qualname)), None)
    if site is None:
        raise SystemExit(f"no function {qualname} in {path}")
    edits = list(candidate_edits(site.node, operator))
    if number >= len(edits):
        raise SystemExit(f"{function} has {len(edits)} {operator} edit(s), not {number + 1}")
    edit = edits[number]
    file = clone_dir / path
    file.write_bytes(apply_edit(file.read_bytes(), edit))
    git(clone_dir, "commit", "-qam", f"mutant: {edit.description} in {qualname}", clock=1)
    return f"{site.identifier}: {edit.description}"


def facts(out: Path, run: HistegRun) -> dict[str, Any]:
    if run.code != 0:
        raise SystemExit(f"histeg failed ({run.code}): {run.stderr.strip().splitlines()[-1:]}")
    index = max(int(path.name) for path in out.iterdir() if path.name.isdigit())  # versions are numbered by history position
    folder = out / str(index)
    targets = json.loads((folder / "testingTargets.json").read_text())
    divergences = json.loads((folder / "traceDivergences.json").read_text())
    confirmations = json.loads((folder / "confirmations.json").read_text()) if (folder / "confirmations.json").is_file() else {"batches": []}
    assert run.summary is not None
    seconds = next(item for item in run.summary["steps"]["compare"] if item["index"] == index)["seconds"]
    confirmation = divergences["confirmation"]
    newest = [batch for batch in confirmations["batches"] if batch["round"] == 1]
    rerun = {nodeid for batch in newest for nodeid in (batch["selection"].get("pytest") or [])}
    return {
        "diverging": confirmation["entryPoints"],
        "rerun": len(rerun),
        "confirm seconds": seconds["confirm"],
        "compare seconds": seconds["compare"],
        "widened": (confirmation.get("sample") or {}).get("widenedGroups", []),
        "targets": [(t["identifier"], sorted(t["entryPoints"])) for t in targets["targets"]],
        "noise": sorted((n["entryPoint"], n["function"]) for n in targets["noise"]["unstable"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo")
    parser.add_argument("--function", required=True, help="FILE:QUALNAME of the function to mutate (a core one)")
    parser.add_argument("--operator", default="constant", choices=("compare", "condition", "constant", "boolop", "return"))
    parser.add_argument("--edit", type=int, default=0, help="which edit of the operator in the function (default: the first)")
    parser.add_argument("--sample", type=int, default=4)
    parser.add_argument("--sources", default="", help="sources directory, for the module names (default: the repository root)")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    with scratch_directory("histeg-confirm-bench-", args.work, args.keep, log_to_stderr) as work:
        clone_dir = clone(args.repo, work / "clone")
        mutant = seed(clone_dir, args.function, args.operator, args.edit, [args.sources] if args.sources else [])
        sampled_out, full_out = work / "sampled", work / "full"
        common = ["--repo", str(clone_dir), "--versions", "HEAD"]
        sampled = facts(sampled_out, run_histeg("compute", *common, "--out", str(sampled_out), "--confirm-sample", str(args.sample)))
        shutil.copytree(sampled_out, full_out, symlinks=True)
        full = facts(full_out, run_histeg("compute", *common, "--out", str(full_out), "--confirm-sample", "0"))
    print(f"repository: {Path(args.repo).name}  mutant: {mutant}")
    print(f"{'':28s} {'sample ' + str(args.sample):>14s} {'every test':>14s}")
    for key in ("diverging", "rerun", "confirm seconds", "compare seconds"):
        print(f"{key:28s} {sampled[key]:>14} {full[key]:>14}")
    print(f"widened groups (sample): {', '.join(sampled['widened']) or 'none'}")
    print(f"targets: {len(sampled['targets'])} / {len(full['targets'])}; "
          f"{'identical (order and entry points)' if sampled['targets'] == full['targets'] else 'DIFFER'}")
    if sampled["targets"] != full["targets"]:
        print(f"  order, sample:     {[t for t, _ in sampled['targets'][:8]]}")
        print(f"  order, every test: {[t for t, _ in full['targets'][:8]]}")
    print(f"noise: {len(sampled['noise'])} / {len(full['noise'])} (entry point, function) pairs; "
          f"{'identical' if sampled['noise'] == full['noise'] else 'differ: ' + str(len(set(full['noise']) - set(sampled['noise']))) + ' only when every test is re-run'}")


if __name__ == "__main__":
    main()
