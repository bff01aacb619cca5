"""What a setuptools build configured by ``setup.py`` or ``setup.cfg`` reads, when that can be told without running it.

A ``setup.py`` runs any code, so in general its build may read any file. Most are
declarations in Python's clothes: imports, then one ``setup(...)`` call whose
arguments are literals, packages found on disk, and files read whole
(``long_description=open("README.rst").read()``). Such a script reads its own
text and the files it names, nothing else; anything more (a computed version, a
loop, an ``Extension``) gives None. ``setup.cfg``'s ``attr:`` and ``file:``
directives are followed as setuptools follows them.
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

from histeg.envs.dynamic_metadata import assigns_literal, existing_files, module_file

SAFE_IMPORTS = frozenset({"setuptools", "distutils.core", "io", "os", "os.path", "codecs", "pathlib"})
"""Modules a declarative script may import: none of them runs the project's code."""
FINDERS = frozenset({"find_packages", "find_namespace_packages"})
READERS = frozenset({"open", "read_text"})


def setup_script_files(snapshot: Path) -> list[Path] | None:
    """The files ``setup.py`` reads besides itself (none when there is no script); None when it may read more."""
    script = snapshot / "setup.py"
    if not script.exists():
        return []
    try:
        tree = ast.parse(script.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    reader = _Script(snapshot)
    return reader.files if reader.statements(tree.body) and reader.called else None


def setup_cfg_files(snapshot: Path) -> list[Path] | None:
    """The files ``setup.cfg``'s directives read (``file:``, and the module of an ``attr:`` assigned a literal)."""
    path = snapshot / "setup.cfg"
    if not path.is_file():
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    package_dir = _package_dir(parser.get("options", "package_dir", fallback=""))
    found: list[Path] = []
    for section in parser.sections():
        for value in parser[section].values():
            value = value.strip()
            if value.startswith("file:"):
                files = existing_files(snapshot, [name.strip() for name in value[5:].split(",") if name.strip()])
            elif value.startswith("attr:"):
                files = _attribute_module(snapshot, value[5:].strip(), package_dir)
            else:
                continue
            if files is None:
                return None
            found += files
    return found


def _package_dir(text: str) -> dict[str, str]:
    """``package_dir`` of ``setup.cfg`` (``=src`` or ``pkg = lib/pkg`` lines)."""
    mapping = {}
    for line in text.replace(",", "\n").splitlines():
        if "=" in line:
            name, _, folder = line.partition("=")
            mapping[name.strip()] = folder.strip()
    return mapping


def _attribute_module(snapshot: Path, target: str, package_dir: dict[str, str]) -> list[Path] | None:
    """The module file of ``pkg.mod.attr`` when it assigns the attribute a literal (setuptools then reads it without
    importing); None else."""
    if "." not in target:
        return None
    module, attribute = target.rsplit(".", 1)
    found = module_file(snapshot, module, package_dir)
    return [found] if found is not None and assigns_literal(found, attribute) else None


class _Script:
    """Walks a ``setup.py``: ``statements`` is False at the first statement or expression that may do more than
    declare; ``files`` collects what it reads."""

    def __init__(self, snapshot: Path) -> None:
        self.snapshot = snapshot
        self.files: list[Path] = []
        self.bound: set[str] = set()
        self.called = False

    def statements(self, body: list[ast.stmt]) -> bool:
        return all(self.statement(node) for node in body)

    def statement(self, node: ast.stmt) -> bool:
        if isinstance(node, ast.Import):
            return all(alias.name in SAFE_IMPORTS for alias in node.names)
        if isinstance(node, ast.ImportFrom):
            return node.level == 0 and node.module in SAFE_IMPORTS
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return True  # a docstring
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _name(node.value.func) == "setup":
            self.called = not node.value.args and all(k.arg is not None and self.expression(k.value) for k in node.value.keywords)
            return self.called
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets) and self.expression(node.value):
            self.bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
            return True
        if isinstance(node, ast.With) and len(node.items) == 1 and node.items[0].optional_vars is not None:
            item = node.items[0]
            if isinstance(item.optional_vars, ast.Name) and self._opened(item.context_expr):
                self.bound.add(item.optional_vars.id)
                return self.statements(node.body)
            return False
        if isinstance(node, ast.If) and _is_main_guard(node.test) and not node.orelse:
            return self.statements(node.body)
        return False

    def expression(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str) and _may_name_a_file(node.value):
                self.files += existing_files(self.snapshot, [node.value]) or []  # a script, a data file: copied into the install
            return True
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return all(self.expression(item) for item in node.elts)
        if isinstance(node, ast.Dict):
            return all(key is not None and self.expression(key) for key in node.keys) and all(self.expression(v) for v in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.expression(node.left) and self.expression(node.right)
        if isinstance(node, ast.Name):
            return node.id in self.bound
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name in FINDERS:
                return all(self.expression(arg) for arg in node.args) and all(self.expression(k.value) for k in node.keywords)
            if name == "read" and isinstance(node.func, ast.Attribute) and not node.args:
                target = node.func.value
                return (isinstance(target, ast.Name) and target.id in self.bound) or self._opened(target)
            if name == "read_text" and isinstance(node.func, ast.Attribute):
                return self._opened(node)
        return False

    def _opened(self, node: ast.expr) -> bool:
        """``open("NAME", ...)`` (``io.``, ``codecs.``) or ``Path("NAME").read_text(...)``: the file is read, and keyed."""
        if not isinstance(node, ast.Call) or _name(node.func) not in READERS:
            return False
        if isinstance(node.func, ast.Attribute) and node.func.attr == "read_text":
            path = node.func.value
            if not (isinstance(path, ast.Call) and _name(path.func) == "Path" and len(path.args) == 1):
                return False
            name = path.args[0]
        elif node.args:
            name = node.args[0]
        else:
            return False
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return False
        if not all(isinstance(arg, ast.Constant) for arg in node.args[1:]) or not all(
            isinstance(k.value, ast.Constant) for k in node.keywords
        ):
            return False
        files = existing_files(self.snapshot, [name.value])
        if files is None:
            return False
        self.files += files
        return True


def _may_name_a_file(text: str) -> bool:
    return 0 < len(text) < 256 and not any(c in text for c in " :*\n") and not text.startswith(("/", "."))


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )
