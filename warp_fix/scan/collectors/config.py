"""`wp.config.<key> = value` assignments (and `setattr(wp.config, "key", value)`)."""

from __future__ import annotations

import ast

from ..index import ConfigAssignment, ImportSite, Value
from ..parsed import ParsedFile, string_literal
from .base import Collector


class ConfigAssignmentCollector(Collector):
    """Finds writes to `warp.config`; `place_after_imports` adds the import positions around each."""

    NODE_TYPES = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Call)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._record_if_config(node, target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._record_if_config(node, node.target, node.value)
        elif isinstance(node, ast.AugAssign):
            self._record_if_config(node, node.target, None)
        elif isinstance(node, ast.Call):
            self._visit_setattr(node)

    def _visit_setattr(self, call: ast.Call) -> None:
        if not (isinstance(call.func, ast.Name) and call.func.id == "setattr") or len(call.args) != 3:
            return
        key = string_literal(call.args[1])
        if key is not None and self.parsed.warp_symbol(call.args[0]) == "config":
            self._append(call, key, self.parsed.value(call.args[2]))

    def _record_if_config(self, node: ast.stmt, target: ast.expr, value: ast.expr | None) -> None:
        """`value` None means an augmented assignment (`+=`): never a constant."""
        key = config_key(self.parsed, target)
        if key is None:
            return
        if value is None:
            self._append(node, key, Value(source=self.parsed.source(node), is_constant=False))
        else:
            self._append(node, key, self.parsed.value(value))  # type: ignore[arg-type]

    def _append(self, node: ast.AST, key: str, value: Value) -> None:
        located = self.parsed.located(node)
        self.found.config_assignments.append(
            ConfigAssignment(**located, key=key, value=value, at_module_scope=located["function"] is None)
        )

    def finish(self) -> None:
        place_after_imports(self.found.config_assignments, self.found.imports)


def config_key(parsed: ParsedFile, target: ast.expr) -> str | None:
    """Return "mode" for a target that is `warp.config.mode` however warp was imported; else None."""
    if isinstance(target, ast.Attribute) and parsed.warp_symbol(target.value) == "config":
        return target.attr
    return None


def place_after_imports(assignments: list[ConfigAssignment], imports: list[ImportSite]) -> None:
    """Fill in the earliest project import before and after each config write of the same file."""
    for assignment in assignments:
        lines = sorted(i.line for i in imports if i.kind == "project" and i.file == assignment.file)
        before = [line for line in lines if line < assignment.line]
        after = [line for line in lines if line > assignment.line]
        assignment.first_project_import_before = before[0] if before else None
        assignment.first_project_import_after = after[0] if after else None
