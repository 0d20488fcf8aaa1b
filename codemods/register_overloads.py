"""register_overloads: create generic-kernel instances before the first load (CS-6)."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    ensure_warp_alias,
    functions_named,
    insert_at,
    insert_next_to,
    is_kernel,
    parse_stmt,
    squash,
)
from ._partial import Focus
from .specs import RegisterOverloadsArgs


class _Rename(cst.CSTTransformer):
    """Rewrites the `wp` root of type expressions to the file's own Warp alias."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.alias) if updated_node.value == "wp" else updated_node


class _Identifiers(cst.CSTVisitor):
    """The type words of overload types, in order; `wp.types.matrix(shape=(3, 1), dtype=...)` reads `mat31`."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Call(self, node: cst.Call) -> bool:
        function = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        if function not in ("matrix", "vector"):
            return True
        size = next((a.value for a in node.args if a.keyword and a.keyword.value in ("shape", "length")), None)
        digits = "".join(e.value for e in _integers(size))
        self.names.append(("mat" if function == "matrix" else "vec") + digits)
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value == "dtype":
                arg.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # the keyword's own name (dtype=, ndim=) is no type word
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)


def _integers(node: cst.BaseExpression | None) -> list[cst.Integer]:
    if isinstance(node, cst.Integer):
        return [node]
    if isinstance(node, cst.Tuple):
        return [e.value for e in node.elements if isinstance(e.value, cst.Integer)]
    return []


def _suffix(types: list[cst.BaseExpression], alias: str) -> str:
    """`[wp.array(dtype=wp.float32), wp.float32]` -> "float32" (distinct type words, in order);
    `[wp.array(dtype=wp.types.matrix(shape=(3, 1), dtype=wp.float32))]` -> "mat31_float32"."""
    collector = _Identifiers()
    for t in types:
        t.visit(collector)
    skip = {alias, "wp", "warp", "types", "array", "indexedarray", "fabricarray"}
    return "_".join(dict.fromkeys(n for n in collector.names if n not in skip)) or "overload"


# Compound statements a def cannot be followed within: the lines after it would not run exactly when it does (a
# loop runs it zero or several times, a `try` may leave between them). `if`/`else` and `with` blocks are fine.
_PLACES = {cst.For: "for loop", cst.While: "while loop", cst.Try: "try statement", cst.TryStar: "try statement",
           cst.Match: "match statement"}  # fmt: skip
LINE_LENGTH = 120


class _Bindings(cst.CSTVisitor):
    """Counts what binds `name` in one function's own scope (nested defs, classes and lambdas are other scopes;
    a `nonlocal` in them still rebinds it)."""

    def __init__(self, name: str, scope: cst.FunctionDef) -> None:
        self.name, self.scope = name, scope
        self.count = 0

    def _bind(self, target: cst.CSTNode | None) -> None:
        if isinstance(target, cst.Name):
            self.count += target.value == self.name
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node is self.scope:
            return True
        self._bind(node.name)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._bind(node.name)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        self._bind(node.asname.name if node.asname else None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._bind(node.name.name if node.name else None)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound = node.asname.name if node.asname else node.name
        self._bind(bound if isinstance(bound, cst.Name) else None)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.count += any(n.name.value == self.name for n in node.names)

    def visit_Global(self, node: cst.Global) -> None:
        self.count += any(n.name.value == self.name for n in node.names)


def _nested_defs(
    block: cst.BaseSuite, name: str, containers: tuple[type, ...] = ()
) -> list[tuple[cst.FunctionDef, cst.IndentedBlock, tuple[type, ...]]]:
    """Defs named `name` in a function's own scope: (def, the block holding it, the compound statements it is in)."""
    found: list[tuple[cst.FunctionDef, cst.IndentedBlock, tuple[type, ...]]] = []
    if not isinstance(block, cst.IndentedBlock):
        return found
    for stmt in block.body:
        if isinstance(stmt, cst.FunctionDef):
            if stmt.name.value == name:
                found.append((stmt, block, containers))
            continue
        if isinstance(stmt, cst.ClassDef):
            continue
        parts: list[tuple[cst.CSTNode, tuple[type, ...]]] = [(stmt, containers)]
        while parts:
            part, outer = parts.pop()
            inside = outer + (type(part),)
            body = getattr(part, "body", None)
            if isinstance(body, cst.BaseSuite):
                found += _nested_defs(body, name, inside)
            for attr in ("orelse", "finalbody"):
                if getattr(part, attr, None) is not None:
                    parts.append((getattr(part, attr), inside))
            parts.extend((child, inside) for child in (*getattr(part, "handlers", ()), *getattr(part, "cases", ())))
    return found


def _overload_call(
    alias: str, kernel: str, items: list[str], brackets: str, column: int, unit: str, prefix: str = ""
) -> str:
    """`<prefix>wp.overload(<kernel>, [<items>])` for a line starting at `column`; one type a line when one line is
    too long (libcst indents the continuation lines with the block the statement goes into)."""
    call = f"{prefix}{alias}.overload({kernel}, {brackets[0]}{', '.join(items)}{brackets[1]})"
    if column + len(call) <= LINE_LENGTH:
        return call
    lines = [f"{prefix}{alias}.overload(", f"{unit}{kernel},", f"{unit}{brackets[0]}"]
    lines += [f"{unit * 2}{text}," for text in items] + [f"{unit}{brackets[1]},", ")"]
    return "\n".join(lines)


REDUCE_BEFORE = '''\
"""Generic reductions over arrays of any float type."""

from typing import Any

import numpy as np
import warp as wp

from ._dispatch import register


@wp.kernel
def sum_into(values: wp.array(dtype=Any), total: wp.array(dtype=Any)):
    """Atomically add every value into total[0]."""
    wp.atomic_add(total, 0, values[wp.tid()])


def reduce_sum(values: np.ndarray) -> float:
    """The sum of `values`, computed on the device."""
    data = wp.array(values)
    total = wp.zeros(1, dtype=data.dtype)
    wp.launch(sum_into, dim=data.shape, inputs=[data, total])
    return float(total.numpy()[0])


register("sum", reduce_sum)
'''
REDUCE_AFTER = '''\
"""Generic reductions over arrays of any float type."""

from typing import Any

import numpy as np
import warp as wp

from ._dispatch import register


@wp.kernel
def sum_into(values: wp.array(dtype=Any), total: wp.array(dtype=Any)):
    """Atomically add every value into total[0]."""
    wp.atomic_add(total, 0, values[wp.tid()])


sum_into_float32 = wp.overload(sum_into, [wp.array(dtype=wp.float32), wp.array(dtype=wp.float32)])
sum_into_float64 = wp.overload(sum_into, [wp.array(dtype=wp.float64), wp.array(dtype=wp.float64)])


def reduce_sum(values: np.ndarray) -> float:
    """The sum of `values`, computed on the device."""
    data = wp.array(values)
    total = wp.zeros(1, dtype=data.dtype)
    wp.launch(sum_into, dim=data.shape, inputs=[data, total])
    return float(total.numpy()[0])


register("sum", reduce_sum)
'''


class RegisterOverloads(WarpCodemod):
    """Adds `<kernel>_<types> = wp.overload(<kernel>, [...])` right after a generic kernel's definition
    (after any existing overload lines for it), so each routinely used instance exists before the
    module's first load instead of triggering a rebuild when first launched. The assignment keeps the
    returned kernel referenced.

    With `factory`, the kernel is the one a function of that name defines (a closure made per call): the
    calls go inside that function right after the kernel's definition, indented with it, as bare
    `wp.overload(...)` statements (the generic kernel keeps its instances; a local name would be unused).
    Each factory call then builds its module once, with the instances in it.

    Refuses when the kernel is not a module-level Warp kernel (or, with `factory`, no such function
    defines it with a decorated def, or several do), a type does not parse, a list has the wrong
    length or a dict names unknown parameters, or the variable name is already bound to something
    else. With `factory`, also when the factory binds the kernel name more than once (the lines
    could register instances on another kernel), or defines it in a loop, a `try` or a `match`
    (lines after the def would not run exactly when it does).
    """

    NAME = "register_overloads"
    ARGS_TYPE = RegisterOverloadsArgs
    DESCRIPTION = "Register given overloads of a generic kernel right after its definition (module scope or factory)."
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
        Example(
            title="a matrix type without a named spelling (warp.fem's apic example): its shape names the variable",
            args={
                "file": "apic.py",
                "kernel": "scale_rows",
                "overloads": [["wp.array(dtype=wp.types.matrix(shape=(3, 1), dtype=wp.float32))", "wp.float32"]],
            },
            before=(
                "import warp as wp\nfrom typing import Any\n\n\n@wp.kernel\n"
                "def scale_rows(m: wp.array[Any], s: Any):\n    m[wp.tid()] = m[wp.tid()] * s\n"
            ),
            after=(
                "import warp as wp\nfrom typing import Any\n\n\n@wp.kernel\n"
                "def scale_rows(m: wp.array[Any], s: Any):\n    m[wp.tid()] = m[wp.tid()] * s\n\n\n"
                "scale_rows_mat31_float32 = wp.overload(\n    scale_rows,\n    [\n"
                "        wp.array(dtype=wp.types.matrix(shape=(3, 1), dtype=wp.float32)),\n        wp.float32,\n"
                "    ],\n)\n"
            ),
        ),
        Example(
            title="inside a factory",
            args={
                "file": "adam.py",
                "kernel": "step",
                "factory": "make_kernels",
                "overloads": [["wp.array(dtype=wp.float32)", "wp.array(dtype=wp.float32)"]],
            },
            before=(
                "import warp as wp\nfrom typing import Any\n\n\ndef make_kernels(beta):\n"
                "    @wp.kernel\n    def tick(t: wp.array1d[Any]):\n        t[0] += 1.0\n\n"
                "    @wp.kernel\n    def step(p: wp.array1d[Any], g: wp.array1d[Any]):\n"
                "        p[wp.tid()] -= wp.static(beta) * g[wp.tid()]\n\n    return tick, step\n"
            ),
            after=(
                "import warp as wp\nfrom typing import Any\n\n\ndef make_kernels(beta):\n"
                "    @wp.kernel\n    def tick(t: wp.array1d[Any]):\n        t[0] += 1.0\n\n"
                "    @wp.kernel\n    def step(p: wp.array1d[Any], g: wp.array1d[Any]):\n"
                "        p[wp.tid()] -= wp.static(beta) * g[wp.tid()]\n\n"
                "    wp.overload(step, [wp.array(dtype=wp.float32), wp.array(dtype=wp.float32)])\n\n"
                "    return tick, step\n"
            ),
        ),
        Example(
            title="in a branch of a factory, one type a line when the call is too long",
            args={
                "file": "ops.py",
                "kernel": "blend",
                "factory": "make",
                "overloads": [["wp.array(dtype=wp.float64, ndim=2)"] * 3],
            },
            before=(
                "import warp as wp\nfrom typing import Any\n\n\ndef make(mode):\n    if mode == \"blend\":\n\n"
                "        @wp.kernel\n        def blend(a: wp.array2d[Any], b: wp.array2d[Any], c: wp.array2d[Any]):\n"
                "            i, j = wp.tid()\n            c[i, j] = a[i, j] + b[i, j]\n\n        return blend\n"
                "    return None\n"
            ),
            after=(
                "import warp as wp\nfrom typing import Any\n\n\ndef make(mode):\n    if mode == \"blend\":\n\n"
                "        @wp.kernel\n        def blend(a: wp.array2d[Any], b: wp.array2d[Any], c: wp.array2d[Any]):\n"
                "            i, j = wp.tid()\n            c[i, j] = a[i, j] + b[i, j]\n\n"
                "        wp.overload(\n            blend,\n            [\n"
                "                wp.array(dtype=wp.float64, ndim=2),\n"
                "                wp.array(dtype=wp.float64, ndim=2),\n"
                "                wp.array(dtype=wp.float64, ndim=2),\n"
                "            ],\n        )\n\n        return blend\n"
                "    return None\n"
            ),
        ),
        Example(
            title="a project's generic kernel: overloads after it, before the code that uses it",
            args={
                "file": "reductions/sum.py",
                "kernel": "sum_into",
                "overloads": [
                    ["wp.array(dtype=wp.float32)", "wp.array(dtype=wp.float32)"],
                    ["wp.array(dtype=wp.float64)", "wp.array(dtype=wp.float64)"],
                ],
            },
            before=REDUCE_BEFORE,
            after=REDUCE_AFTER,
            project_style=True,
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
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make(fast):\n    if fast:\n\n        @wp.kernel\n"
                "        def k(a: Any):\n            pass\n\n    else:\n\n        @wp.kernel\n"
                "        def k(a: Any):\n            pass\n\n    return k\n"
            ),
            args={"kernel": "k", "factory": "make", "overloads": [["wp.float32"]]},
            reason="make() binds 'k' more than once",
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make(sizes):\n    kernels = []\n    for size in sizes:\n\n"
                "        @wp.kernel\n        def k(a: Any):\n            pass\n\n        kernels.append(k)\n"
                "    return kernels\n"
            ),
            args={"kernel": "k", "factory": "make", "overloads": [["wp.float32"]]},
            reason="make() defines 'k' inside a for loop",
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make():\n    @wp.kernel\n    def k(a: Any):\n        pass\n\n"
                "    return k\n"
            ),
            args={"kernel": "k", "factory": "make", "overloads": [{"types": ["wp.float32"], "name": "k_f32"}]},
            reason='are not assigned: drop "name"',
        ),
        Refusal(
            before="import warp as wp\n\n\ndef make():\n    return wp.kernel(lambda a: None)\n",
            args={"kernel": "k", "factory": "make", "overloads": [["wp.float32"]]},
            reason="make() defines no kernel named 'k'",
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        """Also what binds a default variable name (`<kernel>_<types>`) at module scope."""
        kernel = kwargs.get("kernel")
        return Focus.of(kwargs, prefixes=(f"{kernel}_",) if isinstance(kernel, str) else ())

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        if self.args["factory"]:
            return self._in_factory(tree, warp)
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
            text, var = self._statement(entry, alias, name, params, tree.default_indent)
            if squash(text) in existing or any(squash(code(s)) == squash(text) for s in new):
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

    def _in_factory(self, tree: cst.Module, warp: WarpImports) -> cst.Module:
        """Bare `wp.overload(...)` lines right after the kernel's def inside the factory, in the same block."""
        name, factory = self.args["kernel"], self.args["factory"]
        functions = functions_named(tree, factory)
        if not functions:
            raise self.refuse(f"no function named {factory!r}")
        places = [(found, *place) for found in functions for place in _nested_defs(found.node.body, name)]
        if not places:
            raise self.refuse(f"{factory}() defines no kernel named {name!r} with a def")
        if len({id(found.node) for found, *_ in places}) > 1:
            raise self.refuse(f"several functions named {factory!r} define {name!r}")
        (found, kernel, block, containers), *_ = places
        bindings = _Bindings(name, found.node)
        found.node.visit(bindings)
        if bindings.count > 1:
            raise self.refuse(
                f"{factory}() binds {name!r} more than once: the overloads could be registered on another kernel"
            )
        if not is_kernel(kernel, warp):
            raise self.refuse(f"{name!r} in {factory}() is not decorated with wp.kernel")
        unplaceable = next((_PLACES[c] for c in containers if c in _PLACES), None)
        if unplaceable:
            raise self.refuse(
                f"{factory}() defines {name!r} inside a {unplaceable}: lines after the def would not run "
                "exactly when it does"
            )
        alias = ensure_warp_alias(self, warp)
        params = [p.name.value for p in kernel.params.params]
        column = self.lines.positions(self.lines.index_of(found.top))[kernel].start.column

        existing = {squash(code(s)) for s in block.body if isinstance(s, cst.SimpleStatementLine)}
        new: list[cst.SimpleStatementLine] = []
        for entry in self.args["overloads"] or []:
            if isinstance(entry, dict) and entry.get("name"):
                raise self.refuse(f'the overloads made in {factory}() are not assigned: drop "name"')
            types = entry.get("types") if isinstance(entry, dict) else entry
            items, brackets, _ = self._types(types, alias, name, params)
            text = _overload_call(alias, name, items, brackets, column, tree.default_indent)
            if squash(text) not in existing and all(squash(code(s)) != squash(text) for s in new):
                new.append(parse_stmt(text))
        if not new:
            return tree

        position = block.body.index(kernel) + 1
        while position < len(block.body) and self._is_overload_of(block.body[position], name, warp):
            position += 1
        if position == block.body.index(kernel) + 1:
            new[0] = new[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        return insert_next_to(tree, block.body[position - 1], new, after=True, within=[found.top])

    def _statement(self, entry: Any, alias: str, kernel: str, params: list[str], unit: str) -> tuple[str, str]:
        var = None
        types = entry
        if isinstance(entry, dict):
            types, var = entry.get("types"), entry.get("name")
        items, brackets, values = self._types(types, alias, kernel, params)
        var = var or f"{kernel}_{_suffix(values, alias)}"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise self.refuse(f"{var!r} is not a valid variable name")
        return _overload_call(alias, kernel, items, brackets, 0, unit, prefix=f"{var} = "), var

    def _types(
        self, types: Any, alias: str, kernel: str, params: list[str]
    ) -> tuple[list[str], str, list[cst.BaseExpression]]:
        """The rendered entries of a list or {param: type} dict of types, its brackets, and the type expressions."""
        if isinstance(types, dict):
            unknown = sorted(set(types) - set(params))
            if unknown:
                raise self.refuse(f"{kernel}() has no parameter(s) {unknown}")
            exprs = {k: self._type(v, alias) for k, v in types.items()}
            return [f'"{k}": {code(v)}' for k, v in exprs.items()], "{}", list(exprs.values())
        if isinstance(types, list):
            if len(types) != len(params):
                raise self.refuse(f"{kernel}() takes {len(params)} parameters, got {len(types)} types")
            values = [self._type(t, alias) for t in types]
            return [code(v) for v in values], "[]", values
        raise self.refuse(f"an overload must be a list of types or a dict, got {types!r}")

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
