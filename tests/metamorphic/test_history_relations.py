"""Metamorphic properties of histeg over random small histories.

No oracle says which targets a random edit deserves, but some transformations of a history
must leave histeg's answer unchanged (a revert mirrors its commit; paths, comments,
docstrings, renamed test files and the order of tests are no behaviour). Each property runs
the real CLI on real repositories; Hypothesis shrinks a violating history to a few edits.
Examples are few (every one runs histeg): derandomized, so CI sees the same ones each time.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import GitRepo
from tests.metamorphic.projects import (
    History,
    Project,
    clone,
    commit,
    commit_history,
    compute,
    docstring_edits,
    documented,
    edits,
    histories,
    modifications,
)

# Every example runs histeg (about two seconds); HISTEG_METAMORPHIC_EXAMPLES=50 explores further locally.
EXAMPLES = int(os.environ.get("HISTEG_METAMORPHIC_EXAMPLES", "3"))
RELATION = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NO_CONFIRM = ("--confirm", "0")  # pure generated functions have no noise; re-runs would only cost time

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Module-scoped: Hypothesis runs many examples per test, each gets a fresh folder in here."""
    return tmp_path_factory.mktemp("metamorphic")


def fresh(workspace: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=workspace))


def ranked(document: dict[str, Any]) -> list[str]:
    return [t["identifier"] for t in document["targets"]]


def code_of_tests(document: dict[str, Any]) -> set[str]:
    return {t["identifier"] for t in document["testCode"]}


def build(workspace: Path, history: History) -> tuple[Path, Any, str]:
    """The history committed in a fresh repository: its folder, the repository, the last commit."""
    folder = fresh(workspace)
    repo = GitRepo.create(folder / "repo")
    return folder, repo, commit_history(repo, history)[-1]


# -- 1. a revert gives the same targets back ------------------------------------------------------

@st.composite
def reverted(draw: st.DrawFn) -> tuple[History, Project, str]:
    """A history and one commit of one or two modifications of existing functions."""
    history = draw(histories())
    changed, messages = history.last, []
    for _ in range(draw(st.integers(1, 2))):
        changed, message = draw(modifications(changed))
        messages.append(message)
    assume(changed.files() != history.last.files())  # two edits may cancel out; git cannot revert nothing
    return history, changed, "; ".join(messages)


@RELATION
@given(case=reverted())
def test_reverting_a_commit_gives_the_same_targets_back(workspace: Path, case: tuple[History, Project, str]) -> None:
    """A -> B -> revert(B): the same functions changed, with their roles swapped, so the ranked
    targets of revert-vs-B are those of B-vs-A. B only modifies existing functions: a function B
    added would be a target forwards and, removed by the revert, nothing backwards."""
    history, changed, message = case
    folder, repo, before = build(workspace, history)
    commit(repo, changed, message, history.last)
    repo.git("revert", "--no-edit", "HEAD")
    forward, backward = compute(repo.path, before, repo.git("rev-parse", "HEAD"), folder / "out", *NO_CONFIRM)
    assert ranked(forward), "a modification is a syntax change: its function is a target"
    assert ranked(backward) == ranked(forward)
    assert code_of_tests(backward) == code_of_tests(forward)


# -- 2. the same history at another path, into another output folder ----------------------------

PATH_FIELDS: tuple[str, ...] = ()  # fields of testingTargets.json that may name a path: none


@RELATION
@given(history=histories(max_edits=2), data=st.data())
def test_another_clone_and_output_folder_give_identical_targets(workspace: Path, history: History, data: st.DataObject) -> None:
    """Nothing in the targets may depend on where the repository or the output lives."""
    changed, message = data.draw(edits(history.last), label="last edit")
    folder, repo, before = build(workspace, history)
    after = commit(repo, changed, message, history.last)
    clone(repo.path, folder / "elsewhere" / "clone")
    here = compute(repo.path, before, after, folder / "out")
    there = compute(folder / "elsewhere" / "clone", before, after, folder / "elsewhere" / "results")
    assert [strip(d) for d in there] == [strip(d) for d in here]


def strip(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in PATH_FIELDS}


# -- 3. pure renames ---------------------------------------------------------------------------------

@RELATION
@given(history=histories(), data=st.data())
def test_renaming_a_test_file_or_a_module_gives_no_targets(workspace: Path, history: History, data: st.DataObject) -> None:
    """git mv of a test file (content unchanged), then of a product module (only the import of
    its test updated): the same tests run the same code, so nothing is to be tested anew."""
    modules = sorted(history.last.modules)
    tests = data.draw(st.sampled_from(modules), label="module whose test file is renamed")
    stem = data.draw(st.sampled_from(["test_renamed", f"test_{tests}_cases", "test_zz"]), label="new test file name")
    moved = data.draw(st.sampled_from(modules), label="module renamed")
    folder, repo, before = build(workspace, history)
    repo.git("mv", history.last.test_file(tests), f"tests/{stem}.py")
    repo.git("commit", "-q", "-m", "rename a test file")
    repo.git("mv", f"pkg/{moved}.py", f"pkg/{moved}_renamed.py")
    importer = repo.path / (f"tests/{stem}.py" if moved == tests else history.last.test_file(moved))
    importer.write_text(importer.read_text(encoding="utf-8").replace(f"from pkg.{moved} import", f"from pkg.{moved}_renamed import"), encoding="utf-8")
    repo.git("commit", "-q", "-a", "-m", "rename a module")
    test_file, module = compute(repo.path, before, repo.git("rev-parse", "HEAD"), folder / "out", *NO_CONFIRM)
    assert ranked(test_file) == [], "renamed test file"
    assert test_file["summary"]["divergences"] == 0, "renamed test file"
    assert ranked(module) == [], "renamed module"


# -- 4. comment-only and docstring-only commits -----------------------------------------------------

@st.composite
def commented(draw: st.DrawFn, project: Project) -> tuple[Project, str]:
    """Comment lines and trailing comments in one or more product modules (shifting the code below)."""
    plain = sorted(set(project.modules) - project.comments)
    chosen = draw(st.lists(st.sampled_from(plain), min_size=1, unique=True))
    return replace(project, comments=project.comments | set(chosen)), "comments"


@RELATION
@given(history=histories(), data=st.data())
def test_comment_only_and_docstring_only_commits_give_no_targets(workspace: Path, history: History, data: st.DataObject) -> None:
    """Comments and docstrings change no behaviour; the lines they shift are no divergence either.
    Both commits in one run (comments first, then docstrings): one histeg run per example."""
    with_comments, message = data.draw(commented(history.last), label="comments")
    with_docstrings, described = documented(with_comments, data.draw(docstring_edits(with_comments), label="docstrings"))
    folder, repo, before = build(workspace, history)
    commit(repo, with_comments, message, history.last)
    after = commit(repo, with_docstrings, described, with_comments)
    comments, docstrings = compute(repo.path, before, after, folder / "out", *NO_CONFIRM)
    assert (ranked(comments), code_of_tests(comments)) == ([], set()), "comment-only commit"
    assert (ranked(docstrings), code_of_tests(docstrings)) == ([], set()), "docstring-only commit"


# -- 5. another order of the tests --------------------------------------------------------------------

@RELATION
@given(history=histories(), data=st.data())
def test_reordering_tests_gives_no_product_targets(workspace: Path, history: History, data: st.DataObject) -> None:
    """The same tests in another order in their file run the same product code the same way."""
    project = history.last
    module = data.draw(st.sampled_from(sorted(project.modules)), label="module")
    current = project.test_order.get(module) or tuple(f.name for f in project.modules[module])
    order = data.draw(st.permutations(current).filter(lambda p: tuple(p) != current), label="order")
    changed = replace(project, test_order={**project.test_order, module: tuple(order)})
    folder, repo, before = build(workspace, history)
    after = commit(repo, changed, "reorder tests", project)
    (document,) = compute(repo.path, before, after, folder / "out", *NO_CONFIRM)
    assert ranked(document) == []
