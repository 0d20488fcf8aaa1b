"""Resolve what a dotted name in a file refers to, with libcst's QualifiedNameProvider.

Running libcst's metadata over whole files was measured far too slow for the index
(~60-80 s for Warp's examples on a loaded 2-core machine), so the provider runs on a
synthetic module: per file, a function holding the file's import statements (module
level and nested, flattened) and one line per distinct dotted name the scan asks about. That keeps
libcst's exact import-binding rules (`import warp as wp`, `import warp.config as c`,
`from warp import kernel as k`, ...) at a fraction of the cost. Limitation: a local
variable that shadows an imported name is not seen.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# Segments between "warp." and a public name that re-exports may add (warp._src.context.launch).
_INTERNAL_SEGMENTS = ("_src", "context", "build")


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

    imports: list[ast.Import | ast.ImportFrom]
    dotted_names: set[str]


def resolve_files(requests: list[NameRequest]) -> list[NameResolver]:
    """One libcst pass for many files: each file becomes a function holding its imports and names,
    so per-file scoping stays exact while libcst's fixed per-module cost is paid once. libcst is imported here, not
    with the module: a plan whose files all come from the kept index never needs it (a third of a second)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, QualifiedNameProvider

    chunks = [_Chunk(request) for request in requests]
    text = "".join(chunk.source(index) for index, chunk in enumerate(chunks))
    try:
        module = cst.parse_module(text)
        names = MetadataWrapper(module, unsafe_skip_copy=True).resolve(QualifiedNameProvider)
    except (cst.ParserSyntaxError, RecursionError):
        if len(requests) == 1:
            return [NameResolver()]
        return [resolve_files([r])[0] for r in requests]
    resolvers = []
    for chunk, function in zip(chunks, module.body, strict=True):
        statements = function.body.body[len(chunk.import_lines) :]  # type: ignore[attr-defined]
        resolvers.append(NameResolver(chunk.read(statements, names)))
    return resolvers


class _Chunk:
    """One file's part of the synthetic module."""

    def __init__(self, request: NameRequest) -> None:
        self.import_lines = [ast.unparse(i) for i in request.imports if _is_bindable(i)]
        self.wanted = sorted(request.dotted_names) if self.import_lines else []

    def source(self, index: int) -> str:
        body = [*self.import_lines, *self.wanted] or ["pass"]
        return f"def _file_{index}():\n" + "".join(f"    {line}\n" for line in body)

    def read(self, statements, names) -> dict[str, frozenset[str]]:
        from libcst._metadata_dependent import LazyValue

        resolved = {}
        for dotted, statement in zip(self.wanted, statements, strict=False):
            qualified = names.get(statement.body[0].value, ())
            qualified = qualified() if isinstance(qualified, LazyValue) else qualified  # lazy in libcst 1.x
            resolved[dotted] = frozenset(q.name for q in qualified)
        return resolved


def _is_bindable(node: ast.AST) -> bool:
    """Imports that bind names inside a function (`__future__` and `*` imports do not)."""
    if isinstance(node, ast.ImportFrom):
        return node.module != "__future__" and not any(a.name == "*" for a in node.names)
    return True
