"""What a name or attribute denotes inside the project, as far as syntax tells.

Scopes follow Python's rules (function scopes see enclosing functions, never
enclosing class bodies; ``global``/``nonlocal`` redirect), imports are
followed across project modules (absolute, relative, re-exports, ``*``), and
attributes of classes, ``self`` and ``cls`` are looked up along the class's
method resolution order among project classes. Anything else is ``UNKNOWN``
(could be project code, cannot tell) or ``EXTERNAL`` (builtins, other
libraries): the call graph counts those and never guesses.

Besides what a name denotes, where it is bound: the *place* of a value
(``mod:NAME``, ``mod:Class.NAME``) that a name or attribute reads, which is
what a value-only change changes (``histeg.statics.reads``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

from histeg.naming import identifier
from histeg.statics.functions import COMPREHENSIONS, SCOPE_NODES, Definition, FunctionTable, ParsedModule, scope_nodes


class Opaque(Enum):
    UNKNOWN = "unknown"
    EXTERNAL = "external"


UNKNOWN = Opaque.UNKNOWN
EXTERNAL = Opaque.EXTERNAL

BINDERS = (
    *SCOPE_NODES,
    ast.Import,
    ast.ImportFrom,
    ast.Assign,
    ast.Name,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
    ast.MatchMapping,
    ast.Global,
    ast.Nonlocal,
)
"""The nodes that bind a name or say where it is bound (``_collect_bindings``)."""
_BINDER_TYPES = frozenset(BINDERS)


@dataclass(frozen=True)
class Function:
    ident: str


@dataclass(frozen=True)
class Klass:
    ident: str


@dataclass(frozen=True)
class Instance:
    """``self`` in a method: attributes come from the class, calling it is unknown."""

    klass: str


@dataclass(frozen=True)
class Module:
    name: str


@dataclass(frozen=True)
class Super:
    """``super()``: attribute lookup starts after ``after`` in the MRO of ``klass``."""

    klass: str
    after: str


Entity = Function | Klass | Instance | Module | Super | Opaque

ScopeKind = Literal["module", "class", "function", "transparent"]
BindingKind = Literal["def", "class", "import", "from", "alias", "other", "instance", "classobj"]
LITERALS = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp)


@dataclass(frozen=True)
class Binding:
    kind: BindingKind
    target: str = ""
    """Identifier (def, class, instance, classobj) or module name (import, from)."""
    name: str = ""
    """The imported name of ``from target import name``."""
    value: ast.expr | None = None
    """The assigned expression of ``name = value`` (alias)."""


OTHER = Binding("other")


@dataclass
class Scope:
    kind: ScopeKind
    module: str
    parent: Scope | None
    definition: Definition | None = None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    nonlocal_names: set[str] = field(default_factory=set)
    star_imports: list[str] = field(default_factory=list)
    method_of: str | None = None
    """Class identifier when this scope is a method: zero-argument ``super()`` works here."""

    def bind(self, name: str, binding: Binding) -> None:
        bindings = self.bindings.setdefault(name, [])
        if binding not in bindings:
            bindings.append(binding)


@dataclass
class ClassInfo:
    scope: Scope
    node: ast.ClassDef


IMPLICIT_CLASS_METHODS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})


class ProjectIndex:
    """Scopes of every parsed module, and the lookups between them."""

    def __init__(self, table: FunctionTable) -> None:
        self.module_scopes: dict[str, Scope] = {}
        self.packages: set[str] = set()
        self.scopes: dict[int, Scope] = {}
        """``id(definition node)`` -> its scope."""
        self.classes: dict[str, ClassInfo] = {}
        self.definitions: dict[int, Definition] = {id(d.node): d for m in table.modules for d in m.definitions}
        """``id(definition node)`` -> its definition."""
        self._mro: dict[str, tuple[list[str], bool]] = {}
        self._resolving: set[tuple[str, str]] = set()
        self._cuts = 0
        """How many times a guard against a cycle cut a resolution short: a result computed while none did is the
        same wherever it is asked for, and is kept in ``_resolved``."""
        self._resolved: dict[int, tuple[list[Binding], Scope, Entity]] = {}
        """``id(bindings)`` -> the bindings (kept alive, so the id stays theirs), their scope and what they resolve to."""
        self._mro_pending: set[str] = set()
        self._methods: dict[str, list[Scope]] | None = None
        self._carriers: dict[str, dict[str, list[str]]] = {}
        self._class_bound: set[str] | None = None
        """Names bound in some class body: any other name is no class's attribute."""
        for parsed in table.modules:
            self._index_module(parsed)

    # -- building -----------------------------------------------------------------

    def _index_module(self, parsed: ParsedModule) -> None:
        name = parsed.source.module
        parts = name.split(".")
        self.packages.update(".".join(parts[:i]) for i in range(1, len(parts)))
        for definition in parsed.definitions:
            parent = self.scopes[id(definition.parent.node)] if definition.parent else None
            kind: ScopeKind = "module" if parent is None else ("class" if isinstance(definition.node, ast.ClassDef) else "function")
            scope = Scope(kind, name, parent, definition)
            self.scopes[id(definition.node)] = scope
            if parent is None:
                self.module_scopes.setdefault(name, scope)
            elif isinstance(definition.node, ast.ClassDef):
                self.classes.setdefault(identifier_of(definition), ClassInfo(scope, definition.node))
            if isinstance(definition.node, ast.FunctionDef | ast.AsyncFunctionDef):
                self._bind_parameters(scope, definition)
            self._collect_bindings(scope, definition, parsed)

    def _bind_parameters(self, scope: Scope, definition: Definition) -> None:
        node = definition.node
        assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        for arg in [*positional, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                scope.bind(arg.arg, OTHER)
        owner = definition.parent
        if owner is None or not isinstance(owner.node, ast.ClassDef) or not positional:
            return
        klass = identifier_of(owner)
        scope.method_of = klass
        decorators = {_decorator_name(d) for d in node.decorator_list}
        if "staticmethod" in decorators:
            return
        first = positional[0].arg
        is_class_method = "classmethod" in decorators or node.name in IMPLICIT_CLASS_METHODS
        scope.bindings[first] = [Binding("classobj" if is_class_method else "instance", klass)]

    def _collect_bindings(self, scope: Scope, definition: Definition, parsed: ParsedModule) -> None:
        package = _package_of(parsed)
        stack_skip: ast.AST | None = None  # the target of an alias, bound already
        for node in definition.nodes:
            kind = type(node)  # ``ast`` makes no subclasses of its node classes: their type tells them
            if kind not in _BINDER_TYPES:
                continue  # most nodes (constants, calls, operators): one check, not the chain below
            if kind is ast.Name:  # the commonest binder by far, mostly read (Load)
                if type(node.ctx) is not ast.Load and node is not stack_skip:  # type: ignore[attr-defined]
                    scope.bind(node.id, OTHER)  # type: ignore[attr-defined]
                continue
            if isinstance(node, SCOPE_NODES):
                child = self.definitions[id(node)]
                scope.bind(node.name, Binding("class" if isinstance(node, ast.ClassDef) else "def", identifier_of(child)))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        scope.bind(alias.asname, Binding("import", alias.name))
                    else:
                        top = alias.name.split(".")[0]
                        scope.bind(top, Binding("import", top))
            elif isinstance(node, ast.ImportFrom):
                source = _absolute_module(package, node.level, node.module)
                for alias in node.names:
                    if source is None:
                        scope.bind(alias.asname or alias.name, OTHER)
                    elif alias.name == "*":
                        scope.star_imports.append(source)
                    else:
                        scope.bind(alias.asname or alias.name, Binding("from", source, alias.name))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                scope.bind(node.targets[0].id, Binding("alias", value=node.value))
                stack_skip = node.targets[0]
            elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
                scope.bind(node.name, OTHER)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                scope.bind(node.rest, OTHER)
            elif isinstance(node, ast.Global):
                scope.global_names.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                scope.nonlocal_names.update(node.names)

    # -- lookups ------------------------------------------------------------------

    def lookup(self, name: str, scope: Scope) -> Entity:
        """The entity a plain name denotes where ``scope``'s code reads it."""
        found = self._reading_scope(name, scope)
        if found is None:
            return EXTERNAL
        current, declared_global = found
        if declared_global:
            return self.module_member(current.module, name)
        if name in current.bindings:
            return self._resolve_all(current.bindings[name], current)
        return self._star_member(current, name)

    def _reading_scope(self, name: str, scope: Scope) -> tuple[Scope, bool] | None:
        """The scope whose binding of ``name`` the code of ``scope`` reads, and whether a ``global``
        statement sent it to the module; a module scope that does not bind it falls back to star imports."""
        current: Scope | None = scope
        while current is not None:
            if current.kind == "class" and current is not scope:
                current = current.parent
                continue
            if name in current.global_names:
                return current, True
            if name in current.nonlocal_names:
                current = current.parent
                continue
            if name in current.bindings or current.kind == "module":
                return current, False
            current = current.parent
        return None

    def module_member(self, module: str, name: str) -> Entity:
        """``module.name``: a global of the module, else its submodule (``from . import sub`` in a package)."""
        scope = self.module_scopes.get(module)
        key = (module, name)
        cyclic = self._cycle(key)
        if scope is not None and name in scope.bindings and not cyclic:
            self._resolving.add(key)
            try:
                return self._resolve_all(scope.bindings[name], scope)
            finally:
                self._resolving.discard(key)
        submodule = f"{module}.{name}"
        if submodule in self.module_scopes or submodule in self.packages:
            return Module(submodule)
        if cyclic:
            return UNKNOWN
        if scope is not None:
            return self._star_member(scope, name)
        return UNKNOWN if module in self.packages else EXTERNAL

    def _star_member(self, scope: Scope, name: str) -> Entity:
        if name.startswith("_"):
            return EXTERNAL
        for source in scope.star_imports:
            target = self.module_scopes.get(source)
            if target is not None and name in target.bindings:
                return self.module_member(source, name)
        return UNKNOWN if scope.star_imports else EXTERNAL

    def _cycle(self, key: tuple[str, str]) -> bool:
        """Whether resolving ``key`` now would go round a cycle (and is cut short)."""
        if key in self._resolving:
            self._cuts += 1
            return True
        return False

    def _resolve_all(self, bindings: list[Binding], scope: Scope) -> Entity:
        kept = self._resolved.get(id(bindings))
        if kept is not None and kept[0] is bindings and kept[1] is scope:
            return kept[2]
        cuts = self._cuts
        found: Entity | None = None
        for binding in bindings:  # one entity for all of them, else UNKNOWN: the first UNKNOWN or second entity settles it
            entity = self._resolve(binding, scope)
            if entity is UNKNOWN or (found is not None and entity != found):
                found = UNKNOWN
                break
            found = entity
        found = UNKNOWN if found is None else found
        if self._cuts == cuts:
            self._resolved[id(bindings)] = (bindings, scope, found)
        return found

    def _resolve(self, binding: Binding, scope: Scope) -> Entity:
        match binding.kind:
            case "alias":
                assert binding.value is not None
                key = ("", str(id(binding.value)))
                if self._cycle(key):
                    return UNKNOWN
                self._resolving.add(key)
                try:
                    return self.expression(binding.value, scope)
                finally:
                    self._resolving.discard(key)
            case "def":
                return Function(binding.target)
            case "class" | "classobj":
                return Klass(binding.target)
            case "instance":
                return Instance(binding.target)
            case "import":
                return self.module_entity(binding.target)
            case "from":
                return self.attribute(self.module_entity(binding.target), binding.name)
        return UNKNOWN

    def module_entity(self, name: str) -> Entity:
        return Module(name) if name in self.module_scopes or name in self.packages else EXTERNAL

    def attribute(self, entity: Entity, name: str) -> Entity:
        match entity:
            case Module(module):
                return self.module_member(module, name)
            case Klass(klass) | Instance(klass):
                return self.class_member(klass, name)
            case Super(klass, after):
                order, _ = self.mro(klass)
                rest = order[order.index(after) + 1 :] if after in order else []
                return self.class_member(klass, name, rest)
            case Opaque.EXTERNAL:
                return EXTERNAL
        return UNKNOWN

    def class_member(self, klass: str, name: str, order: list[str] | None = None) -> Entity:
        full, external_base = self.mro(klass)
        for candidate in full if order is None else order:
            info = self.classes[candidate]
            if name in info.scope.bindings:
                return self._resolve_all(info.scope.bindings[name], info.scope)
        return EXTERNAL if external_base else UNKNOWN

    def mro(self, klass: str) -> tuple[list[str], bool]:
        """C3 order of the project classes above ``klass``, and whether a base is not a project class."""
        if klass in self._mro:
            if klass in self._mro_pending:
                self._cuts += 1
            return self._mro[klass]
        self._mro[klass] = ([klass], True)  # guards against cyclic bases while computing
        self._mro_pending.add(klass)
        info = self.classes[klass]
        bases: list[str] = []
        external = False
        for base in info.node.bases:
            entity = self.expression(base, info.scope.parent or info.scope)
            if isinstance(entity, Klass) and entity.ident in self.classes:
                bases.append(entity.ident)
            elif not (isinstance(base, ast.Name) and base.id == "object" and entity is EXTERNAL):
                external = True
        parents = [self.mro(base) for base in bases]
        external = external or any(flag for _, flag in parents)
        order = _c3([klass], [order for order, _ in parents] + [list(bases)])
        self._mro[klass] = (order, external)
        self._mro_pending.discard(klass)
        return self._mro[klass]

    def expression(self, node: ast.expr, scope: Scope) -> Entity:
        """The entity an expression denotes: names, attribute chains, ``super()``, ``Class(...)``."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id, scope)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.expression(node.value, scope), node.attr)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "super":
                return self._super(node, scope)
            made = self.expression(node.func, scope)
            return Instance(made.ident) if isinstance(made, Klass) else UNKNOWN
        if isinstance(node, LITERALS):
            return EXTERNAL  # methods of str, list, dict, ...
        return UNKNOWN

    # -- places of values -----------------------------------------------------------
    # Where a name is bound, rather than what it denotes: a value-only change (``WIN = 750`` -> ``800``)
    # is a change of the place, and every function reading the place may behave otherwise.

    def name_places(self, name: str, scope: Scope) -> set[str]:
        """The module global or class attribute (``mod:NAME``, ``mod:Class.NAME``) a plain name reads."""
        found = self._reading_scope(name, scope)
        if found is None:
            return set()
        current, declared_global = found
        if declared_global or current.kind == "module":
            return self.module_places(current.module, name)
        if current.kind == "class" and current.definition is not None and name in current.bindings:
            return self._binding_places(current.bindings[name], current, f"{identifier_of(current.definition)}.{name}")
        return set()  # a local of a function

    def member_places(self, entity: Entity, name: str) -> set[str]:
        """The places ``entity.name`` reads: a global of a module, a class attribute along the MRO."""
        match entity:
            case Module(module):
                return self.module_places(module, name)
            case Klass(klass) | Instance(klass):
                return self.class_places(klass, name)
            case Super(klass, after):
                order, _ = self.mro(klass)
                return self.class_places(klass, name, order[order.index(after) + 1 :] if after in order else [])
        return set()

    def module_places(self, module: str, name: str) -> set[str]:
        scope = self.module_scopes.get(module)
        key = (f"places {module}", name)
        if scope is None or self._cycle(key):
            return set()
        self._resolving.add(key)
        try:
            if name in scope.bindings:
                return self._binding_places(scope.bindings[name], scope, identifier(module, name))
            if name.startswith("_"):
                return set()
            return {place for source in scope.star_imports for place in self.module_places(source, name)}
        finally:
            self._resolving.discard(key)

    def class_places(self, klass: str, name: str, order: list[str] | None = None) -> set[str]:
        full, _ = self.mro(klass)
        for candidate in full if order is None else order:
            info = self.classes[candidate]
            if name in info.scope.bindings:
                return self._binding_places(info.scope.bindings[name], info.scope, f"{candidate}.{name}")
        return set()

    def _binding_places(self, bindings: list[Binding], scope: Scope, place: str) -> set[str]:
        """``place`` for value bindings; imported names are followed to where they are bound."""
        found: set[str] = set()
        for binding in bindings:
            if binding.kind in ("alias", "other"):
                found.add(place)
            elif binding.kind == "from":
                found |= self.member_places(self.module_entity(binding.target), binding.name)
        return found

    def carriers(self, name: str) -> dict[str, list[str]]:
        """Place -> the project classes whose attribute ``name`` reads it: the class binding it and the subclasses inheriting it."""
        if self._class_bound is None:
            self._class_bound = {bound for info in self.classes.values() for bound in info.scope.bindings}
        if name not in self._carriers:
            carriers: dict[str, list[str]] = {}
            for klass in self.classes if name in self._class_bound else ():
                for place in self.class_places(klass, name):
                    carriers.setdefault(place, []).append(klass)
            self._carriers[name] = carriers
        return self._carriers[name]

    def receiver(self, node: ast.Attribute, scope: Scope) -> tuple[Entity, bool]:
        """What the receiver of ``node`` denotes, and whether it is an instance attribute: a receiver that is
        itself an attribute of a project instance or class and otherwise unknown (``self.locale`` in
        ``self.locale.NAMES``) is what the methods of that class assign to it."""
        found = self.expression(node.value, scope)
        if found is UNKNOWN and isinstance(node.value, ast.Attribute):
            holder = class_of(self.expression(node.value.value, scope))
            if holder is not None:
                return self.instance_attribute(holder, node.value.attr), True
        return found, False

    def instance_attribute(self, klass: str, name: str) -> Entity:
        """What ``self.name`` holds in instances of ``klass``, judged by the methods along its MRO that
        assign it: one project class (``self.name = Locale()``, an annotation, an annotated parameter),
        else UNKNOWN. The call graph does not use it: it resolves instance attributes for value reads."""
        key = (f"instance {klass}", name)
        if self._cycle(key):
            return UNKNOWN
        self._resolving.add(key)
        try:
            held = {
                self._assigned_entity(method, node)
                for method in self._methods_along(klass)
                for node in self._self_assignments(method, name)
            }
        finally:
            self._resolving.discard(key)
        return held.pop() if len(held) == 1 and isinstance(next(iter(held)), Instance) else UNKNOWN

    def _methods_along(self, klass: str) -> list[Scope]:
        order, _ = self.mro(klass)
        return [method for owner in order for method in self.methods(owner)]

    def methods(self, klass: str) -> list[Scope]:
        """The scopes of the functions defined in the body of ``klass``."""
        if self._methods is None:
            self._methods = {}
            for key, definition in self.definitions.items():
                if definition.is_function and definition.parent is not None and isinstance(definition.parent.node, ast.ClassDef):
                    self._methods.setdefault(identifier_of(definition.parent), []).append(self.scopes[key])
        return self._methods.get(klass, [])

    @staticmethod
    def _self_assignments(method: Scope, name: str) -> list[ast.Assign | ast.AnnAssign]:
        """``self.name = ...`` statements of a method (``self``: its first parameter, bound to an instance)."""
        selves = {n for n, bindings in method.bindings.items() if bindings and bindings[0].kind == "instance"}
        assert method.definition is not None
        found: list[ast.Assign | ast.AnnAssign] = []
        for node in method.definition.nodes:
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            else:
                continue
            if any(
                isinstance(t, ast.Attribute) and t.attr == name and isinstance(t.value, ast.Name) and t.value.id in selves for t in targets
            ):
                found.append(node)
        return found

    def _assigned_entity(self, method: Scope, node: ast.Assign | ast.AnnAssign) -> Entity:
        """What one ``self.name = value`` assigns: by its annotation, the annotation of the parameter assigned, or the value."""
        annotation = node.annotation if isinstance(node, ast.AnnAssign) else None
        where = method
        if annotation is None and isinstance(node.value, ast.Name) and method.definition is not None:
            function = method.definition.node
            assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            parameters = {a.arg: a.annotation for a in ast.walk(function.args) if isinstance(a, ast.arg)}
            annotation, where = parameters.get(node.value.id), method.parent or method  # evaluated where the def runs
        if annotation is not None:
            declared = self.expression(annotation, where)
            return Instance(declared.ident) if isinstance(declared, Klass) else UNKNOWN
        return self.expression(node.value, method) if node.value is not None else UNKNOWN

    def _super(self, node: ast.Call, scope: Scope) -> Entity:
        if self.lookup("super", scope) is not EXTERNAL:
            return UNKNOWN  # ``super`` rebound in the project
        if not node.args and scope.method_of is not None:
            return Super(scope.method_of, scope.method_of)
        if node.args:
            start = self.expression(node.args[0], scope)
            if isinstance(start, Klass) and start.ident in self.classes:
                return Super(start.ident, start.ident)
        return UNKNOWN


def class_of(entity: Entity) -> str | None:
    """The project class whose attributes ``entity.NAME`` reads: an instance's class or the class itself."""
    match entity:
        case Instance(klass) | Klass(klass):
            return klass
    return None


def scoped_nodes(definition: Definition, scope: Scope) -> Iterator[tuple[ast.AST, Scope]]:
    """Every node whose code runs in the definition's own code, with the scope its names are read in:
    lambdas and comprehensions bind their parameters and targets in scopes of their own."""
    return _scoped(definition.nodes, scope)


def _scoped(nodes: Iterable[ast.AST], scope: Scope) -> Iterator[tuple[ast.AST, Scope]]:
    """``nodes``: a scope's ``scope_nodes``."""
    for node in nodes:
        yield node, scope
        if type(node) not in _OWN_SCOPES:  # most nodes: one check
            continue
        if isinstance(node, ast.Lambda):
            yield from _scoped(scope_nodes([*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]), scope)
            yield from _scoped(
                scope_nodes([node.body]), _transparent(scope, [a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)])
            )
        elif isinstance(node, COMPREHENSIONS):
            inner = _transparent(scope, [n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)])
            yield from _scoped(scope_nodes(ast.iter_child_nodes(node)), inner)


_OWN_SCOPES = frozenset((ast.Lambda, *COMPREHENSIONS))


def _transparent(parent: Scope, names: list[str]) -> Scope:
    scope = Scope("transparent", parent.module, parent)
    for name in names:
        scope.bind(name, OTHER)
    return scope


def _c3(head: list[str], sequences: list[list[str]]) -> list[str]:
    result = list(head)
    pending = [list(seq) for seq in sequences if seq]
    while pending:
        for seq in pending:
            candidate = seq[0]
            if not any(candidate in other[1:] for other in pending):
                break
        else:  # inconsistent hierarchy (Python would refuse it): keep depth-first order
            return list(dict.fromkeys([*result, *(c for seq in pending for c in seq)]))
        result.append(candidate)
        pending = [[c for c in seq if c != candidate] for seq in pending]
        pending = [seq for seq in pending if seq]
    return result


def identifier_of(definition: Definition) -> str:
    """The identifier of a definition, also of functions left out of the table by name."""
    return identifier(definition.source.module, definition.qualname)


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _package_of(parsed: ParsedModule) -> str:
    module = parsed.source.module
    return module if parsed.source.is_package else module.rpartition(".")[0]


def _absolute_module(package: str, level: int, module: str | None) -> str | None:
    """The absolute name of ``from <dots><module> import``; ``None`` when it leaves the project root."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    if module:
        base.append(module)
    return ".".join(base) if base else None
