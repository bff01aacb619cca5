"""What a version declares, read from its own files; the version string git-derived builds get."""

from __future__ import annotations

from pathlib import Path

import pytest

from histeg.envs.declarations import DeclarationError, environment_key, read_declarations
from histeg.envs.interpreter import Interpreter, fits
from histeg.envs.poetry import poetry_requirement
from histeg.envs.scm import scm_version


def _snapshot(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_project_tables_groups_and_requirement_files(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, {
        "pyproject.toml": """
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"
[project]
name = "Demo_Pkg"
requires-python = ">=3.12"
dependencies = ["attrs>=23"]
[project.optional-dependencies]
test = ["demo-pkg[extra]", "hypothesis"]
extra = ["rich"]
docs = ["sphinx"]
[dependency-groups]
dev = ["ruff", {include-group = "lint"}]
lint = ["mypy"]
""",
        "requirements-test.txt": "# tests\n-r requirements/base.txt\n-e .\nfreezegun==1.5  # clock\n--index-url https://example.invalid\n",
        "requirements/base.txt": "six\n./local-wheel.whl\n",
    })
    found = read_declarations(snapshot)
    assert found.requirements == ("attrs>=23", "freezegun==1.5", "hypothesis", "mypy", "pytest", "rich", "ruff", "six")
    assert (found.name, found.requires_python, found.installable, found.scm) == ("Demo_Pkg", ">=3.12", True, "hatch-vcs")
    assert set(found.sources) == {"pyproject.toml", "requirements-test.txt", "requirements/base.txt"}


def test_equal_declarations_share_a_key_and_the_interpreter_version_splits_it(tmp_path: Path) -> None:
    one = read_declarations(_snapshot(tmp_path / "a", {"pyproject.toml": '[project]\nname = "a"\ndependencies = ["six", "attrs"]\n'}))
    two = read_declarations(_snapshot(tmp_path / "b", {"pyproject.toml": '[project]\nname = "a"\ndependencies = ["attrs", "six"]\n# a comment\n'}))
    assert environment_key(one, "3.12.1") == environment_key(two, "3.12.1") != environment_key(one, "3.13.0")
    assert not one.installable and one.scm is None
    assert read_declarations(tmp_path / "nothing").requirements == ("pytest",)


def test_poetry_tables(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, {"pyproject.toml": """
[tool.poetry]
name = "poet"
[tool.poetry.dependencies]
python = "^3.12"
requests = "^2.31"
pendulum = {version = "~3.0", extras = ["test"]}
local = {path = "../local"}
[tool.poetry.group.test.dependencies]
pytest = "*"
[tool.setuptools_scm]
"""})
    found = read_declarations(snapshot)
    assert found.requirements == ("pendulum[test]<3.1,>=3.0", "pytest", "requests<3,>=2.31")
    assert found.requires_python == ">=3.12,<4" and found.scm == "setuptools-scm"


@pytest.mark.parametrize(("name", "spec", "expected"), [
    ("a", "^1.2.3", "a>=1.2.3,<2"),
    ("a", "^0.2.3", "a>=0.2.3,<0.3"),
    ("a", "^0.0.3", "a>=0.0.3,<0.0.4"),
    ("a", "~1.2.3", "a>=1.2.3,<1.3"),
    ("a", "~1", "a>=1,<2"),
    ("a", "1.4", "a==1.4"),
    ("a", ">=1,<3", "a>=1,<3"),
    ("a", "*", "a"),
    ("a", "^1 || ^2", "a"),
    ("a", {"git": "https://example.invalid/a.git"}, None),
    ("a", {"version": "^1.0", "markers": "sys_platform == 'linux'"}, "a>=1.0,<2 ; sys_platform == 'linux'"),
])
def test_poetry_constraints(name: str, spec: object, expected: str | None) -> None:
    assert poetry_requirement(name, spec) == expected


def test_a_broken_declaration_names_its_file(tmp_path: Path) -> None:
    with pytest.raises(DeclarationError, match="pyproject.toml"):
        read_declarations(_snapshot(tmp_path, {"pyproject.toml": "[project\n"}))
    with pytest.raises(DeclarationError, match="invalid requirement"):
        read_declarations(_snapshot(tmp_path / "b", {"pyproject.toml": '[project]\ndependencies = ["not a requirement!"]\n'}))


@pytest.mark.parametrize(("describe", "commits", "expected"), [
    ("v1.2.0-0-gabcdef1", 9, "1.2.0"),
    ("v1.2.0-3-gabcdef1", 9, "1.2.1.dev3+g0123456"),
    ("4.16-5-gc3a124c", 9, "4.16.1.dev5+g0123456"),
    ("release-2.0.0rc1-0-gc3a124c", 9, "2.0.0rc1"),
    (None, 7, "0.1.dev7+g0123456"),
    ("not-a-version-2-gabc", 7, "0.1.dev7+g0123456"),
])
def test_git_derived_version_strings(describe: str | None, commits: int, expected: str) -> None:
    assert scm_version(describe, commits, "0123456789abcdef") == expected


def test_requires_python_ranges() -> None:
    interpreter = Interpreter("/usr/bin/python3", "3.12.1")
    assert fits(interpreter, ">=3.12") and fits(interpreter, None) and not fits(interpreter, ">=3.13") and fits(interpreter, "not a range")


@pytest.mark.parametrize(("files", "added"), [
    ({"setup.cfg": "[tool:pytest]\naddopts = -ra\n    --cov=tinydb --cov-report term\n"}, True),
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = ['--strict-markers', '--cov-fail-under=90']\n"}, True),
    ({"tox.ini": "[tox]\nenvlist = py312\n[pytest]\naddopts = --doctest-modules\n"}, False),
    ({"pytest.ini": "[pytest]\naddopts = --cov\n", "requirements-dev.txt": "pytest-cov==2.5\n"}, False),
    ({"setup.cfg": "[tool:pytest\naddopts = --cov\n"}, False),
])
def test_pytest_cov_is_added_when_the_configuration_passes_its_options(tmp_path: Path, files: dict[str, str], added: bool) -> None:
    """Without pytest-cov, ``addopts = --cov`` is a usage error before any test runs; a declared pytest-cov is kept
    as declared, and a file pytest could not read either adds nothing."""
    requirements = read_declarations(_snapshot(tmp_path, files)).requirements
    assert ("pytest-cov" in requirements) is added
    assert ("pytest-cov==2.5" in requirements) is ("requirements-dev.txt" in files)
