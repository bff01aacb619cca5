"""One run per output directory, for the whole run; a refused run changes nothing."""

from __future__ import annotations

from pathlib import Path

from histeg.store import OutputStore
from tests.conftest import GitRepo

LIB = "def double(x):\n    return x + x\n"
TEST = "from lib import double\n\n\ndef test_double():\n    assert double(3) == 6\n"


def snapshot_of(out: Path) -> dict[str, bytes]:
    return {str(path.relative_to(out)): path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}


def test_a_run_refused_by_the_lock_changes_nothing(make_repo, histeg, tmp_path: Path) -> None:
    repo: GitRepo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    out = tmp_path / "out"
    assert histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out)).code == 0
    with OutputStore(out).locked():
        building = out / ".building-0-holder"
        building.mkdir()
        (building / "half.json").write_text("{}", encoding="utf-8")
        before = snapshot_of(out)
        refused = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out))
        assert refused.code == 2 and refused.stderr.strip().startswith("histeg: error: output directory")
        assert "in use by another histeg run" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
        assert snapshot_of(out) == before, "the lock holder's folders and every result are as they were"


def test_what_an_interrupted_run_left_is_removed_by_the_next_one(make_repo, histeg, tmp_path: Path) -> None:
    repo: GitRepo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    out = tmp_path / "out"
    assert histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out)).code == 0
    (out / ".building-0-left").mkdir()
    assert histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out)).code == 0
    assert not list(out.glob(".building-*"))
