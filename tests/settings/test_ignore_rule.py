"""The one ignore rule the tracer, the function table, the syntax changes and the ranking share."""

from __future__ import annotations

from pathlib import Path
from types import CodeType

import msgspec
import pytest

from histeg.records.history import Version, VersionSettings
from histeg.statics.functions import read_function_table
from histeg.statics.scope import source_files
from histeg.tracing.selection import IgnoreRule, Selector

RULE = IgnoreRule(prefixes=("pkg.vendor",), suffixes=("_pb2",), directories=("./docs/", "src/gen"), functions=("__repr__", "Shop.close"))


@pytest.mark.parametrize(("part", "expected"), [
    pytest.param({"path": "docs/conf.py"}, True, id="under-a-directory"),
    pytest.param({"path": "docsx/conf.py"}, False, id="a-name-that-only-starts-alike"),
    pytest.param({"path": "src/gen/a.py"}, True, id="nested-directory"),
    pytest.param({"path": "src/generated.py"}, False, id="file-beside-the-directory"),
    pytest.param({"module": "pkg.vendor.six"}, True, id="prefix"),
    pytest.param({"module": "pkg.api_pb2"}, True, id="suffix"),
    pytest.param({"module": "pkg.api"}, False, id="kept-module"),
    pytest.param({"qualname": "__repr__"}, True, id="function-by-name"),
    pytest.param({"qualname": "Shop.__repr__"}, True, id="method-by-its-own-name"),
    pytest.param({"qualname": "f.<locals>.__repr__"}, True, id="nested-by-its-own-name"),
    pytest.param({"qualname": "Shop.close"}, True, id="by-qualified-name"),
    pytest.param({"qualname": "Door.close"}, False, id="same-name-other-class"),
    pytest.param({"qualname": "close"}, False, id="bare-name-of-a-qualified-entry"),
    pytest.param({"path": "src/app.py", "module": "app", "qualname": "run"}, False, id="nothing-ignored"),
])
def test_rule(part: dict[str, str], expected: bool) -> None:
    assert RULE.ignores(**part) is expected


def test_the_root_directory_ignores_every_file() -> None:
    assert IgnoreRule(directories=(".",)).ignores(path="any/file.py")


APP = """class Shop:
    def close(self):
        pass

    def __repr__(self):
        return "shop"


class Door:
    def close(self):
        pass


def run():
    return 3
"""


def _code_objects(code: CodeType) -> list[CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found += _code_objects(const)
    return found


def test_the_tracer_and_the_function_table_apply_it_alike(tmp_path: Path) -> None:
    files = {"src/app.py": APP, "src/gen/made.py": "X = 1\n", "src/pkg/vendor/six.py": "X = 1\n", "src/pkg/api_pb2.py": "X = 1\n",
             "src/pkg/__init__.py": "", "docs/conf.py": "X = 1\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    settings = VersionSettings(["src"], ["docs"], ignore=RULE)
    analysed = [f.relpath for f in source_files(tmp_path, settings)]
    assert analysed == ["src/app.py", "src/pkg/__init__.py"]
    selector = Selector(str(tmp_path), ["src"], ["docs"], RULE.prefixes, RULE.suffixes, RULE.directories, RULE.functions)
    assert [name for name in files if selector.module_of(str(tmp_path / name))] == ["src/app.py", "src/pkg/__init__.py"]
    app = tmp_path / "src" / "app.py"
    traced = {found[0] for code in _code_objects(compile(APP, str(app), "exec")) if (found := selector.select(code))}
    listed = {r.identifier for r in read_function_table(tmp_path, settings).records if r.kind in ("function", "method")}
    assert traced == listed == {"app:Door.close", "app:run"}


def test_version_settings_keep_the_rule_through_version_json() -> None:
    settings = VersionSettings(["src"], ["tests"], "make", RULE)
    version = Version(index=0, identifier="a" * 40, short_identifier="a" * 12, author="A", date="2024-01-01T00:00:00+00:00", msg="m",
                      comparing_against_version=None, comparing_against_index=None, skipped_entries=[], git_describe=None, git_commits=1,
                      **settings.fields())
    stored = Version.decode(msgspec.json.encode(version), "version.json")
    assert stored.settings == settings
    assert stored.to_builtins()["ignoredDirectories"] == ["./docs/", "src/gen"]  # as given: the rule cleans them for itself
