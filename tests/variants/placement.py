"""Where a transformation puts a statement it adds to a file."""

from __future__ import annotations

import libcst as cst


def after_leading_imports(module: cst.Module, statement: cst.BaseStatement) -> cst.Module:
    """`statement` placed after the module's docstring and leading imports (where a reader looks for it)."""
    body = list(module.body)
    at = 0
    for i, line in enumerate(body):
        is_import = isinstance(line, cst.SimpleStatementLine) and all(
            isinstance(node, (cst.Import, cst.ImportFrom)) for node in line.body
        )
        is_docstring = i == 0 and isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.Expr)
        if not (is_import or is_docstring):
            break
        at = i + 1
    return module.with_changes(body=[*body[:at], statement, *body[at:]])
