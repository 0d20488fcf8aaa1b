"""cpu_max_workers: serialize first loads that can target the CPU (CS-8)."""

from __future__ import annotations

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import WarpImports, code, keyword, literal_value, replace_nodes, with_keyword
from .specs import CpuMaxWorkersArgs

#: positional index of (device, max_workers) in each call's signature (warp-lang 1.19)
_POSITIONS = {"warp.force_load": (0, 3), "warp.load_module": (1, 4)}
_POSITIONS_BY_NAME = {name.rsplit(".", 1)[1]: where for name, where in _POSITIONS.items()}


class _LoadCalls(cst.CSTVisitor):
    def __init__(self, warp: WarpImports) -> None:
        self.warp = warp
        self.calls: list[tuple[cst.Call, str]] = []

    def visit_Call(self, node: cst.Call) -> None:
        name = self.warp.qualify(node.func)
        if name in _POSITIONS:
            self.calls.append((node, name))


WARMUP_BEFORE = '''\
"""Warm-up for the test rigs: load every module before the timed runs start."""

import os
import sys

import numpy as np
import warp

from rigs import cloth, fluids

DEVICE = os.environ.get("RIG_DEVICE", "cpu")


def warm_up(device: str = DEVICE) -> None:
    """Build (or load from the cache) every module the rigs launch."""
    modules = [cloth.module, fluids.module]
    warp.force_load(device=device, modules=modules, max_workers=8)
    warp.load_module(fluids.boundary, device=device)
    print(f"warmed {len(modules)} modules on {device}", file=sys.stderr)


def timed(run, frames: int = 100) -> np.ndarray:
    """Seconds per frame of `run` over `frames` frames, after the warm-up."""
    warm_up()
    return np.array([run() for _ in range(frames)])
'''
WARMUP_AFTER = '''\
"""Warm-up for the test rigs: load every module before the timed runs start."""

import os
import sys

import numpy as np
import warp

from rigs import cloth, fluids

DEVICE = os.environ.get("RIG_DEVICE", "cpu")


def warm_up(device: str = DEVICE) -> None:
    """Build (or load from the cache) every module the rigs launch."""
    modules = [cloth.module, fluids.module]
    warp.force_load(device=device, modules=modules, max_workers=1)
    warp.load_module(fluids.boundary, device=device, max_workers=1)
    print(f"warmed {len(modules)} modules on {device}", file=sys.stderr)


def timed(run, frames: int = 100) -> np.ndarray:
    """Seconds per frame of `run` over `frames` frames, after the warm-up."""
    warm_up()
    return np.array([run() for _ in range(frames)])
'''


class CpuMaxWorkers(WarpCodemod):
    """Sets `max_workers=1` on `wp.force_load(...)` / `wp.load_module(...)` calls that can target the
    CPU: concurrent first CPU loads can report success and then fail with "Failed to find module".

    A call already at `max_workers` 0 or 1 is left alone. Refuses when a given line has no such
    call, or when the call on a given line has a literal CUDA-only device (nothing to fix there).
    """

    NAME = "cpu_max_workers"
    ARGS_TYPE = CpuMaxWorkersArgs
    DESCRIPTION = "Set max_workers=1 on wp.force_load / wp.load_module calls that can target the CPU."
    EXAMPLES = (
        Example(
            title="every load call in the file",
            args={"file": "main.py"},
            before=(
                'import warp as wp\n\nwp.force_load(device="cpu", modules=mods, max_workers=4)\n'
                'wp.load_module(sim, device=dev)\nwp.force_load(device="cuda:0", max_workers=4)\n'
            ),
            after=(
                'import warp as wp\n\nwp.force_load(device="cpu", modules=mods, max_workers=1)\n'
                "wp.load_module(sim, device=dev, max_workers=1)\n"
                'wp.force_load(device="cuda:0", max_workers=4)\n'
            ),
        ),
        Example(
            title="one call by line, positional arguments",
            args={"file": "main.py", "lines": [3]},
            before="from warp import force_load\n\nforce_load(None, mods, None, 8)\n",
            after="from warp import force_load\n\nforce_load(None, mods, None, 1)\n",
        ),
        Example(
            title="a project's warm-up: its `import warp`, a device read from the environment",
            args={"file": "rigs/warmup.py"},
            before=WARMUP_BEFORE,
            after=WARMUP_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\nwp.force_load(device='cuda:0', modules=m, max_workers=4)\n",
            args={"lines": [2]},
            reason="CUDA",
        ),
        Refusal(before="import warp as wp\nx = 1\n", args={"lines": [2]}, reason="no wp.force_load"),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        visitor = _LoadCalls(warp)
        lines = self.args["lines"]
        # A call that `qualify`s to warp.force_load / warp.load_module is spelled with one of these
        # words (`wp.force_load`, or a name imported from warp), so only the top-level statements whose
        # code has one are walked (and with `lines`, only those holding a line: positions go no further).
        words = set(_POSITIONS_BY_NAME) | {
            local for local, name in warp.from_names.items() if name in _POSITIONS_BY_NAME
        }
        if lines is None:
            indexes = list(range(len(tree.body)))
        else:
            starts = {int(x) for x in lines}
            indexes = sorted({i for i in map(self.lines.index_at_line, starts) if i is not None})
        tops = [tree.body[i] for i in indexes if any(w in self.lines.code(tree.body[i]) for w in words)]
        for top in tops:
            top.visit(visitor)
        selected = visitor.calls
        if lines is not None:
            call_lines = {}
            for call, _name in visitor.calls:
                for i in indexes:
                    positions = self.lines.positions(i)
                    if call in positions:
                        call_lines[id(call)] = positions[call].start.line
                        break
            selected = [(c, n) for c, n in visitor.calls if call_lines[id(c)] in starts]
            missing = starts - {call_lines[id(c)] for c, _ in selected}
            if missing:
                raise self.refuse(
                    f"no wp.force_load/wp.load_module call starting on line(s) {sorted(missing)}"
                )
        replacements: dict[cst.CSTNode, cst.CSTNode] = {}
        for call, name in selected:
            device_index, workers_index = _POSITIONS[name]
            device = _argument(call, "device", device_index)
            if device is not None:
                ok, value = literal_value(device)
                if ok and isinstance(value, str) and value.startswith("cuda"):
                    if lines is not None:
                        raise self.refuse(
                            f"`{code(call)}` targets {value} only; CUDA loads may run in parallel"
                        )
                    continue
            workers = _argument(call, "max_workers", workers_index)
            if workers is not None:
                ok, value = literal_value(workers)
                if ok and value in (0, 1):
                    continue
            replacements[call] = _with_one_worker(call, workers_index)
        return replace_nodes(tree, replacements, within=tops)


def _argument(call: cst.Call, name: str, index: int) -> cst.BaseExpression | None:
    arg = keyword(call, name)
    if arg is not None:
        return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index].value if index < len(positional) else None


def _with_one_worker(call: cst.Call, index: int) -> cst.Call:
    one = cst.Integer("1")
    if keyword(call, "max_workers") is None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if index < len(positional):
            target = positional[index]
            return call.with_changes(
                args=[a.with_changes(value=one) if a is target else a for a in call.args]
            )
    return with_keyword(call, "max_workers", one)


__all__ = ["CpuMaxWorkers"]
