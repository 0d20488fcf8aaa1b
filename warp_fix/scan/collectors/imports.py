"""Imports, classified so config writes can be placed relative to the project code they must reach."""

from __future__ import annotations

import ast
import sys

from ..index import ImportSite
from .base import Collector


class ImportCollector(Collector):
    """Records each `import` / `from ... import` with its kind: stdlib, warp, project or third_party."""

    NODE_TYPES = (ast.Import, ast.ImportFrom)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self._append(node, alias.name, relative=False)
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            self._append(node, "." * node.level + (node.module or ""), relative=node.level > 0, names=names)

    def _append(self, node: ast.AST, module: str, relative: bool, names: list[str] | None = None) -> None:
        located = self.parsed.located(node)
        self.found.imports.append(
            ImportSite(
                **located,
                module=module,
                kind=classify_import(module, relative, self.parsed.info.project_names),
                at_module_scope=located["function"] is None,
                names=names or [],
            )
        )


def classify_import(module: str, relative: bool, project_names: frozenset[str]) -> str:
    top = module.split(".")[0]
    if relative or top in project_names:
        return "project"
    if top == "warp":
        return "warp"
    if top in sys.stdlib_module_names or top == "__future__":
        return "stdlib"
    return "third_party"
