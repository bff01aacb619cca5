"""histeg's module layout: imports only sideways or down the layers of ``histeg.layers``, no cycle between folders
or modules, a stdlib-only tracer, a light top-level package.

The import graph is built from the source (``ast``), not by importing it, so
that imports inside functions (lazy imports) count too: they still tie two
modules together, and a cycle hidden in a function body breaks as soon as the
import moves to the top of the file.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import pytest

from histeg.layers import LAYERS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "histeg"
TRACING = "histeg.tracing"

KNOWN_CYCLES: set[tuple[str, ...]] = set()
"""Cycles through modules outside the tracing code, left for their owners to break (each spelled as ``cycles`` spells it)."""

ALLOWED_UPWARD: dict[tuple[str, str], str] = {}
"""Imports up the layers that stay until a redesign under way removes them: (importer, imported) -> why it is still
there. Empty: nothing may be added; an entry whose import is gone makes the test fail until it is removed."""

SHARED_WITH_TRACER = {"histeg.errors", "histeg.naming"}
"""The only histeg modules outside ``histeg.tracing`` it may import: leaves made of the standard library alone."""

THIRD_PARTY_IN_TRACING = {
    "histeg.tracing.pytest_plugin": {"pytest"},
    "histeg.tracing.hook.histeg_zygote": {"pytest"},
    "histeg.tracing.hook.sitecustomize": {"histeg_zygote"},
}
"""The pytest plugin is loaded only by pytest, so it may import pytest; so is the zygote, which the start-up hook
imports as its neighbour on ``PYTHONPATH`` (``histeg_zygote``), only in a zygote."""

READER = "histeg.traces"
"""Reading and sealing traces: histeg's side, never imported by the collector."""
HISTEG_SIDE = {"histeg.errors", "histeg.tracing.activation"}
"""Modules of the tracing code that run in histeg's process only (starting traced runs), besides the reader."""

HEAVY = ("click", "rich", "networkx", "pydriller", "tree_sitter", "Levenshtein", "msgspec", "orjson")


@dataclass
class Imports:
    """What a package's modules import: each other (the graph), and the world outside it."""

    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    outside: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """Module -> top-level names of what it imports from outside the package."""


def module_files(root: Path, package: str = PACKAGE) -> dict[str, Path]:
    """Module name -> file of every importable ``<package>/**/*.py`` (sample projects' files are data, not modules)."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if not all(part.isidentifier() for part in parts):
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def extension_modules(root: Path, package: str = PACKAGE) -> set[str]:
    """Compiled modules (``histeg.tracing._ctracer``): imported like the others, without a ``.py`` file."""
    found = set()
    for pattern in ("*.so", "*.pyd", "*.pyi"):
        for path in (root / package).rglob(pattern):
            parts = path.relative_to(root).parts
            found.add(".".join((*parts[:-1], path.name.partition(".")[0])))
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST, type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports anywhere in the tree (function bodies included); under ``if TYPE_CHECKING:`` only with ``type_checking``."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
        return
    if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_checking:
        children: list[ast.AST] = list(node.orelse)
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from _import_nodes(child, type_checking)


def imported_names(module: str, path: Path, is_package: bool, type_checking: bool = False) -> Iterator[tuple[str, str | None, str]]:
    """(absolute module, imported name or None, the name it is bound to) for each target of each import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in _import_nodes(tree, type_checking):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, alias.asname or alias.name.partition(".")[0]
            continue
        base = node.module or ""
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        for alias in node.names:
            yield base, alias.name, alias.asname or alias.name


def scan(root: Path, package: str = PACKAGE, *, type_checking: bool = False) -> Imports:
    """The import graph of a package's modules, with an edge for each import of one module by another.

    ``type_checking``: imports under ``if TYPE_CHECKING:`` count too. They
    never run, so they make no cycle at import time; but the annotation still
    ties the two modules, so the layers count them.

    ``from pkg import name`` is an edge to ``pkg.name`` when that is a module;
    else, when ``pkg/__init__`` re-exports ``name`` from a module, to that
    module (the re-export is a way to spell it, not a dependency on the
    ``__init__``: ``pkg -> pkg.sub`` for the re-export and ``pkg.sub2 -> pkg``
    for a sibling is no cycle); else to ``pkg`` itself. Importing ``pkg.sub``
    also runs ``pkg/__init__``; that implicit edge is left out for the same
    reason.
    """
    files = module_files(root, package)
    known = set(files) | extension_modules(root, package)
    packages = {name for name, path in files.items() if path.name == "__init__.py"}
    packages |= {name.rpartition(".")[0] for name in known if "." in name}
    listed = {name: list(imported_names(name, path, path.name == "__init__.py", type_checking)) for name, path in files.items()}
    reexports: dict[str, dict[str, str]] = {}

    def target(base: str, name: str | None) -> str:
        if name is not None and f"{base}.{name}" in known | packages:
            return f"{base}.{name}"
        return reexports.get(base, {}).get(name or "", base)

    for name in sorted(packages & set(files), key=lambda n: -n.count(".")):  # deepest first: re-exports of re-exports
        reexports[name] = {bound: target(base, imported) for base, imported, bound in listed[name]
                           if base == package or base.startswith(package + ".")}
    imports = Imports()
    imports.graph.add_nodes_from(files)
    for module, names in listed.items():
        for base, name, _ in names:
            if base != package and not base.startswith(package + "."):
                imports.outside[module].add(base.partition(".")[0])
            elif (found := target(base, name)) != module:
                imports.graph.add_edge(module, found)
    return imports


def cycles(graph: nx.DiGraph) -> list[tuple[str, ...]]:
    """Every simple cycle, as its modules in import order from the smallest name on (one spelling per cycle)."""
    found = []
    for cycle in nx.simple_cycles(graph):
        start = cycle.index(min(cycle))
        found.append(tuple(cycle[start:] + cycle[:start]))
    return sorted(found, key=lambda chain: (len(chain), chain))


def folder(module: str) -> str:
    """A module's name in ``LAYERS``: its folder under the package, else its own name; ``__init__`` for the package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(graph: nx.DiGraph, layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[tuple[str, str]]:
    """(importer, imported) for each import of a module in a higher layer than the importer's."""
    rank = {name: index for index, layer in enumerate(layers) for name in layer}
    return sorted((importer, imported) for importer, imported in graph.edges
                  if folder(importer) in rank and folder(imported) in rank and rank[folder(importer)] < rank[folder(imported)])


def folder_graph(graph: nx.DiGraph) -> nx.DiGraph:
    """The import graph with each folder (and each top-level module) as one node."""
    folders = nx.DiGraph()
    folders.add_nodes_from(folder(module) for module in graph)
    folders.add_edges_from((folder(a), folder(b)) for a, b in graph.edges if folder(a) != folder(b))
    return folders


def layer_problems(imports: Imports, layers: tuple[tuple[str, ...], ...] = LAYERS,
                   allowed: dict[tuple[str, str], str] | None = None) -> list[str]:
    """What breaks the layers: a folder without a layer, an upward import not in ``allowed``, an entry of ``allowed``
    that is no upward import any more (the list only shrinks), and folders that import each other (within a layer:
    any other cycle takes an upward import, reported as such)."""
    allowed = {} if allowed is None else allowed
    named = [name for layer in layers for name in layer]
    folders = {folder(module) for module in imports.graph}
    problems = [f"{name} is in no layer of histeg.layers" for name in sorted(folders - set(named))]
    problems += [f"histeg.layers names {name}, which is no module" for name in named if name not in folders]
    problems += [f"{name} is in two layers of histeg.layers" for name in sorted({n for n in named if named.count(n) > 1})]
    rank = {name: index for index, layer in enumerate(layers) for name in layer}
    upward = upward_imports(imports.graph, layers)
    problems += [f"{importer} (layer {rank[folder(importer)]}) imports {imported} (layer {rank[folder(imported)]}), a higher layer"
                 for importer, imported in upward if (importer, imported) not in allowed]
    problems += [f"allowed upward import {importer} -> {imported} is gone: remove it from the list"
                 for importer, imported in sorted(set(allowed) - set(upward))]
    sideways_and_down = imports.graph.edge_subgraph(set(imports.graph.edges) - set(upward))
    folders_graph = folder_graph(sideways_and_down)  # an upward import is reported above, with the cycle it closes
    for group in sorted(sorted(group) for group in nx.strongly_connected_components(folders_graph) if len(group) > 1):
        ties = sorted(folders_graph.subgraph(group).edges)
        problems.append("folders import each other: " + ", ".join(f"{a} -> {b}" for a, b in ties))
    return problems


@pytest.fixture(scope="module")
def histeg_imports() -> Imports:
    return scan(ROOT)


@pytest.fixture(scope="module")
def histeg_imports_typed() -> Imports:
    """The graph with ``TYPE_CHECKING`` imports: an annotation ties two modules as much as a call does."""
    return scan(ROOT, type_checking=True)


def test_no_import_cycles(histeg_imports: Imports) -> None:
    found = cycles(histeg_imports.graph)
    unknown = [chain for chain in found if chain not in KNOWN_CYCLES]
    assert not unknown, "import cycles:\n" + "\n".join(" -> ".join((*chain, chain[0])) for chain in unknown)
    gone = KNOWN_CYCLES - set(found)
    assert not gone, f"KNOWN_CYCLES lists cycles that are gone, remove them: {sorted(gone)}"


def test_imports_go_sideways_or_down_the_layers(histeg_imports_typed: Imports) -> None:
    problems = layer_problems(histeg_imports_typed, LAYERS, ALLOWED_UPWARD)
    assert not problems, "\n".join(problems)


def test_tracing_imports_only_the_standard_library(histeg_imports: Imports) -> None:
    """The tracer runs inside other people's processes: nothing of histeg's dependencies, nothing of histeg's heavier side."""
    imports = histeg_imports
    stdlib = set(sys.stdlib_module_names)
    problems = []
    for module in sorted(imports.graph):
        if module == TRACING or module.startswith(TRACING + "."):
            problems += [f"{module} imports {target}" for target in sorted(imports.graph.successors(module))
                         if target != TRACING and not target.startswith(TRACING + ".") and target not in SHARED_WITH_TRACER]
            allowed = stdlib | THIRD_PARTY_IN_TRACING.get(module, set())
            problems += [f"{module} imports {name}" for name in sorted(imports.outside[module] - allowed)]
    for module in sorted(SHARED_WITH_TRACER):
        problems += [f"{module}, shared with the tracer, imports {target}" for target in sorted(imports.graph.successors(module))]
        problems += [f"{module}, shared with the tracer, imports {name}" for name in sorted(imports.outside[module] - stdlib)]
    assert not problems, "\n".join(problems)


def test_traced_processes_reach_only_the_writer(histeg_imports: Imports) -> None:
    """What the start-up hook and the pytest plugin can import, lazily or not, stays clear of reading and sealing."""
    graph = histeg_imports.graph
    hooks = [name for name in graph if name.startswith(TRACING + ".hook.")]
    assert hooks
    reached = set().union(*(nx.descendants(graph, name) for name in hooks))
    assert sorted(reached & HISTEG_SIDE) == []
    assert sorted(name for name in reached if name == READER or name.startswith(READER + ".")) == []


def test_the_collector_and_the_reader_are_apart(histeg_imports: Imports) -> None:
    """The reader builds on the collector's format; the collector never reaches the reader (it would load it, and its C
    decoder, into every traced process)."""
    graph = histeg_imports.graph
    collector = [name for name in graph if name == TRACING or name.startswith(TRACING + ".")]
    reader = [name for name in graph if name == READER or name.startswith(READER + ".")]
    assert collector and reader
    assert sorted((a, b) for a in collector for b in graph.successors(a) if b in reader) == []
    assert any(b in collector for a in reader for b in graph.successors(a)), "the reader reads the collector's format"


def _loaded_in_fresh_process(code: str) -> set[str]:
    program = f"import sys\n{code}\nprint('\\n'.join(sys.modules))"
    result = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(result.stdout.split())


def test_importing_histeg_loads_no_heavy_dependency() -> None:
    loaded = _loaded_in_fresh_process("import histeg")
    assert [name for name in HEAVY if name in loaded] == []


def test_tracer_modules_load_only_the_standard_library() -> None:
    """The same rule as imported for real: what the tracer's modules load in a process of their own."""
    names = [name for name in module_files(ROOT) if name.startswith(TRACING + ".") and name not in THIRD_PARTY_IN_TRACING
             and not name.startswith(TRACING + ".hook.")]
    before = _loaded_in_fresh_process("")
    loaded = _loaded_in_fresh_process("\n".join(f"import {name}" for name in names))
    foreign = sorted(name for name in loaded - before if name.partition(".")[0] not in {*sys.stdlib_module_names, PACKAGE})
    assert foreign == []


def _plant(root: Path, module: str, text: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.mark.slow  # runs the layer check over copies of the package (5 s)
def test_layer_check_catches_planted_imports(tmp_path: Path) -> None:
    """The check above on a copy of histeg: clean as it is; then an upward import inside a function, one under
    ``TYPE_CHECKING`` and two folders of one layer importing each other are each reported, and only they."""
    shutil.copytree(ROOT / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("sample_data", "__pycache__", "templates"))
    assert layer_problems(scan(tmp_path, type_checking=True), LAYERS, ALLOWED_UPWARD) == []
    _plant(tmp_path, "histeg.store", "\n\ndef _planted() -> None:\n    from histeg.report import model\n")
    _plant(tmp_path, "histeg.records.base", "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from histeg.impact.ranking import ranked\n")
    _plant(tmp_path, "histeg.statics.scope", "\nimport histeg.syntax.tree\n")
    _plant(tmp_path, "histeg.syntax.tree", "\nfrom ..statics import scope\n")
    planted = scan(tmp_path, type_checking=True)
    rank = {name: index for index, layer in enumerate(LAYERS) for name in layer}
    assert layer_problems(planted, LAYERS, ALLOWED_UPWARD) == [
        f"histeg.records.base (layer {rank['records']}) imports histeg.impact.ranking (layer {rank['impact']}), a higher layer",
        f"histeg.store (layer {rank['store']}) imports histeg.report.model (layer {rank['report']}), a higher layer",
        "folders import each other: statics -> syntax, syntax -> statics",
    ]
    allowed = {**ALLOWED_UPWARD, ("histeg.store", "histeg.report.model"): "planted", ("histeg.store", "histeg.cli"): "never imported"}
    assert layer_problems(planted, LAYERS, allowed)[1:] == [
        "allowed upward import histeg.store -> histeg.cli is gone: remove it from the list",
        "folders import each other: statics -> syntax, syntax -> statics",
    ]
    assert layer_problems(scan(tmp_path), LAYERS, ALLOWED_UPWARD)[0].startswith("histeg.store ")  # without TYPE_CHECKING


def test_scan_follows_lazy_relative_and_reexported_imports(tmp_path: Path) -> None:
    """The graph the rules above rest on, on a package made for it."""
    files = {
        "histeg/__init__.py": "",
        "histeg/api/__init__.py": "from histeg.api.one import One\n",
        "histeg/api/one.py": "class One: ...\n",
        "histeg/api/two.py": "from histeg.api import One\n",
        "histeg/a.py": "def f():\n    from . import b\n",
        "histeg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from histeg import c\nimport histeg.a\nimport json, msgspec.json\n",
        "histeg/c.py": "from .api import two\nfrom histeg.api import one as first\n",
        "histeg/samples/0-initial/files/d.py": "import histeg.c\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    imports = scan(tmp_path)
    assert set(imports.graph.edges) == {
        ("histeg.api", "histeg.api.one"), ("histeg.api.two", "histeg.api.one"), ("histeg.a", "histeg.b"), ("histeg.b", "histeg.a"),
        ("histeg.c", "histeg.api.two"), ("histeg.c", "histeg.api.one"),
    }
    assert imports.outside["histeg.b"] == {"typing", "json", "msgspec"}
    assert cycles(imports.graph) == [("histeg.a", "histeg.b")]
