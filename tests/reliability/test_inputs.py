"""Whatever a repository holds, histeg records it or skips it with a reason, never crashes, and never leaks a secret.

Every case but the two tables runs the real command line on a real
repository; a case that cannot be handled ends in one line on stderr with
exit code 2 (bad input) and leaves the results of earlier runs as they were.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import json
import os
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from histeg.history.git import scrub
from histeg.history.snapshot import LFS_REASON
from histeg.history.source import MIRROR_DIR
from histeg.locations import redact
from histeg.statics.functions import read_function_table
from histeg.store import LOCK_FILE, OutputStore
from histeg.syntax.analysis import analyze_version
from tests.conftest import CliResult, GitRepo, validate_output

LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345\n"
)
LIB = "def double(x):\n    return x * 2\n"
TEST = "from lib import double\n\n\ndef test_double():\n    assert double(3) == 6\n"


# --- helpers ---------------------------------------------------------------------------------------

def raw_git(repo: GitRepo, *args: str | bytes, stdin: bytes | None = None) -> bytes:
    """git with byte arguments and input, for names that are not UTF-8 and for crafted trees."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "Ada Tester", "GIT_AUTHOR_EMAIL": "ada@example.org",
           "GIT_COMMITTER_NAME": "Ada Tester", "GIT_COMMITTER_EMAIL": "ada@example.org"}
    result = subprocess.run([b"git", b"-C", bytes(repo.path), *(a.encode() if isinstance(a, str) else a for a in args)],
                            input=stdin, capture_output=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def blob(repo: GitRepo, content: bytes) -> bytes:
    return raw_git(repo, "hash-object", "-w", "--stdin", stdin=content)


def tree(repo: GitRepo, entries: list[tuple[str, bytes, bytes]]) -> bytes:
    """A tree object from ``(mode, name, object)`` entries, names as raw bytes (``git mktree -z``)."""
    lines = b"".join(f"{mode} {'tree' if mode == '040000' else 'blob'} ".encode() + obj + b"\t" + name + b"\0"
                     for mode, name, obj in entries)
    return raw_git(repo, "mktree", "-z", stdin=lines)


def commit_tree(repo: GitRepo, root: bytes, message: str) -> str:
    """Commit ``root`` on top of ``main`` and move ``main`` to it."""
    commit = raw_git(repo, "commit-tree", root, "-p", "main", "-m", message)
    raw_git(repo, "update-ref", "refs/heads/main", commit)
    return commit.decode()


def files_under(folder: Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` by relative path, with its bytes."""
    found = {}
    for current, _, names in os.walk(folder):
        for name in names:
            path = Path(current, name)
            if not path.is_symlink():
                found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def results(out: Path) -> dict[str, bytes]:
    """The result files of an output directory: not histeg's mirror, not its lock."""
    return {name: content for name, content in files_under(out).items() if not name.startswith((MIRROR_DIR, LOCK_FILE))}


def assert_secret_absent(secret: str, out: Path, *runs: CliResult) -> None:
    for relative, content in files_under(out).items():
        assert secret.encode() not in content, f"{secret!r} written to {relative}"
    for result in runs:
        assert secret not in result.stdout and secret not in result.stderr, (result.stdout, result.stderr)


def assert_one_line_error(result: CliResult, *fragments: str) -> None:
    assert result.code == 2, (result.code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("histeg: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def skipped(out: Path, index: int) -> dict[str, str]:
    return {entry["path"]: entry["reason"] for entry in validate_output(out / str(index) / "version.json")["skippedEntries"]}


def changes(out: Path, index: int) -> dict[str, dict[str, object]]:
    return {c["newPath"] or c["oldPath"]: c for c in validate_output(out / str(index) / "fileChanges.json")["changes"]}


def extract(histeg: Callable[..., CliResult], repo: GitRepo | str, out: Path, *args: str) -> CliResult:
    location = repo if isinstance(repo, str) else str(repo.path)
    every = () if "--versions" in args else ("--all",)
    return histeg("extract", "--repo", location, "--out", str(out), "-v", *every, *args)


# --- secrets ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "stored"), [
    ("https://alice:t0ken@example.com/org/repo.git", "https://example.com/org/repo.git"),
    ("https://ghp_t0ken@github.com/org/repo.git", "https://github.com/org/repo.git"),
    ("https://alice:p%40ss@example.com:8443/repo", "https://example.com:8443/repo"),
    ("https://alice:p@ss?x@example.com/repo", "https://example.com/repo"),
    ("http://t0ken@example.com", "http://example.com"),
    ("file://user:secret@/srv/repo.git", "file:///srv/repo.git"),
    ("ssh://git:t0ken@example.com/repo.git", "ssh://git@example.com/repo.git"),
    ("ssh://git@example.com/repo.git", "ssh://git@example.com/repo.git"),
    ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
    ("https://example.com/org/repo.git", "https://example.com/org/repo.git"),
    ("/home/alice/repo", "/home/alice/repo"),
])  # fmt: skip
def test_urls_are_stored_without_credentials(given: str, stored: str) -> None:
    assert redact(given) == stored


@pytest.mark.parametrize(("message", "shown"), [
    ("unable to access 'https://alice:t0ken@example.com/repo/': Could not resolve host",
     "unable to access 'https://example.com/repo/': Could not resolve host"),
    ("could not read Password for 'https://t0ken@example.com': terminal prompts disabled",
     "could not read Password for 'https://example.com': terminal prompts disabled"),
    ("from http://a:b@one.example/x and https://c@two.example", "from http://one.example/x and https://two.example"),
    ("repository 'https://example.com/repo/' not found", "repository 'https://example.com/repo/' not found"),
])  # fmt: skip
def test_messages_lose_the_credentials_of_urls(message: str, shown: str) -> None:
    assert scrub(message) == shown


def test_file_url_credentials_never_reach_a_file_or_a_message(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("one", {"lib.py": LIB})
    repo.commit("two", {"lib.py": LIB.replace("* 2", "+ x")})
    out = tmp_path / "out"
    url = f"file://user:secret-k3y@{repo.path}"
    first = extract(histeg, url, out, "--json")
    assert first.code == 0, first.stderr
    assert validate_output(out / "history.json")["repository"]["location"] == repo.path.as_uri()
    assert_secret_absent("secret-k3y", out, first)
    # a mirror that kept the credentials (as an older histeg wrote it) loses them on the next run, which fetches
    raw_git(repo, "--git-dir", str(out / MIRROR_DIR), "config", "remote.origin.url", url)
    newest = repo.commit("three", {"lib.py": LIB})
    again = extract(histeg, url, out, "--json")
    assert again.code == 0, again.stderr
    assert newest in again.stdout
    assert_secret_absent("secret-k3y", out, again)
    missing = extract(histeg, f"file://user:secret-k3y@{tmp_path / 'missing'}", tmp_path / "other")
    assert_one_line_error(missing, "cannot read repository file://")
    assert_secret_absent("secret-k3y", tmp_path, missing)


class _AuthenticatedFiles(http.server.SimpleHTTPRequestHandler):
    """Serves a folder over git's dumb HTTP protocol to one user and password, noting every Authorization header."""

    expected = ""
    seen: list[str | None]

    def do_GET(self) -> None:
        header = self.headers.get("Authorization")
        self.seen.append(header)
        if header != self.expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="histeg test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def served(folder: Path, user: str, password: str) -> Iterator[tuple[int, list[str | None]]]:
    seen: list[str | None] = []
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    handler = type("Handler", (_AuthenticatedFiles,), {"expected": expected, "seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def test_http_credentials_reach_git_through_its_environment_only(make_repo, histeg, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo()
    repo.commit("one", {"lib.py": LIB})
    repo.commit("two", {"lib.py": LIB.replace("* 2", "+ x")})
    served_dir = tmp_path / "served"
    bare = served_dir / "project.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
    repo.git("--git-dir", str(bare), "update-server-info")
    credential_store = tmp_path / "credential-store"
    user_config = tmp_path / "gitconfig"
    user_config.write_text(f"[credential]\n\thelper = store --file {credential_store}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))  # the user's own helper would store what it is given
    for proxy in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    out = tmp_path / "out"
    with served(served_dir, "alice", "s3cret-t0ken") as (port, seen):
        first = extract(histeg, f"http://alice:s3cret-t0ken@127.0.0.1:{port}/project.git", out, "--json")
        assert first.code == 0, first.stderr
        assert f"Basic {base64.b64encode(b'alice:s3cret-t0ken').decode()}" in seen
        assert validate_output(out / "history.json")["repository"]["location"] == f"http://127.0.0.1:{port}/project.git"
        newest = repo.commit("three", {"lib.py": LIB})
        repo.git("--git-dir", str(bare), "fetch", "-q", str(repo.path), "main:main")
        repo.git("--git-dir", str(bare), "update-server-info")
        again = extract(histeg, f"http://alice:s3cret-t0ken@127.0.0.1:{port}/project.git", out, "--json")
        assert again.code == 0, again.stderr
        assert newest in again.stdout
        before = results(out)
        wrong = extract(histeg, f"http://wr0ng-t0ken@127.0.0.1:{port}/project.git", out)
        assert_one_line_error(wrong, f"http://127.0.0.1:{port}/project.git")
    assert_secret_absent("s3cret-t0ken", out, first, again)
    assert_secret_absent("wr0ng-t0ken", out, wrong)
    assert not credential_store.exists()
    assert results(out) == before


def test_snapshot_files_are_private(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("one", {"lib.py": LIB, "run.sh": "#!/bin/sh\necho hi\n", "data/table.csv": "a,b\n"})
    os.chmod(repo.path / "run.sh", 0o755)
    repo.commit("executable")
    out = tmp_path / "out"
    assert extract(histeg, repo, out).code == 0
    snapshot = out / "1" / "snapshot"
    modes = {path: stat.S_IMODE((snapshot / path).stat().st_mode) for path in files_under(snapshot)}
    assert modes == {"lib.py": 0o600, "run.sh": 0o700, "data/table.csv": 0o600}


# --- file names ------------------------------------------------------------------------------------

def test_any_file_name_git_accepts_is_extracted_or_skipped(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("plain", {"lib.py": LIB})
    out = tmp_path / "out"
    assert extract(histeg, repo, out).code == 0
    first = files_under(out / "0")
    repo.commit("odd names", {
        os.fsdecode(b"caf\xe9.py"): "X = 1\n", os.fsdecode(b"data/na\xefve.txt"): "data\n",
        "new\nline.py": "Y = 2\n", 'quo"te\'s.py': "Z = 3\n", "-leading-dash.py": "W = 4\n", "tab\there.txt": "t\n",
    })  # fmt: skip
    long_name = "l" * 300 + ".py"
    head_tree = raw_git(repo, "rev-parse", "HEAD^{tree}")
    listing = raw_git(repo, "ls-tree", "-z", head_tree).split(b"\0")
    entries = [(line.split(b" ")[0].decode(), line.split(b"\t", 1)[1], line.split(b" ")[2].split(b"\t")[0]) for line in listing if line]
    commit_tree(repo, tree(repo, [*entries, ("100644", long_name.encode(), blob(repo, b"V = 5\n"))]), "a name too long to write")
    result = extract(histeg, repo, out, "--json")
    assert result.code == 0, result.stderr
    assert files_under(out / "0") == first  # earlier results intact
    snapshot = out / "2" / "snapshot"
    for name, content in {"new\nline.py": "Y = 2\n", 'quo"te\'s.py': "Z = 3\n", "-leading-dash.py": "W = 4\n", "tab\there.txt": "t\n"}.items():
        assert (snapshot / name).read_text() == content
    assert skipped(out, 2) == {
        "caf\\xe9.py": "file name is not valid UTF-8",
        "data/na\\xefve.txt": "file name is not valid UTF-8",
        long_name: "cannot be written: File name too long",
    }
    assert not any(os.fsencode(name).endswith((b"caf\xe9.py", b"na\xefve.txt")) for name in files_under(snapshot))
    recorded = changes(out, 1)
    assert {"caf\\xe9.py", "data/na\\xefve.txt", "new\nline.py", 'quo"te\'s.py', "-leading-dash.py"} <= recorded.keys()
    assert recorded["caf\\xe9.py"]["python"] is True
    assert changes(out, 2)[long_name]["type"] == "added"


def test_crafted_tree_entries_never_leave_the_snapshot(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("plain", {"lib.py": LIB})
    content = blob(repo, b"ESCAPED = True\n")
    hooks = tree(repo, [("100755", b"post-checkout", blob(repo, b"#!/bin/sh\ntouch pwned\n"))])
    dot_git = tree(repo, [("100644", b"config", blob(repo, b"[core]\n\tbare = false\n")), ("040000", b"hooks", hooks)])
    up = tree(repo, [("100644", b"escaped.py", content)])
    commit_tree(repo, tree(repo, [("100644", b"lib.py", blob(repo, LIB.encode())), ("040000", b"..", up), ("040000", b".git", dot_git),
                                  ("040000", b".GIT", dot_git)]), "crafted")
    out = tmp_path / "out"
    result = extract(histeg, repo, out)
    assert result.code == 0, result.stderr
    assert not list(tmp_path.rglob("escaped.py"))
    assert sorted(files_under(out / "1" / "snapshot")) == ["lib.py"]
    assert skipped(out, 1) == {
        "../escaped.py": "path would be written outside the snapshot",
        ".git/config": "a .git entry would make the snapshot a git repository",
        ".git/hooks/post-checkout": "a .git entry would make the snapshot a git repository",
        ".GIT/config": "a .git entry would make the snapshot a git repository",
        ".GIT/hooks/post-checkout": "a .git entry would make the snapshot a git repository",
    }


# --- symbolic links --------------------------------------------------------------------------------

def test_symbolic_links_are_never_followed_out_or_around(make_repo, histeg, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = 1\n")
    repo = make_repo()
    repo.commit("plain", {"pkg/real.py": LIB, "pkg/__init__.py": ""})
    links = {
        "pkg/a.py": "b.py", "pkg/b.py": "a.py", "pkg/self.py": "self.py",  # loops
        "passwd.py": "/etc/passwd", "outdir": str(outside), "up": "../../outside", "pkg/deep.py": "../../../outside/secret.py",
        "chain.py": "passwd.py", "chain2.py": "pkg/hop", "pkg/hop": "../up",  # chains that end outside
        "inner.py": "pkg/real.py", "pkg2": "pkg", "dangling.py": "pkg/not-there.py",  # stay inside: kept
    }
    for name, target in links.items():
        (repo.path / name).symlink_to(target)
    repo.commit("links")
    out = tmp_path / "out"
    result = extract(histeg, repo, out)
    assert result.code == 0, result.stderr
    assert skipped(out, 1) == {
        "pkg/a.py": "symbolic link loop",
        "pkg/b.py": "symbolic link loop",
        "pkg/self.py": "symbolic link loop",
        "passwd.py": "symbolic link to /etc/passwd leaves the snapshot",
        "outdir": f"symbolic link to {outside} leaves the snapshot",
        "up": "symbolic link to ../../outside leaves the snapshot",
        "pkg/deep.py": "symbolic link to ../../../outside/secret.py leaves the snapshot",
        "chain.py": "symbolic link resolves outside the snapshot",
        "chain2.py": "symbolic link resolves outside the snapshot",
        "pkg/hop": "symbolic link resolves outside the snapshot",
    }
    snapshot = out / "1" / "snapshot"
    assert (snapshot / "inner.py").read_text() == LIB
    assert (snapshot / "pkg2" / "real.py").read_text() == LIB
    assert (snapshot / "dangling.py").is_symlink()
    for name in skipped(out, 1):
        assert not (snapshot / name).is_symlink() and not (snapshot / name).exists()


def test_the_reading_side_never_follows_a_link_out_of_a_snapshot(make_repo, histeg, tmp_path: Path) -> None:
    """Syntax analysis and the function table read snapshots through one gate, even a snapshot altered after extraction."""
    outside = tmp_path / "outside.py"
    outside.write_text("def leaked():\n    return 1\n")
    repo = make_repo()
    repo.commit("one", {"lib.py": LIB, "loop.py": "A = 1\n", "far.py": "B = 1\n"})
    repo.commit("two", {"lib.py": LIB.replace("* 2", "+ x"), "loop.py": "A = 2\n", "far.py": "B = 2\n"})
    out = tmp_path / "out"
    assert extract(histeg, repo, out).code == 0
    snapshot = out / "1" / "snapshot"
    (snapshot / "far.py").unlink()
    (snapshot / "far.py").symlink_to(outside)
    (snapshot / "loop.py").unlink()
    (snapshot / "loop.py").symlink_to("loop.py")
    store = OutputStore(out)
    table = read_function_table(snapshot, store.version(1).settings)
    assert {s.file: s.reason for s in table.skipped} == {"loop.py": "symbolic link loop"}
    assert {r.module for r in table.records} == {"lib"}  # far.py resolves outside the analysed folders: not even listed
    files = {f["newPath"]: f for f in validate_output(analyze_version(store, 1))["files"]}
    assert files["far.py"]["message"] == "not compared: symbolic link resolves outside the snapshot"
    assert files["loop.py"]["message"] == "not compared: symbolic link loop"
    assert files["far.py"]["changes"] == [] and files["loop.py"]["changes"] == []
    assert files["lib.py"]["changes"]


# --- content that is not source ---------------------------------------------------------------------

def test_lfs_pointers_and_binary_files_are_recorded_and_skipped(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("plain", {"lib.py": LIB})
    repo.commit("content", {
        "model.py": LFS_POINTER, "data/weights.bin": LFS_POINTER, "nul.py": b"X = 1\0\xff\n",
        "image.png": b"\x89PNG\r\n\x1a\n\0\0\0", "mentions_lfs.py": f"TEXT = {LFS_POINTER!r}\n",
    })  # fmt: skip
    out = tmp_path / "out"
    result = extract(histeg, repo, out)
    assert result.code == 0, result.stderr
    assert skipped(out, 1) == {"model.py": LFS_REASON, "data/weights.bin": LFS_REASON}
    recorded = changes(out, 1)
    assert (recorded["nul.py"]["binary"], recorded["image.png"]["binary"], recorded["model.py"]["binary"]) == (True, True, False)
    snapshot = out / "1" / "snapshot"
    assert (snapshot / "nul.py").read_bytes() == b"X = 1\0\xff\n"
    assert (snapshot / "mentions_lfs.py").is_file()
    assert not (snapshot / "model.py").exists() and not (snapshot / "data" / "weights.bin").exists()


def odd_content(repo: GitRepo) -> None:
    """One commit of everything that is not analysable source."""
    for name, target in {"loop.py": "loop2.py", "loop2.py": "loop.py", "passwd.py": "/etc/passwd"}.items():
        (repo.path / name).symlink_to(target)
    repo.commit("odd content", {
        "lib.py": LIB.replace("* 2", "+ x"), "model.py": LFS_POINTER, "nul.py": b"def f():\0\n", os.fsdecode(b"caf\xe9.py"): "C = 1\n",
    })  # fmt: skip


NOT_COMPARED = {
    "lib.py": None,
    "model.py": f"not compared: {LFS_REASON}",
    "nul.py": "not compared: binary file",
    "caf\\xe9.py": "not compared: file name is not valid UTF-8",
    "loop.py": "not compared: symbolic link loop",
    "loop2.py": "not compared: symbolic link loop",
    "passwd.py": "not compared: symbolic link to /etc/passwd leaves the snapshot",
}


def test_syntax_and_functions_skip_what_is_not_source_with_a_reason(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB})
    odd_content(repo)
    out = tmp_path / "out"
    assert extract(histeg, repo, out).code == 0
    store = OutputStore(out)
    files = validate_output(analyze_version(store, 1))["files"]
    assert {f["newPath"]: f["message"] for f in files} == NOT_COMPARED
    assert all(f["changes"] == [] for f in files if f["message"] is not None)
    table = read_function_table(store.snapshot(1), store.version(1).settings)
    assert {s.file: s.reason for s in table.skipped} == {"nul.py": "binary file: it contains NUL bytes"}  # the rest is not in the snapshot
    assert {r.module for r in table.records} == {"lib"}


@pytest.mark.slow
def test_compute_lists_what_it_cannot_analyse_and_never_targets_it(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    odd_content(repo)
    out = tmp_path / "out"
    result = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["failedVersions"] == []
    messages = {f["newPath"]: f["message"] for f in validate_output(out / "1" / "syntaxChanges.json")["files"]}
    assert messages == NOT_COMPARED
    functions = validate_output(out / "1" / "functions.json")
    assert {f["module"] for f in functions["functions"]} == {"lib", "tests.test_lib"}
    assert "nul.py" in {s["file"] for s in functions["skippedFiles"]}
    targets = validate_output(out / "1" / "testingTargets.json")["targets"]
    assert {t["module"] for t in targets} == {"lib"}


# --- history metadata ------------------------------------------------------------------------------

def test_branch_and_commit_metadata_that_are_not_utf8(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("plain", {"lib.py": LIB})
    root = raw_git(repo, "rev-parse", "HEAD^{tree}")
    header = (b"tree " + root + b"\nparent " + raw_git(repo, "rev-parse", "HEAD") + b"\n"
              b"author Jos\xe9 <jose@example.org> 1700000000 +0000\ncommitter Jos\xe9 <jose@example.org> 1700000000 +0000\n"
              b"encoding no-such-encoding\n\ncaf\xe9 \xff\n")
    odd = raw_git(repo, "hash-object", "-t", "commit", "-w", "--stdin", "--literally", stdin=header).decode()
    raw_git(repo, "update-ref", b"refs/heads/caf\xe9", odd)
    raw_git(repo, "symbolic-ref", "HEAD", b"refs/heads/caf\xe9")
    out = tmp_path / "out"
    result = extract(histeg, repo, out, "--versions", "HEAD", "--json")
    assert result.code == 0, result.stderr
    history = validate_output(out / "history.json")
    assert history["repository"]["branch"] == "HEAD"
    assert history["commits"][-1]["identifier"] == odd
    assert history["commits"][-1]["author"].startswith("Jos")
    assert validate_output(out / "1" / "version.json")["identifier"] == odd
