"""Each version in its own environment, on real projects: environments made vs versions, build time per
version, and histeg's own environment before and after.

    python bench/environment_bench.py REPO [REPO ...] [--versions HEAD~5..HEAD] [--work DIR] [--fresh] [--build-only]

Runs ``histeg compute`` on each repository into ``WORK/<name>`` and prints, per project, the versions,
the environments created and reused, the build seconds per version (median and maximum), the project
install seconds (installs made and installs reused from an earlier version, with why an install could not be), the
git-derived version strings, the targets and the total wall time. ``--fresh`` starts
from an empty environments folder (``WORK/environments``) so that every environment is made here; the
uv cache is left as it is. ``--build-only`` runs ``histeg build`` (extract and build) instead of
``compute``: the builds alone, on histories whose suites take long. Ends with whether ``pip freeze`` of histeg's environment is unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from histeg.records.build import Build


def freeze() -> str:
    return subprocess.run([sys.executable, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True).stdout


def measure(repo: Path, versions: str, work: Path, environments: Path, command: str = "compute") -> dict[str, object]:
    out = work / repo.name
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, HISTEG_ENVIRONMENTS=str(environments))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "histeg", command, "--repo", str(repo), "--versions", versions, "--out", str(out), "--json"],
                          capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    builds = [Build.read(path) for path in sorted(out.glob(f"*/{Build.FILE}"), key=lambda p: int(p.parent.name))]
    targets = []
    for path in sorted(out.glob("*/testingTargets.json"), key=lambda p: int(p.parent.name)):
        targets.append(len(json.loads(path.read_text())["targets"]))
    environments_used = {b.environment.key for b in builds if b.environment}
    projects = [b.project for b in builds if b.project]
    return {
        "project": repo.name, "exit": done.returncode, "versions": len(builds),
        "succeeded": sum(1 for b in builds if b.status == "succeeded"),
        "environments": len(environments_used),
        "created": sum(1 for b in builds if b.environment and b.environment.created),
        "build_median": statistics.median(b.seconds for b in builds) if builds else 0.0,
        "build_max": max((b.seconds for b in builds), default=0.0),
        "install_median": statistics.median(b.project.seconds if b.project else 0.0 for b in builds) if builds else 0.0,
        "scm_versions": [project.version for project in projects if project.version],
        "installs_reused": sum(1 for project in projects if project.reused_from is not None),
        "installs_made": sum(1 for project in projects if project.installed and project.reused_from is None),
        "install_made_median": statistics.median([p.seconds for p in projects if p.installed and p.reused_from is None] or [0.0]),
        "install_reused_median": statistics.median([p.seconds for p in projects if p.reused_from is not None] or [0.0]),
        "no_key": sorted({"git-derived version" if p.version else "setup.py, a version computed by the project's code or a compiling backend"
                          for p in projects if p.installed and p.key is None}),
        "reasons": sorted({b.reason for b in builds if b.reason}),
        "targets": targets, "wall": wall, "stderr": done.stderr.strip().splitlines()[-1:] if done.returncode else [],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--versions", default="HEAD~5..HEAD")
    parser.add_argument("--work", type=Path, default=Path("bench-environments"))
    parser.add_argument("--fresh", action="store_true", help="start from an empty environments folder")
    parser.add_argument("--build-only", action="store_true", help="extract and build only (histeg build), no traces")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    environments = args.work / "environments"
    if args.fresh:
        shutil.rmtree(environments, ignore_errors=True)
    before = freeze()
    rows = [measure(repo.resolve(), args.versions, args.work, environments, "build" if args.build_only else "compute") for repo in args.repos]
    after = freeze()
    print(f"{'project':<16} {'exit':>4} {'versions':>8} {'ok':>3} {'envs':>4} {'made':>4} {'build med/max s':>16} {'install med s':>13} {'wall s':>7}  targets")
    for row in rows:
        print(f"{row['project']:<16} {row['exit']:>4} {row['versions']:>8} {row['succeeded']:>3} {row['environments']:>4} {row['created']:>4} "
              f"{row['build_median']:>7.1f}/{row['build_max']:<8.1f} {row['install_median']:>13.1f} {row['wall']:>7.1f}  {row['targets']}")
        print(f"{'':<16} installs made {row['installs_made']} (median {row['install_made_median']:.2f} s), reused "
              f"{row['installs_reused']} (median {row['install_reused_median']:.3f} s)"
              + (f"; not reusable: {', '.join(row['no_key'])}" if row["no_key"] else ""))
        if row["scm_versions"]:
            print(f"{'':<16} git-derived versions: {', '.join(row['scm_versions'])}")
        for reason in row["reasons"]:
            print(f"{'':<16} failed: {reason}")
        for line in row["stderr"]:
            print(f"{'':<16} {line}")
    print("pip freeze of histeg's environment:", "unchanged" if before == after else "CHANGED")


if __name__ == "__main__":
    main()
