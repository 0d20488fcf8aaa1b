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

    A module-scope `set_module_options` call that already sets the same values is left alone (idempotent);
    one that sets a key to another value is a conflict: refused.
    """

    NAME = "module_options"
    DESCRIPTION = "Set a file's Warp module options at module scope, before any kernel can load."
    ARGS = (Arg("options", "json", "literal module options", required=True),)
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
        conflicts = [k for k in options if k in present and present[k] != options[k]]
        if conflicts:
            raise self.refuse(f"a module-scope call already sets {', '.join(conflicts)} to another value")
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
