"""The function table against what CPython itself reports for the same files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from histeg.records.statics import Functions, SkippedFile
from histeg.statics.export import export_static_facts
from histeg.statics.functions import read_function_table
from histeg.store import FUNCTIONS
from tests.conftest import validate_output
from tests.statics.versions import make_version

SHAPES = '''
import functools
import contextlib


def plain():
    return 1


@functools.lru_cache(
    maxsize=None,
)
@staticmethod
def decorated(x):
    return x


async def coroutine():
    async def inner():
        return 2

    return inner


def generator():
    yield 1


class Outer:
    attr = [i for i in range(3)]

    @property
    def prop(self):
        return 1

    @prop.setter
    def prop(self, value):
        pass

    class Inner:
        def method(self):
            def helper():
                class Local:
                    def m(self):
                        return [lambda: 0 for _ in range(1)]

                return Local

            return helper

    def __repr__(self):
        return "Outer()"

    def __private(self):
        def __nested():
            pass

        return __nested


def uses_global():
    global later

    def later():
        pass

    class Cg:
        global gm

        def gm(self):
            pass

    return Cg


def generic[T](x: T) -> T:
    def inner() -> T:
        return x

    return inner()


class Box[T]:
    def get(self) -> T:
        raise NotImplementedError


if len(__name__) > 0:
    def conditional():
        return 1
else:
    def conditional():
        return 2

try:
    def in_try():
        pass
except Exception:
    pass

with contextlib.suppress(Exception):
    def in_with():
        pass

match 1:
    case 1:
        def in_match():
            pass

lam = lambda: (lambda: 0)
gen = (x for x in range(3))


def with_lambda_default(f=lambda: 1):
    return f


@functools.total_ordering
class Ordered:
    def __lt__(self, other):
        return True

    def __eq__(self, other):
        return True
'''

PACKAGE_INIT = '''
"""A package whose __init__ defines code too."""


def from_init():
    return 0
'''

DEEP = '''
class Deep:
    @classmethod
    def make(cls):
        return cls()
'''

TEST_SHAPES = '''
from pkg.shapes import plain


def test_plain():
    assert plain() == 1


class TestGroup:
    def test_method(self):
        def local_check():
            return True

        assert local_check()
'''

# Compiles every file the way the import system finds it and lists every named code object.
CPYTHON_PROBE = r"""
import importlib, importlib.util, json, sys
found = []
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    origin = importlib.util.find_spec(name).origin
    assert module.__file__ == origin, (module.__file__, origin)
    with open(origin, "rb") as handle:
        code = compile(handle.read(), origin, "exec")
    stack = [code]
    while stack:
        current = stack.pop()
        stack.extend(c for c in current.co_consts if hasattr(c, "co_qualname"))
        if current.co_name.startswith("<") and current.co_name != "<module>":
            continue  # lambdas, generator expressions, annotation scopes of generics
        qualname = "" if current.co_name == "<module>" else current.co_qualname
        found.append([f"{name}:{qualname}", current.co_firstlineno])
print(json.dumps(found))
"""

FILES = {
    "src/pkg/__init__.py": PACKAGE_INIT,
    "src/pkg/shapes.py": SHAPES,
    "src/pkg/sub/__init__.py": "",
    "src/pkg/sub/deep.py": DEEP,
    "tests/test_shapes.py": TEST_SHAPES,
}


def _cpython_code_objects(snapshot: Path, modules: list[str]) -> Counter[tuple[str, int]]:
    result = subprocess.run(
        [sys.executable, "-c", CPYTHON_PROBE, *modules],
        capture_output=True, text=True, check=True, cwd=snapshot,
        env={"PYTHONPATH": f"{snapshot / 'src'}:{snapshot}", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return Counter((ident, line) for ident, line in json.loads(result.stdout))


def test_identifiers_and_first_lines_match_cpython(tmp_path: Path) -> None:
    store = make_version(tmp_path, FILES, ignore_functions=())
    settings = store.version(0).settings
    table = read_function_table(store.snapshot(0), settings)
    ours = Counter((r.identifier, r.first_line) for r in table.records)
    modules = sorted({r.module for r in table.records})
    assert modules == ["pkg", "pkg.shapes", "pkg.sub", "pkg.sub.deep", "tests.test_shapes"]
    assert ours == _cpython_code_objects(store.snapshot(0), modules)
    assert table.skipped == []


def test_record_fields(tmp_path: Path) -> None:
    store = make_version(tmp_path, FILES)
    export_static_facts(store, 0)
    data = validate_output(store.file(0, FUNCTIONS))
    by_id = {}
    for entry in data["functions"]:
        by_id.setdefault(entry["identifier"], []).append(entry)
    [decorated] = by_id["pkg.shapes:decorated"]
    assert decorated["kind"] == "function"
    assert (decorated["firstLine"], decorated["defLine"], decorated["lastLine"]) == (9, 13, 14)
    assert decorated["decorators"] == ["functools.lru_cache(maxsize=None)", "staticmethod"]
    [inner] = by_id["pkg.shapes:coroutine.<locals>.inner"]
    assert inner["async"] is True and inner["kind"] == "function"
    assert [e["kind"] for e in by_id["pkg.shapes:Outer.prop"]] == ["method", "method"]
    assert by_id["pkg.shapes:Outer.Inner.method.<locals>.helper.<locals>.Local"][0]["kind"] == "class"
    [module] = by_id["pkg.shapes:"]
    assert module["kind"] == "module" and module["firstLine"] == 1
    assert module["lastLine"] == len(SHAPES.strip("\n").splitlines())
    assert by_id["tests.test_shapes:TestGroup.test_method"][0]["file"] == "tests/test_shapes.py"
    # the default ignored names are left out of the table
    assert "pkg.shapes:Outer.__repr__" not in by_id and "pkg.shapes:Ordered.__eq__" not in by_id
    assert "pkg.shapes:Ordered.__lt__" in by_id


def test_ignore_settings_and_unparsable_files(tmp_path: Path) -> None:
    files = {
        "src/app/core.py": "def run():\n    return helper()\n\n\ndef helper():\n    return 1\n\n\ndef skipme():\n    pass\n",
        "src/app/core_generated.py": "def generated():\n    pass\n",
        "src/app/vendor/lib.py": "def vendored():\n    pass\n",
        "src/app/legacy_api.py": "def old():\n    pass\n",
        "src/app/broken.py": "def broken(:\n    pass\n",
        "src/app/.hidden/secret.py": "def secret():\n    pass\n",
        "tests/test_core.py": "from app.core import run\n\n\ndef test_run():\n    assert run() == 1\n",
        "docs/conf.py": "project = 'outside sources and tests'\n",
    }
    store = make_version(
        tmp_path,
        files,
        ignore_prefixes=("app.legacy",),
        ignore_suffixes=("_generated",),
        ignore_directories=("src/app/vendor",),
        ignore_functions=("skipme",),
    )
    export_static_facts(store, 0)
    data = validate_output(store.file(0, FUNCTIONS))
    identifiers = [entry["identifier"] for entry in data["functions"]]
    assert identifiers == [
        "app.core:", "app.core:run", "app.core:helper",
        "tests.test_core:", "tests.test_core:test_run",
    ]
    assert data["skippedFiles"] == [{"file": "src/app/broken.py", "reason": "syntax error at line 1: invalid syntax"}]
    record = Functions.read(store.file(0, FUNCTIONS))
    assert [f.identifier for f in record.functions] == identifiers
    assert record.skipped_files == [SkippedFile(file="src/app/broken.py", reason="syntax error at line 1: invalid syntax")]
