"""Each version in its own environment, end to end through the command line: a dependency served from a
local folder, a git-derived version, an interpreter range, the user's interpreter, coverage options
neutralised; histeg's own environment never changes."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from histeg.envs.interpreter import installed, own
from histeg.envs.project import GENERATED_BY_BUILD
from histeg.records.build import EnvironmentMark
from tests.conftest import validate_output

pytestmark = pytest.mark.slow  # each test makes environments with uv and runs real builds

LIB_V1 = "from tinydep import scale\n\n\ndef area(w, h):\n    return scale(w) * h\n"
LIB_V2 = "from tinydep import scale\n\n\ndef area(w, h):\n    return scale(w) * h + 1\n"
TEST = "from lib import area\n\n\ndef test_area():\n    assert area(2, 3) >= 12\n"
PYPROJECT = '[project]\nname = "uses-tinydep"\nversion = "0.1"\nrequires-python = "{python}"\ndependencies = ["tinydep"]\n'


def _wheel(folder: Path, name: str, code: str) -> Path:
    """A real wheel of a one-module package, made without any network."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-1.0.dist-info"
    files = {
        f"{name}/__init__.py": code,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: histeg-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def _freeze() -> str:
    return subprocess.run([sys.executable, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def wheelhouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "wheelhouse"
    _wheel(folder, "tinydep", "def scale(x):\n    return x * 2\n")
    monkeypatch.setenv("UV_FIND_LINKS", str(folder))
    return folder


def test_a_declared_dependency_is_installed_in_the_versions_environment_not_in_histegs(make_repo, histeg, wheelhouse, tmp_path: Path) -> None:
    before = _freeze()
    repo = make_repo()
    repo.commit("one", {"pyproject.toml": PYPROJECT.format(python=">=3.12"), "lib.py": LIB_V1, "tests/test_lib.py": TEST,
                        "tool.py": "import tinydep, sys\nprint('tool', tinydep.scale(2), sys.prefix)\n"})
    repo.commit("two", {"lib.py": LIB_V2})
    out = tmp_path / "out"
    result = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--run", "python tool.py", "--json")
    assert result.code == 0, result.stderr
    builds = [validate_output(out / str(index) / "build.json") for index in (0, 1)]
    assert builds[0]["environment"]["key"] == builds[1]["environment"]["key"], "equal declarations share one environment"
    assert builds[1]["environment"]["created"] is False, "the second version reuses the first one's environment"
    assert "tinydep" in builds[0]["declarations"]["requirements"]
    site = next(Path(builds[0]["environment"]["python"]).parent.parent.glob("lib/python*/site-packages"))
    for module in ("tinydep/__init__.py", "_pytest/python.py"):  # traced runs write no bytecode: it is there from the start
        assert list((site / module).parent.glob(f"__pycache__/{Path(module).stem}.cpython-*.pyc")), module
    runs = validate_output(out / "1" / "runs.json")
    assert {run["outcome"] for run in runs["runs"]} == {"passed"}
    shell_run = next(run for run in runs["runs"] if run["command"]["kind"] == "shell")
    assert shell_run["traces"], "'python' in --run is the version's interpreter, traced"
    targets = validate_output(out / "1" / "testingTargets.json")
    assert targets["targets"][0]["identifier"] == "lib:area"
    assert subprocess.run([sys.executable, "-c", "import tinydep"], capture_output=True).returncode != 0
    assert _freeze() == before


def test_a_git_derived_version_gets_its_describe_string(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("one", {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=64", "setuptools-scm>=8"]\nbuild-backend = "setuptools.build_meta"\n'
                          '[project]\nname = "scmpkg"\ndynamic = ["version"]\n[tool.setuptools_scm]\nversion_file = "src/scmpkg/_version.py"\n',
        "src/scmpkg/__init__.py": "from scmpkg._version import version\n\n\ndef double(x):\n    return x * 2\n",
        "tests/test_scm.py": "import importlib.metadata\nimport scmpkg\n\n\ndef test_version():\n"
                             "    assert scmpkg.version == importlib.metadata.version('scmpkg')\n    assert scmpkg.double(2) == 4\n",
    })
    repo.git("tag", "v1.0.0")
    second = repo.commit("two", {"src/scmpkg/__init__.py": "from scmpkg._version import version\n\n\ndef double(x):\n    return x + x\n"})
    out = tmp_path / "out"
    result = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--json")
    assert result.code == 0, result.stderr
    builds = [validate_output(out / str(index) / "build.json") for index in (0, 1)]
    assert [b["project"]["version"] for b in builds] == ["1.0.0", f"1.0.1.dev1+g{second[:7]}"]
    assert builds[1]["project"]["generated"] == ["src/scmpkg/_version.py"] and builds[1]["declarations"]["scm"] == "setuptools-scm"
    assert builds[1]["project"]["key"] is None and builds[1]["project"]["reusedFrom"] is None  # its version comes from git
    log = (out / "1" / "build.log").read_text()
    assert "uv build --wheel --no-build-isolation" in log and "installed from its source" not in log  # the kept build environment
    assert not (out / "1" / "snapshot" / "src" / "scmpkg" / "_version.py").exists(), "the snapshot stays as extracted"
    runs = validate_output(out / "1" / "runs.json")
    assert {run["outcome"] for run in runs["runs"]} == {"passed"}
    assert not (repo.path / "src" / "scmpkg" / "_version.py").exists() and not repo.git("status", "--porcelain")
    generated = out / "1" / GENERATED_BY_BUILD / "src" / "scmpkg" / "_version.py"
    assert generated.is_file()
    repo.commit("three", {"src/scmpkg/__init__.py": "from scmpkg._version import version\n\n\ndef double(x):\n    return x * 3\n"})
    assert histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1").code == 0  # a failing test is a trace too
    carved = histeg("generate", "2", "--out", str(out), "--carve", "--json")
    assert carved.code == 0, carved.stderr
    assert validate_output(out / "2" / "generation.json")["carved"]["witnesses"] >= 1  # version 1 imports its _version.py
    assert generated.is_file() and (out / "2" / GENERATED_BY_BUILD / "src" / "scmpkg" / "_version.py").is_file(), (
        "histeg generate's generated/ is not the build's"
    )
    shutil.rmtree(out / "1" / GENERATED_BY_BUILD)  # as in a folder made when builds kept them in generated/
    again = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--json")
    assert again.code == 0, again.stderr
    assert generated.is_file(), "a build whose generated files are not where runs copy them from is made again"
    assert {run["outcome"] for run in validate_output(out / "1" / "runs.json")["runs"]} == {"passed"}


def test_requires_python_picks_an_installed_interpreter_that_fits(make_repo, histeg, wheelhouse, tmp_path: Path) -> None:
    current = own()
    other = next((i for i in installed() if i.minor != current.minor), None)
    if other is None:
        pytest.skip("only one Python 3.12+ is installed here")
    repo = make_repo()
    repo.commit("one", {"pyproject.toml": PYPROJECT.format(python=f"=={other.minor}.*"), "lib.py": LIB_V1, "tests/test_lib.py": TEST})
    out = tmp_path / "out"
    result = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--json")
    assert result.code == 0, result.stderr
    build = validate_output(out / "0" / "build.json")
    assert build["environment"]["pythonVersion"].startswith(other.minor + ".")
    assert {run["outcome"] for run in validate_output(out / "0" / "runs.json")["runs"]} == {"passed"}


def test_an_interpreter_range_nothing_fits_fails_the_version_with_a_reason(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("one", {"pyproject.toml": PYPROJECT.format(python=">=3.99"), "lib.py": LIB_V1, "tests/test_lib.py": TEST})
    repo.commit("two", {"pyproject.toml": PYPROJECT.format(python=">=3.99").replace("tinydep", "six")})
    out = tmp_path / "out"
    result = histeg("build", "--repo", str(repo.path), "--all", "--out", str(out))
    assert result.code != 0
    assert "requires-python '>=3.99': no installed interpreter fits" in result.stderr
    build = validate_output(out / "0" / "build.json")
    assert build["status"] == "failed" and "3.99" in build["reason"]


def test_the_users_interpreter_is_used_as_it_is(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("one", {"lib.py": "def f():\n    return 1\n", "tests/test_lib.py": "from lib import f\n\n\ndef test_f():\n    assert f() == 1\n"})
    out = tmp_path / "out"
    result = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--python", sys.executable, "--json")
    assert result.code == 0, result.stderr
    build = validate_output(out / "0" / "build.json")
    assert build["environment"] | {"seconds": 0} == {"python": sys.executable, "pythonVersion": own().version, "key": None, "shared": False,
                                                   "created": False, "seconds": 0}
    bad = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out2"), "--python", str(tmp_path / "nowhere"))
    assert bad.code == 2 and bad.stderr.count("\n") == 1 and "not a Python interpreter" in bad.stderr
    assert not (tmp_path / "out2").exists()
    bare = tmp_path / "bare"  # an environment without pytest
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    missing = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out3"), "--python", str(bare))
    assert missing.code == 2 and missing.stderr.count("\n") == 1 and "pytest is not installed there" in missing.stderr, missing.stderr
    assert not (tmp_path / "out3").exists()


def _neutralised_run(make_repo, histeg, tmp_path: Path, files: dict[str, str], flag: str) -> tuple[Path, dict]:
    """A one-version project analysed: its output folder and its traced run, after checking the build passes ``flag``
    and no other plugin option."""
    repo = make_repo()
    repo.commit("one", files)
    out = tmp_path / "out"
    result = histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--json")
    assert result.code == 0, result.stderr
    build = validate_output(out / "0" / "build.json")
    assert build["pytestArgs"] == [flag] and any(n["how"] == flag for n in build["neutralised"])
    run = validate_output(out / "0" / "runs.json")["runs"][0]
    assert flag in run["argv"]
    return out, run


def test_coverage_options_of_the_project_are_neutralised(make_repo, histeg, tmp_path: Path) -> None:
    out, run = _neutralised_run(make_repo, histeg, tmp_path, {
        "pyproject.toml": '[project]\nname = "covered"\nversion = "0.1"\n[project.optional-dependencies]\ntest = ["pytest-cov"]\n'
                          '[tool.pytest.ini_options]\naddopts = "--cov=lib --cov-report=xml --cov-fail-under=100"\n',
        "lib.py": "def f(x):\n    if x:\n        return 1\n    return 2\n",
        "tests/test_lib.py": "from lib import f\n\n\ndef test_f():\n    assert f(1) == 1\n",
    }, "--no-cov")
    assert run["outcome"] == "passed", "coverage under 100 % would have failed the run"
    assert not list(out.rglob("coverage.xml")) and not list(out.rglob(".coverage"))


def test_benchmarks_run_their_function_once_whatever_the_speed_of_the_run(make_repo, histeg, tmp_path: Path, monkeypatch) -> None:
    """pytest-benchmark calls a function as often as its time budget allows: under tracing less often than without, and
    differently from run to run. Disabled, each benchmark calls it once, as a plain test, and passes as before."""
    counter = tmp_path / "calls"
    monkeypatch.setenv("CALLS", str(counter))
    _, run = _neutralised_run(make_repo, histeg, tmp_path, {
        "pyproject.toml": '[project]\nname = "timed"\nversion = "0.1"\n[project.optional-dependencies]\ntest = ["pytest-benchmark"]\n',
        "lib.py": "import os\n\n\ndef f(x):\n    with open(os.environ['CALLS'], 'a') as handle:\n        handle.write('.')\n    return x\n",
        "tests/test_lib.py": "from lib import f\n\n\ndef test_speed(benchmark):\n    assert benchmark(f, 1) == 1\n",
    }, "--benchmark-disable")
    assert run["outcome"] == "passed"
    assert counter.read_text() == ".", "one call in the one traced run"


def test_traces_are_reused_only_with_the_build_they_were_made_with(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("one", {"lib.py": "def f():\n    return 1\n", "tests/test_lib.py": "from lib import f\n\n\ndef test_f():\n    assert f() == 1\n"})
    args = ["analyze", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), "--repeat", "1", "--json"]

    def traced(*extra: str) -> list[bool]:
        result = histeg(*args, *extra)
        assert result.code == 0, result.stderr
        return [step["reused"] for step in json.loads(result.stdout)["steps"]["traces"]]

    assert traced() == [False]
    assert traced() == [True]
    assert traced("--build", "python -c 'print(1)'") == [False], "another build: another environment, traces made again"
    assert validate_output(tmp_path / "out" / "0" / "runs.json")["build"] == validate_output(tmp_path / "out" / "0" / "build.json")["inputs"]


STATIC = (
    '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
    '[project]\nname = "staticpkg"\nversion = "{version}"\nreadme = "README.md"\n'
    '[project.entry-points."staticpkg.shapes"]\nsquare = "staticpkg:area"\n'
)
STATIC_TEST = (
    "import importlib.metadata\nimport staticpkg\n\n\ndef test_metadata():\n"
    "    assert importlib.metadata.version('staticpkg') == staticpkg.__version__\n"
    "    assert [e.name for e in importlib.metadata.entry_points(group='staticpkg.shapes')] == ['square']\n"
    "    assert staticpkg.area(2, 3) >= 6\n"
)


def test_an_install_that_cannot_differ_is_reused_and_one_that_can_is_made(make_repo, histeg, tmp_path: Path) -> None:
    """A static version and the same root files the build reads: the earlier install is copied (a changelog nothing names
    is not read); a changed readme or version string: built anew."""
    repo = make_repo()
    code = "__version__ = '{version}'\n\n\ndef area(width, height):\n    return width * height{extra}\n"
    repo.commit("one", {
        "pyproject.toml": STATIC.format(version="1.0.0"),
        "README.md": "# staticpkg\n",
        "src/staticpkg/__init__.py": code.format(version="1.0.0", extra=""),
        "tests/test_meta.py": STATIC_TEST,
    })
    repo.commit("two", {"src/staticpkg/__init__.py": code.format(version="1.0.0", extra=" + 0")})
    repo.commit("three", {"src/staticpkg/extra.py": "VALUE = 1\n", "CHANGELOG.md": "- extra\n"})
    repo.commit("four", {"README.md": "# staticpkg\n\nAreas.\n"})
    repo.commit("five", {"pyproject.toml": STATIC.format(version="1.1.0"), "src/staticpkg/__init__.py": code.format(version="1.1.0", extra="")})
    out = tmp_path / "out"
    result = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--json")
    assert result.code == 0, result.stderr
    projects = [validate_output(out / str(index) / "build.json")["project"] for index in range(5)]
    assert [p["reusedFrom"] for p in projects] == [None, 0, 0, None, None]
    assert projects[0]["key"] == projects[1]["key"] == projects[2]["key"] != projects[3]["key"] != projects[4]["key"]
    assert all(p["seconds"] < 0.5 for p in projects[1:3]), projects
    for index in range(5):
        runs = validate_output(out / str(index) / "runs.json")["runs"]
        assert {run["outcome"] for run in runs} == {"passed"}, (index, runs)


ATTRIBUTE_VERSION = (
    '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
    '[project]\nname = "staticpkg"\ndynamic = ["version"]\n'
    '[project.entry-points."staticpkg.shapes"]\nsquare = "staticpkg:area"\n'
    '[tool.setuptools.dynamic]\nversion = {attr = "staticpkg.__version__"}\n'
)


def test_an_install_whose_version_is_read_from_the_package_is_reused_until_that_file_changes(make_repo, histeg, tmp_path: Path) -> None:
    """A version read from the package's ``__init__.py`` (setuptools ``attr``, a ``setup.py`` that only calls ``setup()``):
    a commit elsewhere reuses the install; a new version string in that file makes one, whose metadata says it."""
    repo = make_repo()
    code = "__version__ = '{version}'\n\n\ndef area(width, height):\n    return width * height\n"
    repo.commit("one", {
        "pyproject.toml": ATTRIBUTE_VERSION,
        "setup.py": "from setuptools import setup\n\nsetup()\n",
        "src/staticpkg/__init__.py": code.format(version="1.0.0"),
        "src/staticpkg/shapes.py": "SIDES = 4\n",
        "tests/test_meta.py": STATIC_TEST,
    })
    repo.commit("two", {"src/staticpkg/shapes.py": "SIDES = 5\n"})
    repo.commit("three", {"src/staticpkg/__init__.py": code.format(version="1.1.0")})
    out = tmp_path / "out"
    result = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--json")
    assert result.code == 0, result.stderr
    projects = [validate_output(out / str(index) / "build.json")["project"] for index in range(3)]
    assert [p["reusedFrom"] for p in projects] == [None, 0, None]
    assert projects[0]["key"] == projects[1]["key"] != projects[2]["key"]
    for index in range(3):  # the test compares the installed metadata's version with the package's own
        runs = validate_output(out / str(index) / "runs.json")["runs"]
        assert {run["outcome"] for run in runs} == {"passed"}, (index, runs)


ISOLATED_ONLY = """
import os
import sys

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if os.path.exists(os.path.join(sys.prefix, "MARK")):
        raise RuntimeError("this backend builds in an isolated environment only")
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
"""


def test_a_wheel_the_kept_build_environment_cannot_build_is_installed_from_the_source(make_repo, histeg, tmp_path: Path) -> None:
    """A backend that refuses histeg's build environment (as one asking for more at build time would fail there): the
    version is installed from its source, built in isolation, as it was before build environments were kept."""
    repo = make_repo()
    repo.commit("one", {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "isolated_only"\nbackend-path = ["."]\n'
                          '[project]\nname = "isopkg"\nversion = "1.0"\n',
        "isolated_only.py": ISOLATED_ONLY.replace("MARK", EnvironmentMark.FILE),
        "src/isopkg/__init__.py": "def triple(x):\n    return x * 3\n",
        "tests/test_iso.py": "import importlib.metadata\nimport isopkg\n\n\ndef test_triple():\n"
                             "    assert isopkg.triple(2) == 6 and importlib.metadata.version('isopkg') == '1.0'\n",
    })
    out = tmp_path / "out"
    result = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--json")
    assert result.code == 0, result.stderr
    log = (out / "0" / "build.log").read_text()
    assert "builds in an isolated environment only" in log and "installed from its source" in log
    assert validate_output(out / "0" / "build.json")["status"] == "succeeded"
    assert {run["outcome"] for run in validate_output(out / "0" / "runs.json")["runs"]} == {"passed"}


def test_a_project_on_pytest_6_is_traced_and_re_run_with_its_own_pytest(make_repo, histeg, tmp_path: Path) -> None:
    """pytest before 7 calls ``pytest_ignore_collect`` with ``path``: a plugin naming ``collection_path`` made every traced
    run of such a project stop with an internal error (seen on a real project pinning pytest 6), where untraced it passes."""
    repo = make_repo()
    tests = "from lib import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n\n\ndef test_other():\n    assert area(1, 1) >= 1\n"
    repo.commit("one", {"requirements.txt": "pytest<7\n", "lib.py": "def area(w, h):\n    return w * h\n", "tests/test_lib.py": tests})
    repo.commit("two", {"lib.py": "def area(w, h):\n    return w * h + (w == 1)\n"})  # test_other sees 2, not 1
    out = tmp_path / "out"
    result = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    python = validate_output(out / "1" / "build.json")["environment"]["python"]
    assert subprocess.run([python, "-c", "import pytest, sys; sys.exit(pytest.version_tuple[0] >= 7 if hasattr(pytest, 'version_tuple') else 0)"],
                          check=False).returncode == 0, "the environment has pytest 6"
    for index in (0, 1):
        assert {run["outcome"] for run in validate_output(out / str(index) / "runs.json")["runs"]} == {"passed"}
    reruns = [run for batch in validate_output(out / "1" / "confirmations.json")["batches"] for run in batch["runs"]]
    assert reruns and {run["outcome"] for run in reruns} == {"passed"}  # a selection: only the tests' own file collected
