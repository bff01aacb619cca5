"""Fixtures shared by the whole suite: real git repositories, schema checks, the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "output_schema"


def _registry() -> Registry:
    """Every schema under its $id, so schemas can refer to each other."""
    resources = []
    for path in SCHEMAS.glob("*.schema.json"):
        schema = orjson.loads(path.read_bytes())
        resources.append((schema.get("$id", path.name), Resource.from_contents(schema, default_specification=DRAFT202012)))
    return Registry().with_resources(resources)


def validate_output(path: Path) -> Any:
    """Load a JSON file histeg wrote and validate it against output_schema/<name>.schema.json."""
    schema = orjson.loads((SCHEMAS / f"{path.stem}.schema.json").read_bytes())
    data = orjson.loads(path.read_bytes())
    validator = jsonschema.Draft202012Validator(schema, registry=_registry(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    validator.validate(data)
    return data


@pytest.fixture(scope="session", autouse=True)
def version_environments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of version environments for the whole session: the user's own cache is never
    touched, and versions of every test with the same declarations share one environment.
    Under pytest-xdist each worker is a session of its own with its own base temporary folder,
    so each worker gets its own environments folder: workers never share one."""
    folder = tmp_path_factory.mktemp("environments")
    os.environ["HISTEG_ENVIRONMENTS"] = str(folder)
    return folder


@dataclass
class GitRepo:
    """A real repository with deterministic authors and dates, for tests."""

    path: Path
    clock: int = 0

    @classmethod
    def create(cls, path: Path) -> GitRepo:
        """A new, empty repository on branch ``main`` in a folder made for it."""
        path.mkdir(parents=True)
        repo = cls(path)
        repo.git("init", "-q", "-b", "main")
        return repo

    @classmethod
    def with_history(cls, path: Path, *commits: tuple[str, dict[str, str | bytes]]) -> GitRepo:
        """A new repository holding these commits (message, files written), oldest first."""
        repo = cls.create(path)
        for message, files in commits:
            repo.commit(message, files)
        return repo

    def git(self, *args: str, check: bool = True) -> str:
        self.clock += 1
        date = f"2024-01-01T00:{self.clock // 60:02d}:{self.clock % 60:02d}+00:00"
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "Ada Tester", "GIT_AUTHOR_EMAIL": "ada@example.org",
            "GIT_COMMITTER_NAME": "Ada Tester", "GIT_COMMITTER_EMAIL": "ada@example.org",
            "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
        }
        result = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True, env=env, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"git {args} failed: {result.stderr}")
        return result.stdout.strip()

    def write(self, files: dict[str, str | bytes]) -> None:
        for name, content in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")

    def commit(self, message: str, files: dict[str, str | bytes] | None = None, remove: tuple[str, ...] = ()) -> str:
        self.write(files or {})
        for name in remove:
            self.git("rm", "-q", "--", name)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[str], GitRepo]:
    def make(name: str = "repo") -> GitRepo:
        return GitRepo.create(tmp_path / name)

    return make


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


INTERRUPTIBLE = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
"""First line of a program a test interrupts with SIGINT: SIGINT raises as in a terminal even when the tests run as a
background job of a non-interactive shell, which starts every process with SIGINT ignored (histeg then rightly leaves
SIGINT alone)."""


def interruptible_histeg(*args: str) -> list[str]:
    """``python -m histeg ARGS`` as a process a test interrupts with SIGINT (``INTERRUPTIBLE``)."""
    program = INTERRUPTIBLE + "import runpy, sys; sys.argv[0] = 'histeg'; runpy.run_module('histeg', run_name='__main__', alter_sys=True)"
    return [sys.executable, "-c", program, *args]


def run_histeg(*args: str, cwd: Path | None = None, timeout: float = 300) -> CliResult:
    """Run the real command line in a child process."""
    result = subprocess.run(
        [sys.executable, "-m", "histeg", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, check=False,
    )
    return CliResult(result.returncode, result.stdout, result.stderr)


@pytest.fixture
def histeg() -> Callable[..., CliResult]:
    return run_histeg


def computed_casino(base: Path, pairs: list[tuple[int, int]]) -> tuple[Path, dict[str, int], list[str]]:
    """The casino sample built under ``base`` and computed over each (first, last) range of its commit numbers: the
    output folder, the version index of each commit computed, and the commits in history order."""
    import histeg
    from histeg.samples import build_sample

    repo = build_sample("casino", base / "casino")
    commits = subprocess.run(["git", "-C", str(repo), "rev-list", "--reverse", "main"], capture_output=True, text=True,
                             check=True).stdout.split()
    project = histeg.Project(repo, out=base / "out", repeat=1, verbosity=0, read_config=False)
    for first, last in pairs:
        assert project.compute([f"{commits[first]}..{commits[last]}"]).exit_code == 0
    return base / "out", {version.identifier: version.index for version in project.versions()}, commits
