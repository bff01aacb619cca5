"""What an install is keyed by: the files a pure-Python build reads, followed through each backend's dynamic metadata,
``setup.cfg`` directives and declarative ``setup.py`` scripts; None wherever the build may read more."""

from __future__ import annotations

from pathlib import Path

import pytest

from histeg.envs.declarations import read_declarations
from histeg.envs.install_reuse import install_key

HATCH = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n[project]\nname = "pkg"\ndynamic = ["version"]\n'
SETUPTOOLS = (
    '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "pkg"\ndynamic = ["version"]\n'
)
FLIT = '[build-system]\nrequires = ["flit_core"]\nbuild-backend = "flit_core.buildapi"\n[project]\nname = "pkg"\ndynamic = ["version", "description"]\n'
PDM = '[build-system]\nrequires = ["pdm-backend"]\nbuild-backend = "pdm.backend"\n[project]\nname = "pkg"\ndynamic = ["version"]\n'
INIT = '"""A package."""\n__version__ = "1.0"\n\n\ndef area(w, h):\n    return w * h\n'
COMPUTED = 'VERSION = (1, 0)\n__version__ = ".".join(map(str, VERSION))\n'
SHIM = "from setuptools import setup\n\nsetup()\n"
DECLARATIVE = (
    "import io\nfrom setuptools import find_packages, setup\n\n"
    "with open('README.rst', encoding='utf-8') as handle:\n    long_description = handle.read()\n\n"
    "setup(name='pkg', version='1.0', long_description=long_description + io.open('CHANGES.rst').read(),\n"
    "      packages=find_packages(exclude=['tests']), scripts=['bin/tool.py'], url='https://example.org/CHANGES')\n"
)


def _project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _key(root: Path) -> str | None:
    return install_key(root, "python3.12", read_declarations(root))


def _keys_after(root: Path, changes: dict[str, str]) -> tuple[str | None, str | None]:
    before = _key(root)
    _project(root, changes)
    return before, _key(root)


CASES = {
    "hatch path": (
        {
            "pyproject.toml": HATCH
            + '[project.urls]\nChangelog = "https://example.org/blob/main/CHANGES"\n[tool.hatch.version]\npath = "src/pkg/__init__.py"\n',
            "src/pkg/__init__.py": INIT,
        },
        "src/pkg/__init__.py",
    ),
    "setuptools attr, src layout": (
        {"pyproject.toml": SETUPTOOLS + '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__"}\n', "src/pkg/__init__.py": INIT},
        "src/pkg/__init__.py",
    ),
    "setuptools attr, package-dir": (
        {
            "pyproject.toml": SETUPTOOLS
            + '[tool.setuptools]\npackage-dir = {"" = "lib"}\n[tool.setuptools.dynamic]\nversion = {attr = "pkg.about.__version__"}\n',
            "lib/pkg/__init__.py": "",
            "lib/pkg/about.py": INIT,
        },
        "lib/pkg/about.py",
    ),
    "setuptools file": (
        {
            "pyproject.toml": SETUPTOOLS + '[tool.setuptools.dynamic]\nversion = {file = "pkg/VERSION"}\n',
            "pkg/VERSION": "1.0\n",
            "pkg/__init__.py": "",
        },
        "pkg/VERSION",
    ),
    "flit module": ({"pyproject.toml": FLIT, "pkg.py": INIT}, "pkg.py"),
    "pdm file": (
        {"pyproject.toml": PDM + '[tool.pdm.version]\nsource = "file"\npath = "pkg/__init__.py"\n', "pkg/__init__.py": INIT},
        "pkg/__init__.py",
    ),
    "setup.cfg attr": (
        {
            "setup.cfg": "[metadata]\nname = pkg\nversion = attr: pkg.__version__\n[options]\npackage_dir =\n    =src\n",
            "setup.py": SHIM,
            "src/pkg/__init__.py": INIT,
        },
        "src/pkg/__init__.py",
    ),
    "declarative setup.py": (
        {"setup.py": DECLARATIVE, "README.rst": "pkg\n", "CHANGES.rst": "- one\n", "bin/tool.py": "print(1)\n"},
        "bin/tool.py",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_build_is_keyed_by_the_files_it_reads_and_by_nothing_else(case: str, tmp_path: Path) -> None:
    """The file a version or a script is read from changes the key; a module the build does not read does not."""
    files, read = CASES[case]
    root = _project(tmp_path, {**files, "pkg_other/core.py": "X = 1\n", "CHANGES": "- nothing read\n"})
    before, after = _keys_after(root, {"pkg_other/core.py": "X = 2\n", "CHANGES": "- still nothing read\n"})
    assert before is not None and before == after
    _, changed = _keys_after(root, {read: (root / read).read_text() + "\n# changed\n"})
    assert changed is not None and changed != before


def test_a_declarative_setup_py_is_keyed_by_every_file_it_reads(tmp_path: Path) -> None:
    """A readme read in a ``with`` block, a changelog read inline: both are read by the build (a changelog named only in a
    URL is not)."""
    root = _project(tmp_path, CASES["declarative setup.py"][0])
    for name in ("README.rst", "CHANGES.rst", "setup.py"):
        before, after = _keys_after(root, {name: (root / name).read_text() + "\n"})
        assert before is not None and after is not None and before != after, name


UNKEYED = {
    "hatch code source": {
        "pyproject.toml": HATCH + '[tool.hatch.version]\npath = "pkg/__init__.py"\nsource = "code"\n',
        "pkg/__init__.py": INIT,
    },
    "hatch metadata hook": {
        "pyproject.toml": HATCH + '[tool.hatch.version]\npath = "pkg/__init__.py"\n[tool.hatch.metadata.hooks.custom]\n',
        "pkg/__init__.py": INIT,
    },
    "hatch path missing": {"pyproject.toml": HATCH + '[tool.hatch.version]\npath = "pkg/__init__.py"\n'},
    "setuptools attr computed": {
        "pyproject.toml": SETUPTOOLS + '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__"}\n',
        "pkg/__init__.py": COMPUTED,
    },
    "setuptools attr imported": {
        "pyproject.toml": SETUPTOOLS + '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__"}\n',
        "pkg/__init__.py": "from pkg._version import __version__\n",
        "pkg/_version.py": INIT,
    },
    "setuptools field without directive": {"pyproject.toml": SETUPTOOLS},
    "flit computed version": {"pyproject.toml": FLIT, "pkg.py": COMPUTED},
    "pdm scm": {"pyproject.toml": PDM + '[tool.pdm.version]\nsource = "scm"\n', "pkg/__init__.py": INIT},
    "setup.cfg attr computed": {"setup.cfg": "[metadata]\nname = pkg\nversion = attr: pkg.__version__\n", "pkg/__init__.py": COMPUTED},
    "setup.py computes": {
        "setup.py": "from setuptools import setup\nimport pkg\n\nsetup(name='pkg', version=pkg.__version__)\n",
        "pkg/__init__.py": INIT,
    },
    "setup.py imports the project": {
        "setup.py": "from setuptools import setup\nimport pkg\n\nsetup(name='pkg', version='1.0')\n",
        "pkg/__init__.py": INIT,
    },
    "setup.py loops": {"setup.py": "from setuptools import setup\n\nfor name in ['a']:\n    setup(name=name)\n"},
    "setup.py extension": {
        "setup.py": "from setuptools import Extension, setup\n\nsetup(name='pkg', ext_modules=[Extension('pkg._c', ['c.c'])])\n"
    },
    "setup.py reads a computed path": {
        "setup.py": "import os\nfrom setuptools import setup\n\nsetup(name='pkg', long_description=open(os.environ['README']).read())\n"
    },
    "setup.py without setup call": {"setup.py": "from setuptools import find_packages\n\nPACKAGES = find_packages()\n"},
    "compiling backend": {
        "pyproject.toml": '[build-system]\nrequires = ["maturin"]\nbuild-backend = "maturin"\n[project]\nname = "pkg"\nversion = "1.0"\n'
    },
}


@pytest.mark.parametrize("case", sorted(UNKEYED))
def test_a_build_that_may_read_more_has_no_key(case: str, tmp_path: Path) -> None:
    assert _key(_project(tmp_path, UNKEYED[case])) is None
