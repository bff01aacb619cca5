"""The bundled samples: deterministic git repositories whose every commit passes its own tests,
and whose documented expectations agree with the step folders and the code."""

from __future__ import annotations

import ast
import glob
import io
import os
import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from histeg.errors import HistegError
from histeg.samples import (
    AUTHOR_EMAIL,
    AUTHOR_NAME,
    SAMPLES_ROOT,
    available_samples,
    build_sample,
    commit_date,
    git_environment,
    load_steps,
    tree_after,
)

SAMPLES = available_samples()
STEP_KEYS = {
    "folder", "subject", "kind", "compared", "python_changed", "files_changed",
    "syntax_functions", "syntax_entities", "syntax_tests", "new_classes", "change",
    "divergent", "noise", "targets", "targets_top", "not_targets", "local", "non_local",
    "unmapped", "equivalent", "no_targets",
}  # fmt: skip
KINDS = {"initial", "constant", "comment", "equivalent-refactoring", "new-class", "callee-effect", "nondeterminism", "non-python", "uncovered"}
DIVERGENCE_KINDS = {"lines", "parameters", "return", "calls"}
CHANGE_TYPES = {"addition", "removal", "modification", "move", "rename"}
IDENTIFIER = re.compile(r"^[A-Za-z_][\w.]*:([A-Za-z_][\w.<>]*)?$")


def git(repository: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repository, env=git_environment(), capture_output=True, text=True, check=True).stdout


def materialise(repository: Path, sha: str, destination: Path) -> Path:
    """``git archive <sha> | tar -x`` into ``destination``."""
    archive = subprocess.run(["git", "archive", sha], cwd=repository, env=git_environment(), capture_output=True, check=True).stdout
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(destination, filter="data")
    return destination


def files_in(directory: Path) -> dict[str, bytes]:
    return {path.relative_to(directory).as_posix(): path.read_bytes() for path in directory.rglob("*") if path.is_file()}


class Built:
    """A sample built once per test module, with every commit materialised."""

    def __init__(self, name: str, root: Path) -> None:
        self.name = name
        self.steps = load_steps(name)
        self.repository = build_sample(name, root / "repo")
        self.shas = git(self.repository, "rev-list", "--reverse", "main").split()
        self.checkouts = [materialise(self.repository, sha, root / f"commit-{index:02d}") for index, sha in enumerate(self.shas)]
        self.expected = tomllib.loads((SAMPLES_ROOT / name / "expected.toml").read_text(encoding="utf-8"))["step"]


@pytest.fixture(scope="module", params=SAMPLES)
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(request.param, tmp_path_factory.mktemp(request.param))


ROOT = Path(__file__).resolve().parent.parent


def test_casino_is_bundled() -> None:
    assert "casino" in SAMPLES
    assert (SAMPLES_ROOT / "casino" / "expected.toml").is_file()


def test_package_data_globs_reach_every_sample_file() -> None:
    """setuptools expands package-data with recursive ``glob``, which skips hidden folders:
    a sample file the globs miss would be absent from the wheel."""
    package = ROOT / "histeg"
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]["histeg"]
    shipped = {match for pattern in patterns for match in glob.glob(pattern, root_dir=package, recursive=True)}
    tracked = git(ROOT, "ls-files", "--", "histeg/sample_data").splitlines()
    committed = {path.removeprefix("histeg/") for path in tracked if path}
    assert committed, "the samples are package data under histeg/"
    assert committed <= shipped, sorted(committed - shipped)


def test_one_commit_per_step_on_main_with_fixed_identity_and_clock(built: Built) -> None:
    assert len(built.shas) == len(built.steps)
    assert git(built.repository, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    log = git(built.repository, "log", "--reverse", "--format=%an|%ae|%cn|%ce|%aI|%cI|%P", "main").splitlines()
    for index, line in enumerate(log):
        author, author_email, committer, committer_email, authored, committed, parents = line.split("|")
        assert (author, author_email, committer, committer_email) == (AUTHOR_NAME, AUTHOR_EMAIL, AUTHOR_NAME, AUTHOR_EMAIL)
        assert authored == committed == commit_date(index)
        assert len(parents.split()) == (0 if index == 0 else 1)
    for sha, step in zip(built.shas, built.steps):
        assert git(built.repository, "log", "-1", "--format=%B", sha).strip() == step.message.strip()


def test_each_commit_holds_the_steps_applied_so_far(built: Built) -> None:
    for index, checkout in enumerate(built.checkouts):
        assert files_in(checkout) == tree_after(built.steps[: index + 1]), built.steps[index].name
        modes = {line.split()[0] for line in git(built.repository, "ls-tree", "-r", built.shas[index]).splitlines()}
        assert modes == {"100644"}


def test_building_twice_gives_the_same_shas_whatever_the_user_configured(built: Built, tmp_path: Path) -> None:
    again = build_sample(built.name, tmp_path / "again")
    assert git(again, "rev-list", "main").split() == built.shas[::-1]

    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    hostile = "[user]\n\tname = Someone Else\n\temail = else@example.org\n[init]\n\tdefaultBranch = trunk\n[core]\n\tautocrlf = true\n[commit]\n\tgpgsign = true\n[i18n]\n\tcommitEncoding = ISO-8859-1\n"
    (home / ".gitconfig").write_text(hostile)
    (home / ".config" / "git" / "config").write_text(hostile)
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_AUTHOR_NAME": "Someone Else", "GIT_COMMITTER_DATE": "2030-01-01T00:00:00+00:00"}
    destination = tmp_path / "hostile"
    command = f'umask 077 && exec "{sys.executable}" -m histeg.samples {built.name} "{destination}"'
    result = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(destination)
    assert git(destination, "rev-list", "main").split() == built.shas[::-1]


def test_the_sample_test_suite_passes_at_every_commit(built: Built) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "PYTHONPATH"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    for step, checkout in zip(built.steps, built.checkouts):
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:histeg"],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"{step.name}:\n{result.stdout}{result.stderr}"
        assert re.search(r"\d+ passed", result.stdout), result.stdout


def test_casino_small_talk_differs_between_two_runs(tmp_path: Path) -> None:
    steps = load_steps("casino")
    index = next(i for i, step in enumerate(steps) if step.name.endswith("croupier-small-talk"))
    repository = build_sample("casino", tmp_path / "repo")
    sha = git(repository, "rev-list", "--reverse", "main").split()[index]
    checkout = materialise(repository, sha, tmp_path / "checkout")
    script = "from casino.croupier import Croupier\nc = Croupier(13)\nprint([c.small_talk() for _ in range(64)])"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    runs = [subprocess.run([sys.executable, "-c", script], cwd=checkout, env=env, capture_output=True, text=True, check=True).stdout for _ in range(2)]
    assert runs[0] != runs[1]
    assert "Faites vos jeux." in runs[0] and "Rien ne va plus." in runs[0]


# --- expected.toml and README.md -------------------------------------------------------------


def identifiers_of(step: dict) -> set[str]:
    names = {*step["syntax_functions"], *step["syntax_entities"], *step["syntax_tests"], *step["new_classes"]}
    names |= {*step["noise"], *step["targets"], *step["targets_top"], *step["not_targets"], *step["unmapped"], *step["equivalent"]}
    names |= {row["identifier"] for row in step["change"]} | {row["function"] for row in step["divergent"]}
    names |= {row["target"] for row in step["local"]}
    names |= {row[key] for row in step["non_local"] for key in ("changed", "divergent")}
    return names


def defined(checkout: Path, ident: str) -> bool:
    """Whether ``module:Qual.name`` names a module, class, function or class-level name in the checkout."""
    module, _, qualname = ident.partition(":")
    base = checkout.joinpath(*module.split("."))
    path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
    if not path.is_file():
        return False
    body: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    for part in filter(None, qualname.split(".")):
        found = None
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.name == part:
                found = node.body
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(target, ast.Name) and target.id == part for target in targets):
                    found = []
        if found is None:
            return False
        body = found
    return True


def test_expected_toml_matches_the_step_folders_and_git(built: Built) -> None:
    assert [step["folder"] for step in built.expected] == [step.name for step in built.steps]
    for index, (step, expected) in enumerate(zip(built.steps, built.expected)):
        assert set(expected) == STEP_KEYS, step.name
        assert expected["subject"] == step.message.strip().splitlines()[0]
        changed = sorted(git(built.repository, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", built.shas[index]).split())
        assert expected["files_changed"] == changed, step.name
        assert expected["python_changed"] == any(path.endswith(".py") for path in changed), step.name
        assert expected["compared"] == (index > 0)


def test_expected_toml_is_coherent(built: Built) -> None:
    for expected in built.expected:
        where = expected["folder"]
        assert expected["kind"] in KINDS, where
        syntax = {*expected["syntax_functions"], *expected["syntax_entities"], *expected["syntax_tests"]}
        assert {row["identifier"] for row in expected["change"]} == syntax, where
        assert len(expected["change"]) == len(syntax), where
        for row in expected["change"]:
            assert row["level"] in {"function", "class", "module"} and row["types"] and set(row["types"]) <= CHANGE_TYPES and row["code_types"], where
        assert all(name.startswith("tests.") for name in expected["syntax_tests"]), where
        assert set(expected["new_classes"]) <= set(expected["syntax_entities"]), where
        assert set(expected["targets_top"]) <= set(expected["targets"]), where
        assert not set(expected["targets"]) & set(expected["not_targets"]), where
        assert not set(expected["targets"]) & set(expected["syntax_tests"]), where
        assert expected["no_targets"] == (not expected["targets"]), where
        divergent = {row["function"] for row in expected["divergent"]}
        assert all(set(row["kinds"]) <= DIVERGENCE_KINDS for row in [*expected["divergent"], *expected["local"], *expected["non_local"]]), where
        assert {row["target"] for row in expected["local"]} <= divergent & set(expected["syntax_functions"]) & set(expected["targets"]), where
        for row in expected["non_local"]:
            assert row["changed"] in syntax and row["changed"] in expected["targets"], where
            assert row["divergent"] in divergent and row["divergent"] not in syntax, where
            assert isinstance(row["distance"], int) and row["distance"] >= 0, where
        mapped = {row["target"] for row in expected["local"]} | {row["divergent"] for row in expected["non_local"]}
        assert divergent == mapped | set(expected["unmapped"]), where
        assert not divergent & set(expected["noise"]), where
        assert set(expected["equivalent"]) <= set(expected["syntax_functions"]), where
        if not expected["compared"]:
            assert not syntax and not divergent and expected["no_targets"], where


def test_expected_identifiers_name_real_code(built: Built) -> None:
    for expected, checkout in zip(built.expected, built.checkouts):
        for ident in identifiers_of(expected):
            assert IDENTIFIER.match(ident), f"{expected['folder']}: malformed identifier {ident!r}"
            assert defined(checkout, ident), f"{expected['folder']}: {ident!r} is not defined at that commit"


def test_readme_table_names_every_step_and_identifier(built: Built) -> None:
    readme = (SAMPLES_ROOT / built.name / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if re.match(r"^\| `\d{2}-", line)]
    assert [re.match(r"^\| `([^`]+)`", row).group(1) for row in rows] == [step.name for step in built.steps]  # type: ignore[union-attr]
    for expected, row in zip(built.expected, rows):
        assert expected["subject"] in row
        for ident in identifiers_of(expected):
            assert f"`{ident}`" in readme, f"{expected['folder']}: {ident} missing from README.md"


# --- errors ------------------------------------------------------------------------------------


def test_unknown_sample_lists_the_available_ones(tmp_path: Path) -> None:
    with pytest.raises(HistegError, match=r"unknown sample 'roulette'.*casino"):
        build_sample("roulette", tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_destination_must_be_absent_or_empty(tmp_path: Path) -> None:
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    with pytest.raises(HistegError, match="not empty"):
        build_sample("casino", occupied)
    assert files_in(occupied) == {"keep.txt": b"mine"}

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(HistegError, match="not a directory"):
        build_sample("casino", a_file)

    empty = tmp_path / "empty"
    empty.mkdir()
    assert build_sample("casino", empty) == empty
    assert git(empty, "rev-list", "--count", "main").strip() == str(len(load_steps("casino")))


def test_command_line_reports_errors_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "histeg.samples", "roulette", str(tmp_path / "x")], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "unknown sample 'roulette'" in result.stderr


# --- the step format, on a sample written here ----------------------------------------------------


def write_step(root: Path, folder: str, message: str, files: dict[str, str], deleted: list[str] = ()) -> None:
    step = root / "tiny" / "steps" / folder
    for path, text in files.items():
        (step / "files" / path).parent.mkdir(parents=True, exist_ok=True)
        (step / "files" / path).write_text(text)
    step.mkdir(parents=True, exist_ok=True)
    (step / "message.txt").write_text(message)
    if deleted:
        (step / "deleted.txt").write_text("\n".join(deleted) + "\n")


def test_steps_add_change_and_delete_files_and_skip_build_leftovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import histeg.samples

    root = tmp_path / "samples"
    write_step(root, "00-start", "Start\n", {"a.txt": "one\n", "pkg/b.py": "x = 1\n", "pkg/__pycache__/b.cpython-312.pyc": "junk"})
    write_step(root, "01-change", "Change b, drop a\n\n# not a comment for git\n", {"pkg/b.py": "x = 2\n"}, deleted=["a.txt"])
    monkeypatch.setattr(histeg.samples, "SAMPLES_ROOT", root)
    assert available_samples() == ["tiny"]
    repository = build_sample("tiny", tmp_path / "repo")
    first, second = git(repository, "rev-list", "--reverse", "main").split()
    assert git(repository, "ls-tree", "-r", "--name-only", first).split() == ["a.txt", "pkg/b.py"]
    assert git(repository, "ls-tree", "-r", "--name-only", second).split() == ["pkg/b.py"]
    assert git(repository, "show", f"{second}:pkg/b.py") == "x = 2\n"
    assert git(repository, "log", "-1", "--format=%B", second).strip() == "Change b, drop a\n\n# not a comment for git"


@pytest.mark.parametrize(
    ("folder", "files", "deleted", "message"),
    [
        ("01-skipped-number", {"a.txt": "x"}, [], "should be named 00-<slug>"),
        ("00-escape", {"a.txt": "x"}, ["../outside"], "must stay inside the repository"),
        ("00-nothing", {}, [], "change anything"),
        ("00-deletes-nothing-there", {"a.txt": "x"}, ["b.txt"], "does not exist at that point"),
    ],
)
def test_malformed_steps_are_refused_and_leave_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str, files: dict[str, str], deleted: list[str], message: str) -> None:
    import histeg.samples

    root = tmp_path / "samples"
    write_step(root, folder, "Step\n", files, deleted)
    monkeypatch.setattr(histeg.samples, "SAMPLES_ROOT", root)
    with pytest.raises(HistegError, match=re.escape(message)):
        build_sample("tiny", tmp_path / "repo")
    assert not (tmp_path / "repo").exists()
