"""preload: build independent modules concurrently before the first launch (CS-13, CUDA)."""

from __future__ import annotations

import json

import libcst as cst

from ._base import Arg, Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    body_start,
    ensure_warp_alias,
    functions_named,
    insert_at,
    insert_next_to,
    parse_stmt,
    py_literal,
    replace_nodes,
    squash,
)
from .specs import PreloadArgs


class Preload(WarpCodemod):
    """Inserts `wp.force_load(device=..., modules=[wp.get_module("m"), ...], max_workers=N)` at the
    entry point before the first launch, so independent modules compile in parallel instead of one
    at a time on first use; optionally preceded by `wp.get_module("m").options.update({"block_dim":
    N})` for modules always launched at one block size, so the preload builds the variant that will
    really be used.

    The modules must already exist when the statement runs (their Python modules imported), which
    holds before the first launch. Placement: before the statement on `before_line` (in whatever
    block holds it), or as the first statement (after the docstring) of `function`.

    args:
      file (str): the entry-point file (relative to the repo root).
      modules (list[str]): Warp module names to preload (never empty: `modules=None` loads all).
      device (str): device to build for, e.g. "cuda:0".
      max_workers (int, optional): worker threads; default len(modules).
      before_line (int, optional): line of the first launch; the statements go right before it.
      function (str, optional): function whose body starts with the statements (when no line).
      block_dims (dict[str, int], optional): module name -> the one block_dim it is launched at.

    Refuses on an empty `modules`, on a CPU device with max_workers > 1 (concurrent first CPU loads
    fail, CS-8), without exactly one of `before_line` / `function`, or when the line or function is
    not found.
    """

    NAME = "preload"
    ARGS_TYPE = PreloadArgs
    DESCRIPTION = "Insert wp.force_load(device, modules, max_workers) before the first launch (CUDA)."
    ARGS = (
        Arg("modules", "strs", "Warp module names to preload", required=True),
        Arg("device", "str", "device, e.g. cuda:0", required=True),
        Arg("max_workers", "int", "worker threads (default: number of modules)"),
        Arg("before_line", "int", "line of the first launch"),
        Arg("function", "str", "function whose body starts with the preload"),
        Arg("block_dims", "json", "module -> the one block_dim it is launched at"),
    )
    EXAMPLES = (
        Example(
            title="before the first launch, with module block_dims",
            args={
                "file": "main.py",
                "modules": ["sim", "render"],
                "device": "cuda:0",
                "max_workers": 2,
                "before_line": 6,
                "block_dims": {"sim": 128},
            },
            before=(
                "import warp as wp\nimport app\n\n\ndef main():\n"
                '    wp.launch(app.step, dim=10, device="cuda:0")\n'
            ),
            after=(
                "import warp as wp\nimport app\n\n\ndef main():\n"
                '    wp.get_module("sim").options.update({"block_dim": 128})\n'
                '    wp.force_load(device="cuda:0", modules=[wp.get_module("sim"), wp.get_module("render")], '
                "max_workers=2)\n"
                '    wp.launch(app.step, dim=10, device="cuda:0")\n'
            ),
        ),
        Example(
            title="at the start of a function",
            args={"file": "main.py", "modules": ["a", "b", "c"], "device": "cuda", "function": "run"},
            before='import warp\n\n\ndef run():\n    """Go."""\n    step()\n',
            after=(
                'import warp\n\n\ndef run():\n    """Go."""\n'
                '    warp.force_load(device="cuda", modules=[warp.get_module("a"), warp.get_module("b"), '
                'warp.get_module("c")], max_workers=3)\n    step()\n'
            ),
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\n\n\ndef run():\n    pass\n",
            args={"modules": ["a", "b"], "device": "cpu", "function": "run"},
            reason="CPU",
        ),
        Refusal(
            before="import warp as wp\n",
            args={"modules": [], "device": "cuda", "function": "run"},
            reason="modules",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        modules = self.args["modules"] or []
        device = self.args["device"]
        workers = self.args["max_workers"] if self.args["max_workers"] is not None else len(modules)
        if not modules:
            raise self.refuse("modules must name at least one Warp module (modules=None would load all)")
        if str(device).startswith("cpu") and workers > 1:
            raise self.refuse(
                "concurrent first loads on the CPU fail (CS-8); use max_workers=1 or a CUDA device"
            )
        if (self.args["before_line"] is None) == (self.args["function"] is None):
            raise self.refuse("give exactly one of before_line or function")

        warp = WarpImports.of(tree)
        alias = ensure_warp_alias(self, warp)
        texts = [
            f"{alias}.get_module({json.dumps(m)}).options.update({py_literal({'block_dim': int(bd)})})"
            for m, bd in (self.args["block_dims"] or {}).items()
        ]
        module_list = ", ".join(f"{alias}.get_module({json.dumps(m)})" for m in modules)
        texts.append(
            f"{alias}.force_load(device={json.dumps(device)}, modules=[{module_list}], max_workers={workers})"
        )
        present = squash(self.code_of(tree))
        new = [parse_stmt(t) for t in texts if squash(t) not in present]
        if not new:
            return tree

        if self.args["function"] is not None:
            found = functions_named(tree, self.args["function"])
            if len(found) != 1 or not isinstance(found[0].node.body, cst.IndentedBlock):
                raise self.refuse(
                    f"expected one function named {self.args['function']!r}, found {len(found)}"
                )
            block = found[0].node.body
            start = body_start(block)
            new_block = block.with_changes(body=insert_at(block.body, start, new))
            return replace_nodes(tree, {block: new_block}, within=[found[0].top])

        line = int(self.args["before_line"])
        target = self.lines.statement_at_line(line)
        if target is None:
            raise self.refuse(f"no statement on line {line}")
        index = self.lines.index_at_line(line)
        assert index is not None
        return insert_next_to(tree, target, new, within=[tree.body[index]])


__all__ = ["Preload"]
