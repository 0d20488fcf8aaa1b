"""merge_modules: put a set of stable kernels into one named module (CS-4)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import WarpImports, decorator_module, iter_statements, kernel_decorator
from ._partial import DefReading, Focus
from .module_options import computed_module_scope_options, module_scope_options
from .specs import MergeModulesArgs
from .split_by_block_dim import assign_modules

COLOR_BEFORE = '''\
"""Colour-space conversions for the image pipeline."""

from __future__ import annotations

import enum

import numpy as np
from warp import array, kernel, launch, tid, vec3

from imgpipe.types import Frame


class Space(enum.Enum):
    LINEAR = "linear"
    SRGB = "srgb"


@kernel(module="unique")
def to_linear(src: array(dtype=vec3), dst: array(dtype=vec3)):
    i = tid()
    dst[i] = src[i] * src[i]


@kernel(module="unique")
def to_srgb(src: array(dtype=vec3), dst: array(dtype=vec3)):
    i = tid()
    dst[i] = src[i] * 0.5


def convert(frame: Frame, space: Space) -> np.ndarray:
    """Convert `frame` in place to `space`; the two kernels always load together."""
    pick = to_linear if space is Space.LINEAR else to_srgb
    launch(pick, dim=frame.pixels.shape, inputs=[frame.pixels, frame.pixels])
    return frame.pixels.numpy()
'''
COLOR_AFTER = '''\
"""Colour-space conversions for the image pipeline."""

from __future__ import annotations

import enum

import numpy as np
from warp import array, kernel, launch, tid, vec3

from imgpipe.types import Frame


class Space(enum.Enum):
    LINEAR = "linear"
    SRGB = "srgb"


@kernel(module="imgpipe.color")
def to_linear(src: array(dtype=vec3), dst: array(dtype=vec3)):
    i = tid()
    dst[i] = src[i] * src[i]


@kernel(module="imgpipe.color")
def to_srgb(src: array(dtype=vec3), dst: array(dtype=vec3)):
    i = tid()
    dst[i] = src[i] * 0.5


def convert(frame: Frame, space: Space) -> np.ndarray:
    """Convert `frame` in place to `space`; the two kernels always load together."""
    pick = to_linear if space is Space.LINEAR else to_srgb
    launch(pick, dim=frame.pixels.shape, inputs=[frame.pixels, frame.pixels])
    return frame.pixels.numpy()
'''


class MergeModules(WarpCodemod):
    """Gives the named kernels one named Warp module (`module="<module>"` on each decorator), so
    kernels with one lifecycle build once together instead of as many small modules. Any number of
    kernels: two or three small modules merge as well as ten (the planner decides when it pays).

    Refuses when a kernel is missing or not a Warp kernel, its `module=` is computed, it carries
    `module_options`, or its present module gets options from a module-scope call of the file
    (`wp.set_module_options({...})`, or `..., module="name")`), constant or computed at import
    (`{"fast_math": config.MODE == "fast"}`): merged, it would build without them. A function that
    picks one of the kernels by configuration (`if kind == "clamp": return clamp_edges`) is left as it
    is: the names it returns are kept.
    """

    NAME = "merge_modules"
    ARGS_TYPE = MergeModulesArgs
    DESCRIPTION = "Give a set of kernels (one file or several) one named Warp module."
    EXAMPLES = (
        Example(
            title="two one-kernel modules become one",
            args={"file": "ops.py", "kernels": ["add", "mul"], "module": "ops"},
            before=(
                'import warp\n\n\n@warp.kernel(module="unique")\ndef add(a: float):\n    pass\n\n\n'
                "@warp.kernel\ndef mul(a: float):\n    pass\n"
            ),
            after=(
                'import warp\n\n\n@warp.kernel(module="ops")\ndef add(a: float):\n    pass\n\n\n'
                '@warp.kernel(module="ops")\ndef mul(a: float):\n    pass\n'
            ),
        ),
        Example(
            title="a closed set of alternatives joins whole; the function that picks one by configuration is kept",
            args={
                "file": "edgeflow/boundary.py",
                "kernels": ["clamp_edges", "wrap_edges", "zero_edges"],
                "module": "edgeflow.kernels",
            },
            before=(
                '"""Edge handling: pad a row with `halo` cells on each side."""\n\nimport warp as wp\n\n\n'
                '@wp.kernel(module="edges")\n'
                "def clamp_edges(src: wp.array(dtype=float), padded: wp.array(dtype=float), halo: int):\n"
                "    i = wp.tid()\n    padded[i] = src[wp.clamp(i - halo, 0, src.shape[0] - 1)]\n\n\n"
                '@wp.kernel(module="edges")\n'
                "def wrap_edges(src: wp.array(dtype=float), padded: wp.array(dtype=float), halo: int):\n"
                "    i = wp.tid()\n    n = src.shape[0]\n    padded[i] = src[(i - halo + n) % n]\n\n\n"
                '@wp.kernel(module="edges")\n'
                "def zero_edges(src: wp.array(dtype=float), padded: wp.array(dtype=float), halo: int):\n"
                "    i = wp.tid()\n    j = i - halo\n    padded[i] = wp.where(j < 0 or j >= src.shape[0], 0.0, "
                "src[wp.clamp(j, 0, src.shape[0] - 1)])\n\n\n"
                "def edge_kernel(kind: str):\n"
                '    """The padding kernel for a boundary kind."""\n'
                '    if kind == "clamp":\n        return clamp_edges\n'
                '    elif kind == "wrap":\n        return wrap_edges\n'
                '    elif kind == "zero":\n        return zero_edges\n'
                '    raise ValueError(f"unknown boundary kind {kind!r}")\n'
            ),
            after=(
                '"""Edge handling: pad a row with `halo` cells on each side."""\n\nimport warp as wp\n\n\n'
                '@wp.kernel(module="edgeflow.kernels")\n'
                "def clamp_edges(src: wp.array(dtype=float), padded: wp.array(dtype=float), halo: int):\n"
                "    i = wp.tid()\n    padded[i] = src[wp.clamp(i - halo, 0, src.shape[0] - 1)]\n\n\n"
                '@wp.kernel(module="edgeflow.kernels")\n'
                "def wrap_edges(src: wp.array(dtype=float), padded: wp.array(dtype=float), halo: int):\n"
                "    i = wp.tid()\n    n = src.shape[0]\n    padded[i] = src[(i - halo + n) % n]\n\n\n"
                '@wp.kernel(module="edgeflow.kernels")\n'
                "def zero_edges(src: wp.array(dtype=float), padded: wp.array(dtype=float), halo: int):\n"
                "    i = wp.tid()\n    j = i - halo\n    padded[i] = wp.where(j < 0 or j >= src.shape[0], 0.0, "
                "src[wp.clamp(j, 0, src.shape[0] - 1)])\n\n\n"
                "def edge_kernel(kind: str):\n"
                '    """The padding kernel for a boundary kind."""\n'
                '    if kind == "clamp":\n        return clamp_edges\n'
                '    elif kind == "wrap":\n        return wrap_edges\n'
                '    elif kind == "zero":\n        return zero_edges\n'
                '    raise ValueError(f"unknown boundary kind {kind!r}")\n'
            ),
        ),
        Example(
            title="a project's module: its `from warp import kernel, launch`, kernels that load together",
            args={"file": "imgpipe/color.py", "kernels": ["to_linear", "to_srgb"], "module": "imgpipe.color"},
            before=COLOR_BEFORE,
            after=COLOR_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\n\n\ndef add(a: float):\n    pass\n",
            args={"kernels": ["add"], "module": "ops"},
            reason="not decorated with wp.kernel",
        ),
        Refusal(
            before=(
                'import warp as wp\n\nwp.set_module_options({"fast_math": True})\n\n\n'
                "@wp.kernel\ndef add(a: float):\n    pass\n"
            ),
            args={"kernels": ["add"], "module": "ops"},
            reason="would build without them",
        ),
        Refusal(
            before=(
                'import warp as wp\n\nfrom app import config\n\nwp.set_module_options({"fast_math": config.MODE == '
                '"fast"})\n\n\n@wp.kernel\ndef diffuse(a: float):\n    pass\n'
            ),
            args={"kernels": ["diffuse"], "module": "ops"},
            reason="gets options ['fast_math'] from a module-scope call",
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        return Focus.of(kwargs, defs=DefReading.DECORATORS)  # reads decorators, names and module scope only

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        merged = self.args["module"]
        wanted = set(self.args["kernels"])
        options_of: dict[str | None, list[str]] = {}
        for stmt, _parents, _top in iter_statements(tree):
            if not isinstance(stmt, cst.FunctionDef) or stmt.name.value not in wanted:
                continue
            dec = kernel_decorator(stmt, warp)
            value = None if dec is None else decorator_module(dec)
            present = value.evaluated_value if isinstance(value, cst.SimpleString) else None
            if dec is None or present in (merged, "unique") or (value is not None and present is None):
                continue  # not a kernel, already merged, a module of its own or computed: assign_modules decides
            if present not in options_of:
                options_of[present] = [*module_scope_options(tree, warp, present)]
                options_of[present] += computed_module_scope_options(tree, warp, present)
            if options_of[present]:
                where = "this file's module" if present is None else f'module "{present}"'
                raise self.refuse(
                    f"{stmt.name.value}(): {where} gets options {sorted(options_of[present])} from a module-scope "
                    f'call; in "{merged}" it would build without them'
                )
        return assign_modules(self, tree, {k: merged for k in self.args["kernels"]})


__all__ = ["MergeModules"]
