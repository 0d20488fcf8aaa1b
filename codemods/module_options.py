"""module_options: set options of a Warp module where Warp reads them, before any load (CS-10, CS-7).

Three kinds of module, three places (warp-lang 1.19): a file's own module takes a module-scope
`wp.set_module_options({...})`; a string-named module takes `wp.set_module_options({...}, module="name")`;
a `module="unique"` kernel takes `module_options={...}` in its `wp.kernel` decorator or call.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    find_functions,
    from_warp_index,
    header_end,
    insert_at,
    is_import_line,
    is_string,
    kernel_decorator,
    keyword,
    literal_value,
    parse_stmt,
    py_literal,
    replace_nodes,
    single_call,
    with_blank_line_before,
    with_keyword,
    with_warp_import,
)
from ._partial import Focus
from .specs import ModuleOptionsArgs

_LOADS = ("launch", "launch_tiled", "load_module", "force_load")


DENSE_BEFORE = '''\
"""Inference-only layers: no gradients are ever taken through these kernels."""

import os

import numpy as np
from warp import array, kernel, launch, tid

from .activations import relu

DEVICE = os.environ.get("NN_DEVICE", "cuda:0")


@kernel
def dense_forward(x: array(dtype=float), w: array(dtype=float), y: array(dtype=float)):
    i = tid()
    y[i] = relu(x[i] * w[i])


def infer(x: np.ndarray, w: np.ndarray, out: array | None = None) -> array:
    """Run the dense layer on `x` with weights `w`."""
    y = out if out is not None else array(np.empty_like(x), dtype=float)
    launch(dense_forward, dim=x.shape[0], inputs=[array(x, dtype=float), array(w, dtype=float), y], device=DEVICE)
    return y
'''
DENSE_AFTER = '''\
"""Inference-only layers: no gradients are ever taken through these kernels."""

import os

import numpy as np
import warp as wp
from warp import array, kernel, launch, tid

from .activations import relu

wp.set_module_options({"enable_backward": False})

DEVICE = os.environ.get("NN_DEVICE", "cuda:0")


@kernel
def dense_forward(x: array(dtype=float), w: array(dtype=float), y: array(dtype=float)):
    i = tid()
    y[i] = relu(x[i] * w[i])


def infer(x: np.ndarray, w: np.ndarray, out: array | None = None) -> array:
    """Run the dense layer on `x` with weights `w`."""
    y = out if out is not None else array(np.empty_like(x), dtype=float)
    launch(dense_forward, dim=x.shape[0], inputs=[array(x, dtype=float), array(w, dtype=float), y], device=DEVICE)
    return y
'''


class ModuleOptions(WarpCodemod):
    """Sets literal options of one Warp module at the place Warp reads them, so the module is first
    built with them (e.g. `enable_backward` off for a forward-only tile module: the per-kernel flag
    still links adjoint GEMMs, the module option does not; or a MathDx switch).

    Which module, and where the options go:
      - neither `module` nor `kernel`: the file's own module (the Python module's name):
        `wp.set_module_options({...})` right after the file's import header.
      - `module`: a string-named module (`@wp.kernel(module="solver.prepare")`):
        `wp.set_module_options({...}, module="solver.prepare")` at module scope right after the last
        top-level kernel of that module in the file (right after the import header when the file
        defines its kernels only inside functions). For a module spanning several files the caller
        names one of them; a call already present in that file counts.
      - `kernel`: a `module="unique"` kernel: `module_options={...}` is added to (or merged into) its
        `@wp.kernel(module="unique", ...)` decorator or its `wp.kernel(fn, module="unique", ...)` call.

    Options already set to the same values are left alone (idempotent). Refuses when `options` is not
    a non-empty dict; when `module` and `kernel` are both given or `module` is "unique"; when the file
    defines no kernel of `module`, or a module-scope launch or load (`wp.launch` of one of its
    kernels, any `wp.load_module` / `wp.force_load`) comes before the place the options would go;
    when `kernel` is not found, found more than once, is not declared with `module="unique"` (Warp
    raises ValueError for `module_options` without it) or its `module_options` is not a dict literal.
    """

    NAME = "module_options"
    ARGS_TYPE = ModuleOptionsArgs
    DESCRIPTION = "Set a Warp module's options (file, string-named or unique kernel) before it can load."
    EXAMPLES = (
        Example(
            title="backward off for a forward-only module",
            args={"file": "layer.py", "options": {"enable_backward": False}},
            before='import warp as wp\n\n\n@wp.kernel\ndef gemm(a: wp.array(dtype=float)):\n    pass\n',
            after=(
                'import warp as wp\n\nwp.set_module_options({"enable_backward": False})\n\n\n'
                "@wp.kernel\ndef gemm(a: wp.array(dtype=float)):\n    pass\n"
            ),
        ),
        Example(
            title="MathDx forced on at module scope, turned off in place",
            args={"file": "gemm.py", "options": {"enable_mathdx_gemm": False}, "replace": True},
            before='import warp as wp\n\nwp.set_module_options({"enable_mathdx_gemm": True, "max_unroll": 4})\n',
            after='import warp as wp\n\nwp.set_module_options({"enable_mathdx_gemm": False, "max_unroll": 4})\n',
        ),
        Example(
            title="a string-named module: after its last kernel in the file",
            args={"file": "solver/prepare.py", "options": {"enable_backward": False}, "module": "solver.prepare"},
            before=(
                "import warp as wp\n\n\n"
                '@wp.kernel(module="solver.prepare")\ndef clear(x: wp.array(dtype=float)):\n'
                "    x[wp.tid()] = 0.0\n\n\n"
                '@wp.kernel(module="solver.prepare")\ndef fill(x: wp.array(dtype=float), v: float):\n'
                "    x[wp.tid()] = v\n\n\n"
                "def prepare(x):\n    wp.launch(clear, dim=x.shape, inputs=[x])\n"
            ),
            after=(
                "import warp as wp\n\n\n"
                '@wp.kernel(module="solver.prepare")\ndef clear(x: wp.array(dtype=float)):\n'
                "    x[wp.tid()] = 0.0\n\n\n"
                '@wp.kernel(module="solver.prepare")\ndef fill(x: wp.array(dtype=float), v: float):\n'
                "    x[wp.tid()] = v\n\n\n"
                'wp.set_module_options({"enable_backward": False}, module="solver.prepare")\n\n\n'
                "def prepare(x):\n    wp.launch(clear, dim=x.shape, inputs=[x])\n"
            ),
        ),
        Example(
            title="a unique kernel: module_options in its decorator",
            args={"file": "tiles.py", "options": {"enable_backward": False}, "kernel": "tile_gemm"},
            before=(
                "import warp as wp\n\n\n"
                '@wp.kernel(module="unique")\ndef tile_gemm(a: wp.array2d(dtype=float)):\n    pass\n'
            ),
            after=(
                "import warp as wp\n\n\n"
                '@wp.kernel(module="unique", module_options={"enable_backward": False})\n'
                "def tile_gemm(a: wp.array2d(dtype=float)):\n    pass\n"
            ),
        ),
        Example(
            title="a unique kernel made by a factory's wp.kernel call: merged into its module_options",
            args={"file": "tiles.py", "options": {"enable_mathdx_gemm": False}, "kernel": "gemm"},
            before=(
                "import warp as wp\n\n\ndef make(gemm):\n"
                '    return wp.kernel(gemm, module="unique", module_options={"fast_math": True})\n'
            ),
            after=(
                "import warp as wp\n\n\ndef make(gemm):\n"
                '    return wp.kernel(gemm, module="unique", module_options={"fast_math": True, '
                '"enable_mathdx_gemm": False})\n'
            ),
        ),
        Example(
            title="a project's `from warp import` file: `import warp as wp` joins its third-party section",
            args={"file": "nn/dense.py", "options": {"enable_backward": False}},
            before=DENSE_BEFORE,
            after=DENSE_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before='import warp as wp\nwp.set_module_options({"enable_backward": True})\n',
            args={"options": {"enable_backward": False}},
            reason="already sets enable_backward",
        ),
        Refusal(
            before=(
                'import warp as wp\n\n\n@wp.kernel(module="prep")\ndef a(x: float):\n    pass\n\n\n'
                'wp.launch(a, dim=1, inputs=[1.0])\n\n\n@wp.kernel(module="prep")\ndef b(x: float):\n    pass\n'
            ),
            args={"options": {"enable_backward": False}, "module": "prep"},
            reason="launches or loads before",
        ),
        Refusal(
            before="import warp as wp\n\n\n@wp.kernel\ndef a(x: float):\n    pass\n",
            args={"options": {"enable_backward": False}, "module": "prep"},
            reason='no kernel of module "prep"',
        ),
        Refusal(
            before='import warp as wp\n\n\n@wp.kernel(module="ops")\ndef k(x: float):\n    pass\n',
            args={"options": {"enable_backward": False}, "kernel": "k"},
            reason='module="unique"',
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make_x(size, enable_backward=True):\n"
                "    def body(a: wp.array(dtype=float)):\n        a[wp.tid()] = float(size)\n\n"
                '    return wp.kernel(body, module="unique", module_options={"enable_backward": enable_backward})\n'
            ),
            args={"options": {"enable_backward": False}, "kernel": "body", "replace": True},
            reason="change the value where it is passed, never the factory",
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        """Also module-scope launches: they must not come before the options of a named module."""
        focus = Focus.of(kwargs)
        return replace(focus, words=focus.words | set(_LOADS))

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        options: dict[str, Any] = self.args["options"]
        if not isinstance(options, dict) or not options:
            raise self.refuse("options must be a non-empty dict")
        module, kernel = self.args["module"], self.args["kernel"]
        if module is not None and kernel is not None:
            raise self.refuse("give `module` or `kernel`, not both")
        if module == "unique":
            raise self.refuse('module="unique" has one module per kernel: give `kernel` instead')
        if kernel is not None:
            return self._unique_kernel(tree, warp, kernel, options)

        present = module_scope_options(tree, warp, module)
        conflicts = {k: v for k, v in options.items() if k in present and present[k] != v}
        if conflicts and not self.args["replace"]:
            raise self.refuse(f"a module-scope call already sets {', '.join(conflicts)} to another value")
        if conflicts:
            tree = tree.visit(_ReplaceValues(warp, module, conflicts))
        missing = {k: v for k, v in options.items() if k not in present}
        if not missing:
            return tree
        alias = warp.alias or "wp"
        target = "" if module is None else f", module={json.dumps(module)}"
        statement = parse_stmt(f"{alias}.set_module_options({py_literal(missing)}{target})")
        body = list(tree.body)
        if module is None:
            index = header_end(tree, warp)
            if not warp.alias or (index and is_import_line(body[index - 1])):
                statement = with_blank_line_before(statement)  # code after imports, as ruff's isort rule wants
            in_section = not warp.alias and from_warp_index(tree) is not None  # placed by with_warp_import
            new = [statement] if warp.alias or in_section else [parse_stmt("import warp as wp"), statement]
            tree = tree.with_changes(body=insert_at(body, index, new))
            return with_warp_import(tree) if in_section else tree
        index = self._after_named_kernels(tree, warp, module)
        if index == header_end(tree, warp):
            statement = with_blank_line_before(statement)
        elif isinstance(body[index - 1], (cst.FunctionDef, cst.ClassDef)):
            statement = with_blank_line_before(statement, 2)  # after a def, as ruff format leaves it
        tree = tree.with_changes(body=insert_at(body, index, [statement]))
        return tree if warp.alias else with_warp_import(tree)  # `wp.` needs its import

    def _after_named_kernels(self, tree: cst.Module, warp: WarpImports, module: str) -> int:
        """Index right after the last top-level kernel of `module`; refuses a module-scope load before it."""
        kernels: set[str] = set()
        last = -1
        for i, stmt in enumerate(tree.body):
            names = _named_module_kernels(stmt, warp, module)
            if names:
                kernels |= names
                last = i
        if last < 0:
            if not any(_named_module_kernels(f.node, warp, module) for f in find_functions(tree)):
                raise self.refuse(f"no kernel of module {json.dumps(module)} in this file")
            return header_end(tree, warp)
        for stmt in tree.body[:last]:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            finder = _LoadCalls(warp, kernels)
            stmt.visit(finder)
            if finder.found is not None:
                raise self.refuse(
                    f"`{code(finder.found)}` launches or loads before the last kernel of "
                    f"{json.dumps(module)}: its options would come too late"
                )
        return last + 1

    def _unique_kernel(
        self, tree: cst.Module, warp: WarpImports, kernel: str, options: dict[str, Any]
    ) -> cst.Module:
        finder = _KernelSites(warp, kernel)
        tree.visit(finder)
        sites = finder.sites + [
            dec
            for f in find_functions(tree)
            if f.node.name.value == kernel and (dec := kernel_decorator(f.node, warp)) is not None
        ]
        if not sites:
            raise self.refuse(f"no wp.kernel def or wp.kernel({kernel}, ...) call of {kernel!r}")
        if len(sites) > 1:
            raise self.refuse(f"{kernel!r} is declared as a kernel {len(sites)} times; which one is meant?")
        site = sites[0]
        call = site.decorator if isinstance(site, cst.Decorator) else site
        module = keyword(call, "module") if isinstance(call, cst.Call) else None
        if module is None or not is_string(module.value, "unique"):
            raise self.refuse(
                f'{kernel}() is not declared with module="unique": Warp raises ValueError for '
                "module_options without it (use `module` for a named module)"
            )
        assert isinstance(call, cst.Call)
        existing = keyword(call, "module_options")
        if existing is None:
            new_call = with_keyword(call, "module_options", cst.parse_expression(py_literal(options)))
        elif not isinstance(existing.value, cst.Dict):
            raise self.refuse(f"{kernel}(): module_options={code(existing.value)} is not a dict literal")
        else:
            new_call = with_keyword(call, "module_options", self._merged(kernel, existing.value, options))
        if new_call.deep_equals(call):
            return tree
        new_site = site.with_changes(decorator=new_call) if isinstance(site, cst.Decorator) else new_call
        return replace_nodes(tree, {site: new_site})

    def _merged(self, kernel: str, literal: cst.Dict, options: dict[str, Any]) -> cst.Dict:
        present: dict[Any, Any] = {}
        computed: dict[Any, str] = {}  # keys whose value is an expression: a factory parameter, a caller's choice
        for element in literal.elements:
            if isinstance(element, cst.DictElement):
                ok_key, key = literal_value(element.key)
                ok_value, value = literal_value(element.value)
                if ok_key:
                    present[key] = value if ok_value else code(element.value)
                    if not ok_value:
                        computed[key] = code(element.value)
        passed = {k: computed[k] for k in options if k in computed}
        if passed:
            key, source = next(iter(passed.items()))
            raise self.refuse(
                f"{kernel}(): module_options takes {key} from `{source}`, which its callers pass: change the value "
                "where it is passed, never the factory"
            )
        conflicts = {k: v for k, v in options.items() if k in present and present[k] != v}
        if conflicts and not self.args["replace"]:
            raise self.refuse(f"{kernel}(): module_options already sets {', '.join(conflicts)} to another value")
        merged = _with_values(literal, conflicts)
        missing = {k: v for k, v in options.items() if k not in present}
        if not missing:
            return merged
        extra = cst.parse_expression(py_literal(missing))
        assert isinstance(extra, cst.Dict)
        elements = list(merged.elements)
        if elements:
            elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return merged.with_changes(elements=[*elements, *extra.elements])


def _options_target(call: cst.Call, warp: WarpImports) -> tuple[bool, str | None, cst.BaseExpression | None]:
    """(is an options call, the string-named module it targets or None for the file's own module, the
    options expression) for `set_module_options({...}[, module="x"])` / `get_module("x").options.update({...})`."""
    if warp.is_call_to(call, "set_module_options") and call.args:
        rest = call.args[1:]
        if not rest:
            return True, None, call.args[0].value
        target = rest[0].value
        by_name = rest[0].keyword is None or rest[0].keyword.value == "module"
        if len(rest) == 1 and by_name and isinstance(target, cst.SimpleString):
            return True, target.evaluated_value, call.args[0].value  # type: ignore[return-value]
        return False, None, None
    func = call.func
    if (
        isinstance(func, cst.Attribute)
        and func.attr.value == "update"
        and isinstance(func.value, cst.Attribute)
        and func.value.attr.value == "options"
        and isinstance(func.value.value, cst.Call)
        and warp.is_call_to(func.value.value, "get_module")
        and len(call.args) == 1
    ):
        name = func.value.value.args[0].value if func.value.value.args else None
        if isinstance(name, cst.SimpleString):
            return True, name.evaluated_value, call.args[0].value  # type: ignore[return-value]
    return False, None, None


def module_scope_options(tree: cst.Module, warp: WarpImports, module: str | None) -> dict[str, Any]:
    """Literal options that module-scope calls already set for the module."""
    found: dict[str, Any] = {}
    for stmt in tree.body:
        call = single_call(stmt)
        if call is None:
            continue
        is_options, target, value = _options_target(call, warp)
        if not is_options or target != module or not isinstance(value, cst.Dict):
            continue
        for element in value.elements:
            if isinstance(element, cst.DictElement):
                ok_key, key = literal_value(element.key)
                ok_value, item = literal_value(element.value)
                if ok_key and ok_value:
                    found[key] = item
    return found


def computed_module_scope_options(tree: cst.Module, warp: WarpImports, module: str | None) -> list[str]:
    """The options module-scope calls set for the module from values computed at import (`{"fast_math": MODE ==
    "fast"}`, or a dict that is not a literal): as written, keys where they are literal."""
    found: list[str] = []
    for stmt in tree.body:
        call = single_call(stmt)
        if call is None:
            continue
        is_options, target, value = _options_target(call, warp)
        if not is_options or target != module:
            continue
        if not isinstance(value, cst.Dict):
            found.append(tree.code_for_node(value) if value is not None else "options")
            continue
        for element in value.elements:
            ok_key, key = literal_value(element.key) if isinstance(element, cst.DictElement) else (False, None)
            ok_value = isinstance(element, cst.DictElement) and literal_value(element.value)[0]
            if not (ok_key and ok_value):
                found.append(str(key) if ok_key else tree.code_for_node(element))
    return found


def _with_values(literal: cst.Dict, values: dict[str, Any]) -> cst.Dict:
    """The dict literal with the values of `values`' keys set, the rest as written."""
    elements = []
    for element in literal.elements:
        if isinstance(element, cst.DictElement):
            ok, key = literal_value(element.key)
            if ok and isinstance(key, str) and key in values:
                element = element.with_changes(value=cst.parse_expression(py_literal(values[key])))
        elements.append(element)
    return literal.with_changes(elements=elements)


def _named_module_kernels(node: cst.CSTNode, warp: WarpImports, module: str) -> set[str]:
    """Names of the kernels `node` (a top-level statement or def) declares in the string-named `module`."""
    if isinstance(node, cst.FunctionDef):
        dec = kernel_decorator(node, warp)
        if dec is not None and isinstance(dec.decorator, cst.Call):
            value = keyword(dec.decorator, "module")
            if value is not None and is_string(value.value, module):
                return {node.name.value}
        return set()
    if isinstance(node, cst.ClassDef):
        return set()
    finder = _KernelCalls(warp, module)
    node.visit(finder)
    return finder.names


class _KernelCalls(cst.CSTVisitor):
    """`k = wp.kernel(f, module="<module>")`: the names bound to kernels of a string-named module."""

    def __init__(self, warp: WarpImports, module: str) -> None:
        self.warp, self.module = warp, module
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        call = node.value
        if isinstance(call, cst.Call) and self.warp.is_call_to(call, "kernel"):
            value = keyword(call, "module")
            if value is not None and is_string(value.value, self.module):
                self.names |= {code(t.target) for t in node.targets}


class _KernelSites(cst.CSTVisitor):
    """`wp.kernel(<name>, ...)` calls anywhere in the file."""

    def __init__(self, warp: WarpImports, name: str) -> None:
        self.warp, self.name = warp, name
        self.sites: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.warp.is_call_to(node, "kernel") and node.args and node.args[0].keyword is None:
            first = node.args[0].value
            if isinstance(first, cst.Name) and first.value == self.name:
                self.sites.append(node)


class _LoadCalls(cst.CSTVisitor):
    """The first `wp.launch`/`wp.launch_tiled` of one of `kernels`, or any `wp.load_module`/`wp.force_load`."""

    def __init__(self, warp: WarpImports, kernels: set[str]) -> None:
        self.warp, self.kernels = warp, kernels
        self.found: cst.Call | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is not None:
            return
        if self.warp.is_call_to(node, "load_module", "force_load"):
            self.found = node
        elif self.warp.is_call_to(node, "launch", "launch_tiled") and node.args:
            first = keyword(node, "kernel") or node.args[0]
            if code(first.value) in self.kernels:
                self.found = node


class _ReplaceValues(cst.CSTTransformer):
    """Sets literal values of keys in the module-scope options calls of one module, leaving the rest as is."""

    def __init__(self, warp: WarpImports, module: str | None, values: dict[str, Any]):
        super().__init__()
        self.warp, self.module, self.values = warp, module, values

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # module scope only

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        is_options, target, value = _options_target(original, self.warp)
        if not is_options or target != self.module or not isinstance(value, cst.Dict):
            return updated
        new_value = _with_values(value, self.values)
        return updated.with_changes(args=[updated.args[0].with_changes(value=new_value), *updated.args[1:]])
