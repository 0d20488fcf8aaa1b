"""The call-structure family: launches made through a helper function of the project instead of in place."""

from __future__ import annotations

import libcst as cst

from tests.variants.names import module_level_warp_alias, names_in
from tests.variants.transform import Example, Fixture, Transformation


class _ThroughHelper(cst.CSTTransformer):
    def __init__(self, alias: str, helper: str) -> None:
        self.alias, self.helper = alias, helper

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        func = original_node.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and (func.value.value, func.attr.value) == (self.alias, "launch")
        ):
            return updated_node.with_changes(func=cst.Name(self.helper))
        return updated_node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        """The helper follows the module's leading imports."""
        body = list(updated_node.body)
        at = 0
        for i, statement in enumerate(body):
            if isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(node, (cst.Import, cst.ImportFrom)) for node in statement.body
            ):
                at = i + 1
            elif i > 0 or not _is_docstring_line(statement):
                break
        helper = cst.parse_statement(
            f"def {self.helper}(*args, **kwargs):\n    return {self.alias}.launch(*args, **kwargs)\n"
        ).with_changes(leading_lines=(cst.EmptyLine(), cst.EmptyLine()))
        body.insert(at, helper)
        return updated_node.with_changes(body=body)


def _is_docstring_line(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)


class LaunchThroughHelper(Transformation):
    NAME = "launch-through-helper"
    FAMILY = "call structure"
    DESCRIPTION = "Every `wp.launch(...)` of a file calls a helper of that file that calls `wp.launch` in turn."
    NOTHING_TO_REWRITE = "no file launches with wp.launch at the name `_launch` free"
    HELPER = "_launch"
    EXAMPLES = (
        Example(
            before=(
                '"""Sim."""\n\nimport warp as wp\n\nfrom pkg import kernels\n\n\n'
                "def step(a):\n    wp.launch(kernels.k, dim=1, inputs=[a])\n"
            ),
            after=(
                '"""Sim."""\n\nimport warp as wp\n\nfrom pkg import kernels\n\n\ndef _launch(*args, **kwargs):\n'
                "    return wp.launch(*args, **kwargs)\n\n\ndef step(a):\n    _launch(kernels.k, dim=1, inputs=[a])\n"
            ),
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        text = module.code
        alias = module_level_warp_alias(text)
        if alias is None or f"{alias}.launch(" not in text or self.HELPER in names_in(text):
            return None
        return module.visit(_ThroughHelper(alias, self.HELPER))
