"""What a test can observe is recorded and compared: dates by value, secrets as keyed digests that never reach a file.

One real history, computed by the real command line under the real tracer:
version 1 makes a date formatter named like a lexer's token method off by one
(a test fails); version 2 changes a password that only ever exists at run time.
"""

from __future__ import annotations

import lzma
from pathlib import Path
from typing import Any

import pytest

from histeg.traces.reader import TraceFile
from tests.conftest import GitRepo, run_histeg, validate_output

FORMATTER = '''import datetime


class Formatter:
    def _format_token(self, day, token):
        if token == "DDDD":
            return f"{day.timetuple().tm_yday:03d}"
        return day.isoformat()

    def format(self, day, pattern):
        return "".join(self._format_token(day, token) for token in pattern.split())


def next_day(day):
    return day + datetime.timedelta(days=1)
'''
VAULT = '''PASSWORD = "-".join(["pa55", "w0rd", "v1"])
API_TOKEN = "-".join(["tk", "9f8e7d"])


class Client:
    def __init__(self, url, api_token):
        self.url = url
        self.api_token = api_token


def dsn(password):
    return "postgres://ada:" + password + "@db.example.org/app"


def connect(password=PASSWORD, api_token=API_TOKEN):
    client = Client(dsn(password), api_token)
    return {"client": client, "auth_token": api_token, "url": client.url}
'''
TESTS = '''import datetime

from formatter import Formatter, next_day
from vault import connect


def test_day_of_year():
    assert Formatter().format(datetime.date(2024, 2, 1), "DDDD") == "032"


def test_next_day():
    assert next_day(datetime.date(2024, 2, 1)) == datetime.date(2024, 2, 2)


def test_connect():
    assert connect()["url"].startswith("postgres://ada:")
'''
SECRETS = ("pa55-w0rd-v1", "pa55-w0rd-v2", "tk-9f8e7d")


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("seen")
    repo = GitRepo.create(root / "repo")
    repo.commit("base", {"formatter.py": FORMATTER, "vault.py": VAULT, "tests/test_all.py": TESTS})
    repo.commit("day of year off by one", {"formatter.py": FORMATTER.replace("tm_yday:03d", "tm_yday + 1:03d")})
    repo.commit("new password", {"vault.py": VAULT.replace('"v1"', '"v2"')})
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(root / "out"), "--repeat", "1")
    assert result.code == 0, result.stderr
    return root / "out"


def _targets(out: Path, index: int) -> list[dict[str, Any]]:
    return validate_output(out / str(index) / "testingTargets.json")["targets"]


def test_a_method_named_like_a_token_is_compared_and_charged_first(out: Path) -> None:
    targets = _targets(out, 1)
    first = targets[0]
    assert first["identifier"] == "formatter:Formatter._format_token"
    returned = [d for d in first["localDivergences"] if d["function"] == "formatter:Formatter._format_token"]
    assert returned, first  # its own return value diverged: '033' against '032'


def test_a_changed_secret_diverges_as_a_digest(out: Path) -> None:
    document = validate_output(out / "2" / "traceDivergences.json")
    text = (out / "2" / "traceDivergences.json").read_text(encoding="utf-8")
    assert "<redacted #" in text and "vault:dsn" in text
    assert document
    identifiers = [target["identifier"] for target in _targets(out, 2)]
    assert "vault:PASSWORD" in identifiers[:3], identifiers


def _texts(path: Path) -> list[bytes]:
    """A file's bytes, and for a trace the value texts it defines and its compressed sections unpacked."""
    data = path.read_bytes()
    found = [data]
    if path.suffix == ".htrace":
        definitions = TraceFile(path).definitions
        found += [str(definitions.values.get(i)).encode() for i in range(1, definitions.values.last + 1)]
        start = data.find(b"\xfd7zXZ")
        while start >= 0:
            try:
                found.append(lzma.LZMADecompressor().decompress(data[start:]))
            except lzma.LZMAError:
                pass
            start = data.find(b"\xfd7zXZ", start + 1)
    return found


def test_no_secret_reaches_any_file(out: Path) -> None:
    files = [path for path in out.rglob("*") if path.is_file() and not path.is_symlink()]
    assert any(path.suffix == ".htrace" for path in files)
    for path in files:
        for text in _texts(path):
            for secret in SECRETS:
                assert secret.encode() not in text, f"{secret} in {path.relative_to(out)}"
    key = out / ".redaction.key"
    assert key.stat().st_mode & 0o777 == 0o600
