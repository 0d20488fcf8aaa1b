"""register_overloads: create generic-kernel instances before the first load (CS-6)."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from ._base import Arg, Example, Refusal, WarpCodemod
from ._cst import WarpImports, code, ensure_warp_alias, insert_at, is_kernel, parse_stmt, squash
from ._partial import Focus


class _Rename(cst.CSTTransformer):
    """Rewrites the `wp` root of type expressions to the file's own Warp alias."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.alias) if updated_node.value == "wp" else updated_node


class _Identifiers(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)


def _suffix(types: list[cst.BaseExpression], alias: str) -> str:
    """`[wp.array(dtype=wp.float32), wp.float32]` -> "float32" (distinct type identifiers, in order)."""
    collector = _Identifiers()
    for t in types:
        t.visit(collector)
    skip = {alias, "wp", "warp", "array", "dtype", "ndim", "indexedarray", "fabricarray"}
    return "_".join(dict.fromkeys(n for n in collector.names if n not in skip)) or "overload"


class RegisterOverloads(WarpCodemod):
    """Adds `<kernel>_<types> = wp.overload(<kernel>, [...])` right after a generic kernel's definition
    (after any existing overload lines for it), so each routinely used instance exists before the
    module's first load instead of triggering a rebuild when first launched. The assignment keeps the
    returned kernel referenced.

    args:
      file (str): the file (relative to the repo root).
      kernel (str): name of the module-level generic kernel.
      overloads (list): one entry per instance; each is either a list of type expressions (one per
        kernel parameter, written with `wp.`; rewritten to the file's alias), e.g.
        ["wp.array(dtype=wp.float32)", "wp.float32"], or a dict {"types": <list or {param: type}>,
        "name": "<variable name>"} (name optional; default `<kernel>_<type identifiers>`).

    Refuses when the kernel is not a module-level Warp kernel, a type does not parse, a list has
    the wrong length or a dict names unknown parameters, or the variable name is already bound to
    something else.
    """

    NAME = "register_overloads"
    DESCRIPTION = "Register given overloads of a generic kernel at module scope, keeping references."
    ARGS = (
        Arg("kernel", "str", "module-level generic kernel name", required=True),
        Arg("overloads", "json", 'list of type lists or {"types": ..., "name": ...} dicts', required=True),
    )
    EXAMPLES = (
        Example(
            title="two dtypes",
            args={
                "file": "ops.py",
                "kernel": "scale",
                "overloads": [
                    ["wp.array(dtype=wp.float32)", "wp.float32"],
                    {"types": ["wp.array(dtype=wp.float64)", "wp.float64"], "name": "scale_f64"},
                ],
            },
            before=(
                "import warp as wp\nfrom typing import Any\n\n\n@wp.kernel\n"
                "def scale(x: wp.array(dtype=Any), s: Any):\n    x[wp.tid()] = x[wp.tid()] * s\n\n\n"
                "def run():\n    pass\n"
            ),
            after=(
                "import warp as wp\nfrom typing import Any\n\n\n@wp.kernel\n"
                "def scale(x: wp.array(dtype=Any), s: Any):\n    x[wp.tid()] = x[wp.tid()] * s\n\n\n"
                "scale_float32 = wp.overload(scale, [wp.array(dtype=wp.float32), wp.float32])\n"
                "scale_f64 = wp.overload(scale, [wp.array(dtype=wp.float64), wp.float64])\n\n\n"
                "def run():\n    pass\n"
            ),
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\n\n\n@wp.kernel\ndef k(a: Any, b: Any):\n    pass\n",
            args={"kernel": "k", "overloads": [["wp.float32"]]},
            reason="takes 2 parameters",
        ),
        Refusal(
            before="import warp as wp\n\n\ndef make():\n    @wp.kernel\n    def k(a: Any):\n        pass\n",
            args={"kernel": "k", "overloads": [["wp.float32"]]},
            reason="no module-level kernel",
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        """Also what binds a default variable name (`<kernel>_<types>`) at module scope."""
        kernel = kwargs.get("kernel")
        return Focus.of(kwargs, prefixes=(f"{kernel}_",) if isinstance(kernel, str) else ())

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        name = self.args["kernel"]
        index, kernel = next(
            (
                (i, s)
                for i, s in enumerate(tree.body)
                if isinstance(s, cst.FunctionDef) and s.name.value == name
            ),
            (None, None),
        )
        if kernel is None or index is None or not is_kernel(kernel, warp):
            raise self.refuse(f"no module-level kernel named {name!r}")
        alias = ensure_warp_alias(self, warp)
        params = [p.name.value for p in kernel.params.params]

        bound = self._bound_names(tree)
        existing = {squash(code(s)) for s in tree.body if isinstance(s, cst.SimpleStatementLine)}
        new: list[cst.SimpleStatementLine] = []
        for entry in self.args["overloads"] or []:
            text, var = self._statement(entry, alias, name, params)
            if squash(text) in existing or any(code(s).strip() == text for s in new):
                continue
            if var in bound:
                raise self.refuse(f'{var!r} is already bound at module scope; give another "name"')
            new.append(parse_stmt(text))
        if not new:
            return tree

        position = index + 1
        while position < len(tree.body) and self._is_overload_of(tree.body[position], name, warp):
            position += 1
        if position == index + 1:
            new[0] = new[0].with_changes(leading_lines=[cst.EmptyLine()] * 2)
        return tree.with_changes(body=insert_at(tree.body, position, new))

    def _statement(self, entry: Any, alias: str, kernel: str, params: list[str]) -> tuple[str, str]:
        var = None
        types = entry
        if isinstance(entry, dict):
            types, var = entry.get("types"), entry.get("name")
        if isinstance(types, dict):
            unknown = sorted(set(types) - set(params))
            if unknown:
                raise self.refuse(f"{kernel}() has no parameter(s) {unknown}")
            exprs = {k: self._type(v, alias) for k, v in types.items()}
            rendered = "{" + ", ".join(f'"{k}": {code(v)}' for k, v in exprs.items()) + "}"
            values = list(exprs.values())
        elif isinstance(types, list):
            if len(types) != len(params):
                raise self.refuse(f"{kernel}() takes {len(params)} parameters, got {len(types)} types")
            values = [self._type(t, alias) for t in types]
            rendered = "[" + ", ".join(code(v) for v in values) + "]"
        else:
            raise self.refuse(f"an overload must be a list of types or a dict, got {entry!r}")
        var = var or f"{kernel}_{_suffix(values, alias)}"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise self.refuse(f"{var!r} is not a valid variable name")
        return f"{var} = {alias}.overload({kernel}, {rendered})", var

    def _type(self, text: Any, alias: str) -> cst.BaseExpression:
        try:
            expr = cst.parse_expression(str(text))
        except cst.ParserSyntaxError:
            raise self.refuse(f"type {text!r} is not a Python expression") from None
        return expr.visit(_Rename(alias)) if alias != "wp" else expr  # type: ignore[return-value]

    @staticmethod
    def _bound_names(tree: cst.Module) -> set[str]:
        names: set[str] = set()
        for stmt in tree.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                names.add(stmt.name.value)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        names.update(code(t.target) for t in small.targets)
        return names

    @staticmethod
    def _is_overload_of(stmt: cst.BaseStatement, kernel: str, warp: WarpImports) -> bool:
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
            return False
        small = stmt.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        return (
            isinstance(value, cst.Call)
            and warp.is_call_to(value, "overload")
            and bool(value.args)
            and code(value.args[0].value) == kernel
        )


__all__ = ["RegisterOverloads"]
