"""Merge mode (``--merges``) on real projects: the newest real merge, and a seeded merge of known effect.

    python bench/merge_bench.py REPO [REPO ...] [--pytest-arg NAME=ARG ...] [--seed 1] [--max-trials 60]
                                [--merge-distance 2] [--work DIR] [--keep] [--json FILE]

Each REPO is cloned into a scratch folder (it is only read). Per project:

1. Real merge: the newest merge commit (``git log --merges -1``) is computed with
   ``histeg compute --versions MERGE --merges``; printed are the wall seconds,
   the lost and introduced places of its ``mergeDivergences.json`` and the
   merge-classed targets. A clean pull-request merge should have none: every
   one reported is listed (function, kind, classes, the four relations) as a
   false positive to look at.
2. Seeded merge on top of HEAD, from three observable single-function mutants
   (a test fails with each; found as ``bench/ground_truth.py`` finds them, in
   the environment histeg builds for HEAD): branch ``feature`` mutates f,
   branch ``main`` mutates g, ``git merge --no-commit -s ours feature`` drops
   f's change, and h is mutated before the merge is committed. Truth: f lost,
   h introduced, g neither, and f and h the first two targets of the merge's
   ``testingTargets.json``. Functions in distinct files are preferred.

``--pytest-arg NAME=ARG`` (NAME: the repository folder's name) restricts a
project's suite, say ``more-itertools=--ignore=tests/test_more.py``: the
untraced checks and histeg then run the same pytest command (histeg through
``--no-tests --run``). A table closes the output; ``--json`` writes the figures.
Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_repos import ROOT, clone, scratch_directory

sys.path.insert(0, str(ROOT))

from ground_truth import (
    ChainBuilder,
    Edit,
    Found,
    Git,
    Project,
    apply,
    probe,
    run_histeg,
)

WANTED_MUTANTS = 5
"""Observable mutants looked for, of which three (in distinct files where possible) are used."""
SHOWN_FALSE_POSITIVES = 8


@dataclass
class RealMerge:
    merge: str | None = None
    subject: str = ""
    code: int | None = None
    seconds: float | None = None
    lost: int | None = None
    introduced: int | None = None
    targets: int | None = None
    impact_set: int | None = None
    reported: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


@dataclass
class SeededMerge:
    f: str = ""
    g: str = ""
    h: str = ""
    edits: dict[str, str] = field(default_factory=dict)
    merge: str = ""
    code: int | None = None
    seconds: float | None = None
    f_lost: bool | None = None
    h_introduced: bool | None = None
    g_clean: bool | None = None
    first_two: bool | None = None
    """f and h are ranks 1 and 2 of the merge's testingTargets.json."""
    ranks: dict[str, int | None] = field(default_factory=dict)
    merge_classed: dict[str, list[str]] = field(default_factory=dict)
    """Every merge-classed target with its classes, in rank order."""
    block_first: bool | None = None
    """The merge-classed targets are ranks 1..k (they rank before every other target)."""
    ranked_tests: list[str] = field(default_factory=list)
    """Merge-classed targets in the tests directories that are ranked (testCode is never ranked)."""
    divergences: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass
class ProjectFigures:
    name: str
    build_style: str
    head: str = ""
    real: RealMerge = field(default_factory=RealMerge)
    seeded: SeededMerge = field(default_factory=SeededMerge)


def build_style(project: Path) -> str:
    """The build backend declared in pyproject.toml (hatch-vcs when hatchling takes its version from it)."""
    path = project / "pyproject.toml"
    text = path.read_text() if path.is_file() else ""
    backend = re.search(r'build-backend\s*=\s*"([^"]+)"', text)
    name = backend.group(1).split(".")[0].split(":")[0] if backend else ("setuptools" if (project / "setup.py").is_file() else "unknown")
    if name == "hatchling" and "hatch-vcs" in text:
        return "hatch-vcs"
    return {"flit_core": "flit", "poetry": "poetry"}.get(name, name)


def merge_output(out: Path, merge: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The merge's mergeDivergences.json and testingTargets.json (by commit), None where missing."""
    for path in sorted(out.glob("*/mergeDivergences.json")):
        data = json.loads(path.read_text())
        if data["identifier"] == merge:
            targets = path.parent / "testingTargets.json"
            return data, json.loads(targets.read_text()) if targets.is_file() else None
    return None, None


def reported_place(divergence: dict[str, Any]) -> dict[str, Any]:
    return {"function": divergence["function"], "kind": divergence["kind"], "classes": divergence["classes"],
            "lostFrom": divergence["lostFrom"], "target": divergence["target"], "relations": divergence["relations"],
            "entryPoint": divergence["entryPoint"]}


def histeg_merges(project_clone: Path, merge: str, out: Path, project: Project, distance: int) -> Any:
    return run_histeg(["compute", "--repo", str(project_clone), "--versions", merge, "--merges", "--merge-distance", str(distance),
                       "--out", str(out), "-q", *project.histeg_pytest], out.parent / f"{out.name}-logs")


# ---------------------------------------------------------------- real merge

def real_merge(git: Git, project_clone: Path, project: Project, scratch: Path, distance: int, log: Any) -> RealMerge:
    figures = RealMerge()
    merge = git("log", "--merges", "-1", "--format=%H")
    if not merge:
        figures.error = "no merge commit in the history"
        return figures
    figures.merge, figures.subject = merge, git("log", "-1", "--format=%s", merge)
    log(f"  real merge {merge[:12]} ({figures.subject[:70]})")
    run = histeg_merges(project_clone, merge, scratch / "real-out", project, distance)
    figures.code, figures.seconds = run.code, run.seconds
    data, _ = merge_output(scratch / "real-out", merge)
    if data is None:
        figures.error = f"histeg exit {run.code}, no mergeDivergences.json: {last_line(run.stderr)}"
        return figures
    figures.lost, figures.introduced, figures.targets = (data["summary"][k] for k in ("lost", "introduced", "targets"))
    figures.impact_set = len(data["impactSet"])
    figures.reported = [reported_place(d) for d in data["divergences"]]
    return figures


# ---------------------------------------------------------------- seeded merge

def chosen_three(found: list[Found]) -> list[Found]:
    """Three mutants, in distinct files where there are enough, in the order they were found."""
    chosen: list[Found] = []
    for found_one in found:
        if found_one.edit.path not in {c.edit.path for c in chosen}:
            chosen.append(found_one)
    for found_one in found:
        if found_one not in chosen:
            chosen.append(found_one)
    return chosen[:3]


def shifted(edit: Edit, earlier: list[Edit]) -> Edit:
    """``edit`` (positions in the base's file) moved past edits already applied before it in the same file."""
    delta = sum(len(e.text) - (e.end - e.start) for e in earlier if e.path == edit.path and e.end <= edit.start)
    return Edit(edit.path, edit.start + delta, edit.end + delta, edit.text, edit.description, edit.operator)


def write_edit(project_clone: Path, edit: Edit) -> None:
    path = project_clone / edit.path
    path.write_bytes(apply(path.read_bytes(), edit))


def in_tests(file: str | None, tests: list[str]) -> bool:
    return file is not None and any(Path(file).is_relative_to(t) for t in tests if t not in ("", "."))


def seeded_merge(git: Git, base: str, project_clone: Path, project: Project, scratch: Path, options: argparse.Namespace,
                 log: Any) -> SeededMerge:
    figures = SeededMerge()
    builder = ChainBuilder(project_clone, project, random.Random(options.seed), options.max_trials, log)
    started = time.perf_counter()
    code, builder.executed = project.suite.executed(project_clone, scratch)
    if code != 0:
        figures.error = f"the untraced suite does not pass at HEAD (pytest exit {code})"
        return figures
    project.suite.timeout = max(60.0, 10 * (time.perf_counter() - started) + 30)  # a mutant that loops is not kept
    found = builder.find_mutants(WANTED_MUTANTS)
    if len(found) < 3:
        figures.error = f"{len(found)} observable mutant(s) in {builder.trials} trials, 3 needed"
        return figures
    f, g, h = chosen_three(found)
    figures.f, figures.g, figures.h = f.identifier, g.identifier, h.identifier
    figures.edits = {"f": f"{f.edit.path}: {f.edit.description}", "g": f"{g.edit.path}: {g.edit.description}",
                     "h": f"{h.edit.path}: {h.edit.description}"}
    log(f"  seeded: f {figures.edits['f']} ({f.identifier}); g {figures.edits['g']} ({g.identifier}); "
        f"h {figures.edits['h']} ({h.identifier}); {builder.trials} untraced runs")

    git("checkout", "-q", "-B", "feature", base)
    write_edit(project_clone, f.edit)
    git.commit(f"merge bench: feature changes {f.identifier}", f.edit.path)
    git("checkout", "-q", "-B", "main", base)
    write_edit(project_clone, g.edit)
    git.commit(f"merge bench: main changes {g.identifier}", g.edit.path)
    git("merge", "-q", "--no-commit", "-s", "ours", "feature")
    write_edit(project_clone, shifted(h.edit, [g.edit]))
    figures.merge = git.commit(f"merge bench: merge feature with -s ours (drops {f.identifier}), editing {h.identifier}", h.edit.path)
    if git("rev-list", "--parents", "-n", "1", figures.merge).count(" ") != 2:
        figures.error = "the seeded merge commit does not have two parents"
        return figures

    log(f"  seeded merge {figures.merge[:12]}")
    run = histeg_merges(project_clone, figures.merge, scratch / "seeded-out", project, options.merge_distance)
    figures.code, figures.seconds = run.code, run.seconds
    data, targets = merge_output(scratch / "seeded-out", figures.merge)
    if data is None or targets is None:
        figures.error = f"histeg exit {run.code}, no mergeDivergences.json or testingTargets.json: {last_line(run.stderr)}"
        return figures
    figures.summary = data["summary"]
    figures.divergences = [reported_place(d) for d in data["divergences"]]
    ranked = targets["targets"]
    figures.merge_classed = {t["identifier"]: t.get("mergeClasses", []) for t in ranked if t.get("mergeClasses")}
    rank_of = {t["identifier"]: t["rank"] for t in ranked}
    figures.ranks = {name: rank_of.get(identifier) for name, identifier in (("f", f.identifier), ("g", g.identifier), ("h", h.identifier))}
    figures.f_lost = "lost" in figures.merge_classed.get(f.identifier, [])
    figures.h_introduced = "introduced" in figures.merge_classed.get(h.identifier, [])
    figures.g_clean = g.identifier not in figures.merge_classed
    figures.first_two = {figures.ranks["f"], figures.ranks["h"]} == {1, 2}
    figures.block_first = sorted(rank_of[i] for i in figures.merge_classed) == list(range(1, len(figures.merge_classed) + 1))
    figures.ranked_tests = [t["identifier"] for t in ranked if t.get("mergeClasses") and in_tests(t.get("file"), project.tests)]
    return figures


# ---------------------------------------------------------------- one project, printing

def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def measure(repo: str, options: argparse.Namespace, log: Any) -> ProjectFigures:
    name = Path(repo.rstrip("/")).name
    extra = [arg.partition("=")[2] for arg in options.pytest_arg or [] if arg.partition("=")[0] == name]
    with scratch_directory(f"histeg-merge-{name}-", options.work, options.keep, log) as scratch:
        project_clone = clone(repo, scratch / "clone")
        git = Git(project_clone)
        base = git("rev-parse", "HEAD")
        figures = ProjectFigures(name, build_style(project_clone), base)
        log(f"{name} ({figures.build_style}): HEAD {base[:12]}" + (f", pytest {' '.join(extra)}" if extra else ""))
        project = probe(project_clone, base, scratch, None, extra, log)
        figures.real = real_merge(git, project_clone, project, scratch, options.merge_distance, log)
        print_real(figures.real)
        figures.seeded = seeded_merge(git, base, project_clone, project, scratch, options, log)
        print_seeded(figures.seeded)
    return figures


def print_real(real: RealMerge) -> None:
    if real.error:
        print(f"  real merge: {real.error}")
        return
    print(f"  real merge {real.merge[:12]}: {real.seconds:.1f} s (exit {real.code}), {real.lost} lost, {real.introduced} introduced, "
          f"{real.targets} merge-classed target(s), impact set {real.impact_set}")
    for place in real.reported[:SHOWN_FALSE_POSITIVES]:
        print(f"    reported: {place['function']} {place['kind']} {'/'.join(place['classes'])} (target {place['target']}) "
              f"at {json.dumps(place['entryPoint'])}; {json.dumps(place['relations'])}")
    if len(real.reported) > SHOWN_FALSE_POSITIVES:
        print(f"    ... {len(real.reported) - SHOWN_FALSE_POSITIVES} more")


def yes_no(value: bool | None) -> str:
    return "n/a" if value is None else "y" if value else "n"


def print_seeded(seeded: SeededMerge) -> None:
    if seeded.error:
        print(f"  seeded merge: {seeded.error}")
        return
    print(f"  seeded merge {seeded.merge[:12]}: {seeded.seconds:.1f} s (exit {seeded.code}), summary {json.dumps(seeded.summary)}")
    print(f"    f {seeded.f}: lost {'found' if seeded.f_lost else 'missed'} (rank {seeded.ranks.get('f')})")
    print(f"    h {seeded.h}: introduced {'found' if seeded.h_introduced else 'missed'} (rank {seeded.ranks.get('h')})")
    print(f"    g {seeded.g}: {'clean' if seeded.g_clean else 'classed ' + '/'.join(seeded.merge_classed[seeded.g])} "
          f"(rank {seeded.ranks.get('g')})")
    print(f"    merge-classed targets rank before the others: {yes_no(seeded.block_first)}; "
          f"{len(seeded.ranked_tests)} of {len(seeded.merge_classed)} are test functions (tests directories), ranked")
    print(f"    f and h ranks 1 and 2: {yes_no(seeded.first_two)}; merge-classed targets in rank order: {json.dumps(seeded.merge_classed)}")
    for place in seeded.divergences[:SHOWN_FALSE_POSITIVES * 2]:
        print(f"    place: {place['function']} {place['kind']} {'/'.join(place['classes'])} -> {place['target']}")


def seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def print_table(rows: list[ProjectFigures]) -> None:
    print()
    print("| project | build | real merge: s / lost / introduced | seeded: f lost (rank) | h introduced (rank) | g clean "
          "| merge-classed first / of them test functions | f, h ranks 1-2 | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        real, seeded = row.real, row.seeded
        real_text = real.error or f"{seconds(real.seconds)} / {real.lost} / {real.introduced}"
        classed = f"{yes_no(seeded.block_first)} ({len(seeded.merge_classed)}) / {len(seeded.ranked_tests)}"
        print(f"| {row.name} | {row.build_style} | {real_text} | {yes_no(seeded.f_lost)} ({seeded.ranks.get('f')}) | "
              f"{yes_no(seeded.h_introduced)} ({seeded.ranks.get('h')}) | {yes_no(seeded.g_clean)} | {classed} | "
              f"{yes_no(seeded.first_two)} | {seconds(seeded.seconds)} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", metavar="REPO", help="repository path or URL (only read)")
    parser.add_argument("--pytest-arg", action="append", metavar="NAME=ARG", help="a pytest argument for one project (repeatable)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-trials", type=int, default=60, help="untraced suite runs spent looking for mutants, per project")
    parser.add_argument("--merge-distance", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="where the scratch folders go (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders (clone, histeg's output) for inspection")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    options = parser.parse_args()
    rows = []
    for repo in options.repos:
        try:
            rows.append(measure(repo, options, lambda text: print(text, flush=True)))
        except (RuntimeError, OSError, ValueError, KeyError, subprocess.SubprocessError) as error:  # the others still run
            print(f"{repo}: failed: {type(error).__name__}: {error}", flush=True)
            rows.append(ProjectFigures(Path(repo.rstrip("/")).name, "?", real=RealMerge(error=f"failed: {error}"[:120]),
                                       seeded=SeededMerge(error=str(error))))
    print_table(rows)
    if options.json:
        options.json.write_text(json.dumps([asdict(row) for row in rows], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
