"""module_options: set options of one file's Warp module at module scope (CS-10, per module)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ._base import Arg, Example, Refusal, WarpCodemod
from ._cst import WarpImports, header_end, insert_at, literal_value, parse_stmt, py_literal, single_call


class ModuleOptions(WarpCodemod):
    """Adds `wp.set_module_options({...})` at module scope, right after the import header, so the file's
    module is created and first built with these options (e.g. `enable_backward` off for a forward-only
    tile module: the per-kernel flag still links adjoint GEMMs, the module option does not).

    args:
      file (str): the file that owns the module (relative to the repo root).
      options (dict): literal options, e.g. {"enable_backward": false}.

      replace (bool): change a key that a module-scope call sets to another value, in place (e.g.
        `enable_mathdx_gemm` forced on); without it such a conflict is refused.

    A module-scope `set_module_options` call that already sets the same values is left alone (idempotent).
    """

    NAME = "module_options"
    DESCRIPTION = "Set a file's Warp module options at module scope, before any kernel can load."
    ARGS = (
        Arg("options", "json", "literal module options", required=True),
        Arg("replace", "json", "change a conflicting module-scope value in place (true/false)", default=False),
    )
    EXAMPLES = (
        Example(
            title="backward off for a forward-only module",
            args={"file": "layer.py", "options": {"enable_backward": False}},
            before='import warp as wp\n\n\n@wp.kernel\ndef gemm(a: wp.array(dtype=float)):\n    pass\n',
            after=(
                'import warp as wp\nwp.set_module_options({"enable_backward": False})\n\n\n'
                "@wp.kernel\ndef gemm(a: wp.array(dtype=float)):\n    pass\n"
            ),
        ),
        Example(
            title="MathDx forced on at module scope, turned off in place",
            args={"file": "gemm.py", "options": {"enable_mathdx_gemm": False}, "replace": True},
            before='import warp as wp\n\nwp.set_module_options({"enable_mathdx_gemm": True, "max_unroll": 4})\n',
            after='import warp as wp\n\nwp.set_module_options({"enable_mathdx_gemm": False, "max_unroll": 4})\n',
        ),
    )
    REFUSALS = (
        Refusal(
            before='import warp as wp\nwp.set_module_options({"enable_backward": True})\n',
            args={"options": {"enable_backward": False}},
            reason="already sets enable_backward",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        options: dict[str, Any] = self.args["options"]
        if not isinstance(options, dict) or not options:
            raise self.refuse("options must be a non-empty dict")
        present = self._module_scope_options(tree, warp)
        conflicts = {k: v for k, v in options.items() if k in present and present[k] != v}
        if conflicts and not self.args.get("replace"):
            raise self.refuse(f"a module-scope call already sets {', '.join(conflicts)} to another value")
        if conflicts:
            tree = tree.visit(_ReplaceValues(warp, conflicts))
        missing = {k: v for k, v in options.items() if k not in present}
        if not missing:
            return tree
        alias = warp.alias or "wp"
        items = ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in missing.items())
        statement = parse_stmt(f"{alias}.set_module_options({{{items}}})")
        body = list(tree.body)
        new = [statement] if warp.alias else [parse_stmt("import warp as wp"), statement]
        return tree.with_changes(body=insert_at(body, header_end(tree, warp), new))

    def _module_scope_options(self, tree: cst.Module, warp: WarpImports) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for stmt in tree.body:
            call = single_call(stmt)
            if call is None or not warp.is_call_to(call, "set_module_options") or len(call.args) != 1:
                continue
            value = call.args[0].value
            if isinstance(value, cst.Dict):
                for element in value.elements:
                    if isinstance(element, cst.DictElement):
                        ok_key, key = literal_value(element.key)
                        ok_value, item = literal_value(element.value)
                        if ok_key and ok_value:
                            found[key] = item
        return found


class _ReplaceValues(cst.CSTTransformer):
    """Sets literal values of keys in module-scope `set_module_options({...})` calls, leaving the rest as is."""

    def __init__(self, warp: WarpImports, values: dict[str, Any]):
        super().__init__()
        self.warp = warp
        self.values = values

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # module scope only

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not self.warp.is_call_to(original, "set_module_options") or len(updated.args) != 1:
            return updated
        options = updated.args[0].value
        if not isinstance(options, cst.Dict):
            return updated
        elements = [self._replaced(e) for e in options.elements]
        return updated.with_changes(args=[updated.args[0].with_changes(value=options.with_changes(elements=elements))])

    def _replaced(self, element: cst.BaseDictElement) -> cst.BaseDictElement:
        if not isinstance(element, cst.DictElement):
            return element
        ok, key = literal_value(element.key)
        if not ok or not isinstance(key, str) or key not in self.values:
            return element
        return element.with_changes(value=cst.parse_expression(py_literal(self.values[key])))
