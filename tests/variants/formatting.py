"""The formatting family: the same statements without docstrings, or without comments and blank lines."""

from __future__ import annotations

import libcst as cst

from tests.variants.transform import Example, Fixture, Skip, Transformation


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


class _DropDocstrings(cst.CSTTransformer):
    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = list(updated_node.body)
        if body and _is_docstring(body[0]):
            body = body[1:]
            if body:
                body[0] = body[0].with_changes(leading_lines=())
        return updated_node.with_changes(body=body)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock):
        body = list(updated_node.body)
        if body and _is_docstring(body[0]):
            body = body[1:] or [cst.SimpleStatementLine([cst.Pass()])]
        return updated_node.with_changes(body=body)


class NoDocstrings(Transformation):
    NAME = "no-docstrings"
    FAMILY = "formatting"
    DESCRIPTION = "Module, class and function docstrings removed (a body left empty reads `pass`)."
    NOTHING_TO_REWRITE = "no docstrings"
    EXAMPLES = (
        Example(
            before=(
                '"""Sim."""\n\nimport warp as wp\n\n\ndef step():\n    """One step."""\n\n\n'
                'class A:\n    """A."""\n\n    x = 1\n'
            ),
            after="import warp as wp\n\n\ndef step():\n    pass\n\n\nclass A:\n\n    x = 1\n",
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        if any("__doc__" in text for text in fixture.sources.values()):
            return Skip("the program reads a __doc__")
        return None

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        return module.visit(_DropDocstrings())


class _Compact(cst.CSTTransformer):
    """No comment lines, no trailing comments, no blank lines."""

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine):
        return cst.RemoveFromParent()

    def leave_TrailingWhitespace(self, original_node, updated_node: cst.TrailingWhitespace):
        return updated_node.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))

    def leave_ParenthesizedWhitespace(self, original_node, updated_node: cst.ParenthesizedWhitespace):
        first = updated_node.first_line.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))
        return updated_node.with_changes(first_line=first, empty_lines=())


class Compact(Transformation):
    NAME = "compact"
    FAMILY = "formatting"
    DESCRIPTION = "Comments and blank lines removed: the compact style of a file nobody formats."
    NOTHING_TO_REWRITE = "no comments or blank lines"
    EXAMPLES = (
        Example(
            before=(
                "# Sim.\nimport warp as wp  # the library\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n"
                "    # one thread per item\n    a[wp.tid()] = 1.0\n\n\nx = [\n    1,  # one\n    2,\n]\n"
            ),
            after=(
                "import warp as wp\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n"
                "x = [\n    1,\n    2,\n]\n"
            ),
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        if any("# fmt:" in text or "# type:" in text for text in fixture.sources.values()):
            return Skip("a comment is read by a tool (# fmt: / # type:)")
        return None

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        return module.visit(_Compact()).with_changes(header=(), footer=())
