"""Which enclosing-function names a nested kernel captures, with libcst's ScopeProvider.

Only the outermost function around the kernel is parsed (captures cannot reach past
it), so the cost stays proportional to factory code, not to the file.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import FunctionScope, MetadataWrapper, ScopeProvider


class FactoryScopes:
    """Scope analysis of one outermost function's source text (possibly indented)."""

    def __init__(self, source: str) -> None:
        indented = source[:1].isspace()
        self._module = cst.parse_module(("if True:\n" if indented else "") + source)
        self._scopes = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(ScopeProvider)
        collector = _FunctionCollector()
        self._module.visit(collector)
        self._functions = collector.functions

    def captures(self, function_name: str, occurrence: int) -> list[str]:
        """Names the `occurrence`-th def named `function_name` (document order) takes from enclosing
        functions: free names of its body and names in its annotations bound by an enclosing function."""
        candidates = [f for f in self._functions if f.name.value == function_name]
        if occurrence >= len(candidates):
            return []
        function = candidates[occurrence]
        own = self._own_scope(function)
        if own is None:
            return []
        annotation_names = {id(n) for n in _annotation_names(function)}
        accesses = [*own.accesses, *(a for a in own.parent.accesses if id(a.node) in annotation_names)]
        captured = {
            referent.name
            for access in accesses
            for referent in access.referents
            if isinstance(referent.scope, FunctionScope) and referent.scope is not own
        }
        return sorted(captured)

    def _own_scope(self, function: cst.FunctionDef) -> FunctionScope | None:
        body = function.body.body
        scope = self._scopes.get(body[0]) if body else None
        return scope if isinstance(scope, FunctionScope) else None


class _FunctionCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.functions: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)


class _NameCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)


def _annotation_names(function: cst.FunctionDef) -> list[cst.Name]:
    collector = _NameCollector()
    params = function.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        if param.annotation is not None:
            param.annotation.visit(collector)
    return collector.names
