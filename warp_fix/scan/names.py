"""Resolve what a dotted name in a file refers to, from the file's import statements.

A name's meaning is read from the imports that bind its leading part, by the rules libcst's
QualifiedNameProvider applies (`import warp as wp`, `import warp.config as c`, `from warp import kernel as k`,
`from . import x`, ...), over every import statement of the file, module level and nested alike. The scan asks
only about dotted names whose first part an import binds (see `scanner._candidate_names`), so imports are all it
needs to read. `tests/scan/test_names.py` holds libcst's provider as the oracle these rules are proven against.
Limitation: a local variable that shadows an imported name is not seen.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from .index import ModuleName, absolute_module_name

# Segments between "warp." and a public name that re-exports may add (warp._src.context.launch).
_INTERNAL_SEGMENTS = ("_src", "context", "build")

Import = ast.Import | ast.ImportFrom


def dotted_name(node: ast.AST) -> str | None:
    """Return "wp.config.mode" for a Name/Attribute chain; None for anything else (calls, subscripts)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def warp_symbol_from_qualified_name(name: str) -> str | None:
    """Map "warp._src.context.launch" -> "launch"; "warp.config.mode" -> "config.mode"; non-warp -> None."""
    if name != "warp" and not name.startswith("warp."):
        return None
    parts = name.split(".")[1:]
    while len(parts) > 1 and parts[0] in _INTERNAL_SEGMENTS:
        parts = parts[1:]
    return ".".join(parts) or None


class NameResolver:
    """Qualified names of the dotted names one file asked about (see `resolve_files`)."""

    def __init__(self, names: dict[str, frozenset[str]] | None = None) -> None:
        self._names = names or {}

    def qualified_names(self, dotted: str | None) -> frozenset[str]:
        return self._names.get(dotted, frozenset()) if dotted else frozenset()

    def warp_symbol(self, node: ast.AST) -> str | None:
        """The Warp API `node` names (`launch`, `config.mode`, ...), however warp was imported."""
        for name in self.qualified_names(dotted_name(node)):
            symbol = warp_symbol_from_qualified_name(name)
            if symbol is not None:
                return symbol
        return None


@dataclass
class NameRequest:
    """One file's imports and the dotted names it wants resolved."""

    imports: list[Import]
    dotted_names: set[str]


def resolve_files(requests: list[NameRequest]) -> list[NameResolver]:
    """Each file's wanted names, resolved through its own import bindings."""
    return [_resolve(request) for request in requests]


def _resolve(request: NameRequest) -> NameResolver:
    bindings = ImportBindings([i for i in request.imports if _is_bindable(i)])
    if not bindings:
        return NameResolver()
    return NameResolver({dotted: bindings.qualified_names(dotted) for dotted in request.dotted_names})


class ImportBindings:
    """The names a file's import statements bind, and what a dotted name starting with one of them refers to.

    >>> bindings = ImportBindings(ast.parse("import warp as wp\\nimport os.path\\nfrom . import util").body)
    >>> sorted(bindings.qualified_names("wp.config.mode")), sorted(bindings.qualified_names("os.path.join"))
    (['warp.config.mode'], ['os.path.join'])
    >>> sorted(bindings.qualified_names("util.f")), sorted(bindings.qualified_names("np.zeros"))
    (['.util.f'], [])
    """

    def __init__(self, imports: list[Import]) -> None:
        self._statements: dict[str, list[Import]] = defaultdict(list)
        for statement in imports:
            for alias in statement.names:
                for name in [alias.asname] if alias.asname else _prefixes(alias.name):
                    if statement not in self._statements[name]:
                        self._statements[name].append(statement)

    def __bool__(self) -> bool:
        return bool(self._statements)

    def qualified_names(self, dotted: str) -> frozenset[str]:
        """The longest leading part an import binds decides; every statement binding it contributes (conditional
        imports give several names)."""
        for prefix in _prefixes(dotted):
            statements = self._statements.get(prefix)
            if statements:
                return frozenset(name for s in statements for name in _names_through(s, dotted))
        return frozenset()


def _names_through(statement: Import, dotted: str) -> set[str]:
    """What `dotted` names through one import statement: each alias whose bound name leads `dotted` at a dot
    boundary gives the imported path followed by the rest of `dotted`."""
    module = "." * statement.level + (statement.module or "") if isinstance(statement, ast.ImportFrom) else ""
    found = set()
    for alias in statement.names:
        for real_name in _prefixes(alias.name):
            bound = alias.asname or real_name
            if not dotted.startswith(bound):
                continue
            rest = dotted[len(bound) :]
            if rest and not rest.startswith("."):
                continue
            if module:
                real_name = f"{module}{real_name}" if module.endswith(".") else f"{module}.{real_name}"
            rest = rest.lstrip(".")
            found.add(f"{real_name}.{rest}" if rest else real_name)
            break
    return found


def _prefixes(dotted: str) -> list[str]:
    """The leading parts of a dotted name, longest first: a.b.c, a.b, a."""
    parts = dotted.split(".")
    return [".".join(parts[:end]) for end in range(len(parts), 0, -1)]


def _is_bindable(node: ast.AST) -> bool:
    """Imports that bind names (`__future__` and `*` imports do not)."""
    if isinstance(node, ast.ImportFrom):
        return node.module != "__future__" and not any(a.name == "*" for a in node.names)
    return True


def top_level_names(tree: ast.Module, python_module: str, is_package: bool) -> list[ModuleName]:
    """What the module's top level binds, in order, as other modules reach it (see `ModuleName`): imports with the
    qualified name they bind, classes and functions with their own, every other binding with "" (not followed).

    >>> names = top_level_names(ast.parse("from .solver import Solver as Base\nclass Sim(Base): pass\nX = 1"),
    ...                         "pkg", True)
    >>> [(n.name, n.target) for n in names]
    [('Base', 'pkg.solver.Solver'), ('Sim', 'pkg.Sim'), ('X', '')]
    """
    found: list[ModuleName] = []
    for statement in _top_level(tree.body):
        if isinstance(statement, ast.Import):
            found += [ModuleName(a.asname, a.name) if a.asname else ModuleName(a.name.split(".")[0],
                                                                                a.name.split(".")[0])
                      for a in statement.names]
        elif isinstance(statement, ast.ImportFrom):
            written = "." * statement.level + (statement.module or "")
            module = absolute_module_name(written, python_module, is_package)
            joint = "" if module.endswith(".") or not module else "."
            found += [ModuleName("*", module) if a.name == "*" else ModuleName(a.asname or a.name,
                                                                                f"{module}{joint}{a.name}")
                      for a in statement.names]
        elif isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(ModuleName(statement.name, f"{python_module}.{statement.name}"))
        else:
            found += [ModuleName(name, "") for name in _bound_by(statement)]
    return found


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run at a module's top level, those in its `if`/`try`/`with`/loop blocks included; a
    block's own header (a `for` target, a `with ... as`) is yielded with its body left out."""
    for statement in body:
        if not isinstance(statement, _BLOCKS):
            yield statement
            continue
        if isinstance(statement, ast.For | ast.AsyncFor):
            yield ast.Assign(targets=[statement.target], value=ast.Constant(None))
        elif isinstance(statement, ast.With | ast.AsyncWith):
            yield from (ast.Assign(targets=[item.optional_vars], value=ast.Constant(None))
                        for item in statement.items if item.optional_vars is not None)
        for handler in getattr(statement, "handlers", []):
            if handler.name:
                yield ast.Assign(targets=[ast.Name(handler.name, ast.Store())], value=ast.Constant(None))
            yield from _top_level(handler.body)
        for block in ("body", "orelse", "finalbody"):
            yield from _top_level(getattr(statement, block, []))


_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, *(
    [ast.TryStar] if hasattr(ast, "TryStar") else []))


def _bound_by(statement: ast.stmt) -> list[str]:
    """The names a statement other than an import or a definition binds (assignments, `del`, walrus)."""
    return [n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)]
