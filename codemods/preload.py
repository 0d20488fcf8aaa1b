"""preload: build independent modules concurrently before the first launch (CS-13, CUDA)."""

from __future__ import annotations

import json

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
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

# Where a preload call wraps, one argument a line: black's default, so the call reads right under any longer limit.
WRAP_AT = 88
INDENT = "    "

SOLVER_BEFORE = '''\
"""Fluid solver entry point."""

import warp as wp

from fluid import advect, pressure, render


class Solver:
    def __init__(self, grid):
        self.grid = grid

    def run(self, steps: int):
        """Advance `steps` frames on the GPU."""
        for _ in range(steps):
            advect.step(self.grid)
            pressure.solve(self.grid)
        render.frame(self.grid)
'''
SOLVER_AFTER = '''\
"""Fluid solver entry point."""

import warp as wp

from fluid import advect, pressure, render


class Solver:
    def __init__(self, grid):
        self.grid = grid

    def run(self, steps: int):
        """Advance `steps` frames on the GPU."""
        wp.force_load(
            device="cuda:0",
            modules=[
                wp.get_module("fluid.advect"),
                wp.get_module("fluid.pressure"),
                wp.get_module("fluid.render"),
            ],
            max_workers=3,
        )
        for _ in range(steps):
            advect.step(self.grid)
            pressure.solve(self.grid)
        render.frame(self.grid)
'''


BATCH_BEFORE = '''\
"""Batch renderer: warm every module before the first frame, so frame times stay flat."""

import time

import numpy as np
import warp

from renderer import shading, tonemap
from renderer.scene import Scene


def render_batch(scene: Scene, frames: int) -> list[float]:
    """Render `frames` frames of `scene`; returns each frame's time in seconds."""
    times = []
    for frame in range(frames):
        start = time.perf_counter()
        shading.shade(scene, frame)
        tonemap.apply(scene.image)
        warp.synchronize()
        times.append(time.perf_counter() - start)
    return times


def summary(times: list[float]) -> float:
    return float(np.median(times))
'''
BATCH_AFTER = '''\
"""Batch renderer: warm every module before the first frame, so frame times stay flat."""

import time

import numpy as np
import warp

from renderer import shading, tonemap
from renderer.scene import Scene


def render_batch(scene: Scene, frames: int) -> list[float]:
    """Render `frames` frames of `scene`; returns each frame's time in seconds."""
    warp.force_load(
        device="cuda:0",
        modules=[
            warp.get_module("renderer.shading"),
            warp.get_module("renderer.tonemap"),
        ],
        max_workers=2,
    )
    times = []
    for frame in range(frames):
        start = time.perf_counter()
        shading.shade(scene, frame)
        tonemap.apply(scene.image)
        warp.synchronize()
        times.append(time.perf_counter() - start)
    return times


def summary(times: list[float]) -> float:
    return float(np.median(times))
'''


class Preload(WarpCodemod):
    """Inserts `wp.force_load(device=..., modules=[wp.get_module("m"), ...], max_workers=N)` at the
    entry point before the first launch, so independent modules compile in parallel instead of one
    at a time on first use; optionally preceded by `wp.get_module("m").options.update({"block_dim":
    N})` for modules always launched at one block size, so the preload builds the variant that will
    really be used.

    The modules must already exist when the statement runs (their Python modules imported), which
    holds before the first launch. Placement: before the statement on `before_line` (in whatever
    block holds it), or as the first statement (after the docstring) of `function`.

    Refuses on an empty `modules`, on a CPU device with max_workers > 1 (concurrent first CPU loads
    fail, CS-8), without exactly one of `before_line` / `function`, or when the line or function is
    not found.
    """

    NAME = "preload"
    ARGS_TYPE = PreloadArgs
    DESCRIPTION = "Insert wp.force_load(device, modules, max_workers) before the first launch (CUDA)."
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
                "    wp.force_load(\n"
                '        device="cuda:0",\n'
                '        modules=[wp.get_module("sim"), wp.get_module("render")],\n'
                "        max_workers=2,\n"
                "    )\n"
                '    wp.launch(app.step, dim=10, device="cuda:0")\n'
            ),
        ),
        Example(
            title="at the start of a function",
            args={"file": "main.py", "modules": ["a", "b", "c"], "device": "cuda", "function": "run"},
            before='import warp\n\n\ndef run():\n    """Go."""\n    step()\n',
            after=(
                'import warp\n\n\ndef run():\n    """Go."""\n'
                "    warp.force_load(\n"
                '        device="cuda",\n'
                '        modules=[warp.get_module("a"), warp.get_module("b"), warp.get_module("c")],\n'
                "        max_workers=3,\n"
                "    )\n"
                "    step()\n"
            ),
        ),
        Example(
            title="a project's method: the call wraps as black would, one module a line",
            args={
                "file": "fluid/solver.py",
                "modules": ["fluid.advect", "fluid.pressure", "fluid.render"],
                "device": "cuda:0",
                "function": "run",
            },
            before=SOLVER_BEFORE,
            after=SOLVER_AFTER,
        ),
        Example(
            title="a project's function: its `import warp`, first-party modules preloaded",
            args={
                "file": "renderer/batch.py",
                "modules": ["renderer.shading", "renderer.tonemap"],
                "device": "cuda:0",
                "function": "render_batch",
            },
            before=BATCH_BEFORE,
            after=BATCH_AFTER,
            project_style=True,
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
        if self.args["function"] is not None:
            found = functions_named(tree, self.args["function"])
            if len(found) != 1 or not isinstance(found[0].node.body, cst.IndentedBlock):
                raise self.refuse(
                    f"expected one function named {self.args['function']!r}, found {len(found)}"
                )
            block = found[0].node.body
            column = self.lines.positions(self.lines.index_of(found[0].top))[block.body[0]].start.column
            new = self._statements(tree, alias, modules, device, workers, column)
            if not new:
                return tree
            new_block = block.with_changes(body=insert_at(block.body, body_start(block), new))
            return replace_nodes(tree, {block: new_block}, within=[found[0].top])

        line = int(self.args["before_line"])
        target = self.lines.statement_at_line(line)
        if target is None:
            raise self.refuse(f"no statement on line {line}")
        index = self.lines.index_at_line(line)
        assert index is not None
        column = self.lines.positions(index)[target].start.column
        new = self._statements(tree, alias, modules, device, workers, column)
        if not new:
            return tree
        return insert_next_to(tree, target, new, within=[tree.body[index]])

    def _statements(
        self, tree: cst.Module, alias: str, modules: list[str], device: str, workers: int, column: int
    ) -> list[cst.SimpleStatementLine]:
        """The block_dim settings and the preload call, written for `column`; none already in the file."""
        texts = [
            f"{alias}.get_module({json.dumps(m)}).options.update({py_literal({'block_dim': int(bd)})})"
            for m, bd in (self.args["block_dims"] or {}).items()
        ]
        module_list = [f"{alias}.get_module({json.dumps(m)})" for m in modules]
        arguments = [f"device={json.dumps(device)}", ("modules=", module_list), f"max_workers={workers}"]
        texts.append(_call(f"{alias}.force_load", arguments, column))
        present = _comparable(self.code_of(tree))
        return [parse_stmt(t) for t in texts if _comparable(t) not in present]


def _call(callee: str, arguments: list[str | tuple[str, list[str]]], column: int) -> str:
    """`callee(a, b=[x, y])` on one line when it fits in WRAP_AT from `column`, else one argument a line
    (and a list that still does not fit, one item a line), as black would wrap it."""
    flat = [a if isinstance(a, str) else f"{a[0]}[{', '.join(a[1])}]" for a in arguments]
    one_line = f"{callee}({', '.join(flat)})"
    if column + len(one_line) <= WRAP_AT:
        return one_line
    lines = []
    for argument, text in zip(arguments, flat):
        if isinstance(argument, tuple) and column + len(INDENT + text + ",") > WRAP_AT:
            name, items = argument
            lines += [f"{INDENT}{name}[", *(f"{INDENT * 2}{item}," for item in items), f"{INDENT}],"]
        else:
            lines.append(f"{INDENT}{text},")
    return "\n".join([f"{callee}(", *lines, ")"])


def _comparable(text: str) -> str:
    """Code with whitespace and trailing commas removed: a call reads the same wrapped or not."""
    return squash(text).replace(",)", ")").replace(",]", "]")


__all__ = ["Preload"]
