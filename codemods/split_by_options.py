"""split_by_options: move a set of kernels into a named module of their own, with its own options (CS-7)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import WarpImports, decorator_module, find_functions, is_string, kernel_decorator
from ._partial import DefReading, Focus
from .specs import SplitByOptionsArgs
from .split_by_block_dim import add_module_options, assign_modules

GEMM_BEFORE = '''\
"""Dense layers: the half-precision GEMM uses MathDx, the single-precision one does not need it."""

import logging

import numpy as np
from warp import array2d, float16, kernel, launch, set_module_options, tid

from .shapes import TILE

set_module_options({"enable_mathdx_gemm": True, "enable_backward": False})

log = logging.getLogger(__name__)


@kernel
def gemm16(a: array2d(dtype=float16), b: array2d(dtype=float16), c: array2d(dtype=float16)):
    i, j = tid()
    c[i, j] = a[i, j] * b[i, j]


@kernel
def gemm32(a: array2d(dtype=float), b: array2d(dtype=float), c: array2d(dtype=float)):
    """Single precision: MathDx buys nothing here."""
    i, j = tid()
    c[i, j] = a[i, j] * b[i, j]


def forward(a: array2d, b: array2d, c: array2d) -> np.ndarray:
    log.debug("gemm %s x %s in tiles of %d", a.shape, b.shape, TILE)
    launch(gemm32, dim=c.shape, inputs=[a, b, c])
    return c.numpy()
'''
GEMM_AFTER = '''\
"""Dense layers: the half-precision GEMM uses MathDx, the single-precision one does not need it."""

import logging

import numpy as np
import warp as wp
from warp import array2d, float16, kernel, launch, set_module_options, tid

from .shapes import TILE

wp.get_module("dense_without_mathdx").options.update({"enable_mathdx_gemm": False, "enable_backward": False})

set_module_options({"enable_mathdx_gemm": True, "enable_backward": False})

log = logging.getLogger(__name__)


@kernel
def gemm16(a: array2d(dtype=float16), b: array2d(dtype=float16), c: array2d(dtype=float16)):
    i, j = tid()
    c[i, j] = a[i, j] * b[i, j]


@kernel(module="dense_without_mathdx")
def gemm32(a: array2d(dtype=float), b: array2d(dtype=float), c: array2d(dtype=float)):
    """Single precision: MathDx buys nothing here."""
    i, j = tid()
    c[i, j] = a[i, j] * b[i, j]


def forward(a: array2d, b: array2d, c: array2d) -> np.ndarray:
    log.debug("gemm %s x %s in tiles of %d", a.shape, b.shape, TILE)
    launch(gemm32, dim=c.shape, inputs=[a, b, c])
    return c.numpy()
'''


class SplitByOptions(WarpCodemod):
    """Gives the named kernels a named Warp module with options of its own, so kernels of one module
    that want different values of an option each get them: e.g. an f32 GEMM that loses nothing without
    MathDx moves to a module built without it, while the f16 GEMM it speeds up keeps it.

    Sets `module="<module>"` on each kernel's `@wp.kernel` decorator and adds
    `wp.get_module("<module>").options.update({...})` after the import header. `options` is the new
    module's whole literal set: the planner carries the old module's own options into it.

    Refuses when `options` is not a non-empty dict, a kernel is missing or not a Warp kernel, is a
    `module="unique"` kernel (it takes `module_options` instead), its `module=` is computed, or it
    carries `module_options`.
    """

    NAME = "split_by_options"
    ARGS_TYPE = SplitByOptionsArgs
    DESCRIPTION = "Move kernels into a named module of their own, with its own options."
    EXAMPLES = (
        Example(
            title="the f32 GEMM leaves the MathDx module; the f16 GEMM keeps MathDx",
            args={
                "file": "gemm.py",
                "kernels": ["gemm32"],
                "module": "gemm_without_mathdx",
                "options": {"enable_mathdx_gemm": False, "enable_backward": False},
            },
            before=(
                'import warp as wp\n\nwp.set_module_options({"enable_mathdx_gemm": True, "enable_backward": False})'
                "\n\n\n@wp.kernel\ndef gemm16(a: wp.array2d(dtype=wp.float16)):\n    pass\n\n\n"
                "@wp.kernel\ndef gemm32(a: wp.array2d(dtype=float)):\n    pass\n"
            ),
            after=(
                "import warp as wp\n\n"
                'wp.get_module("gemm_without_mathdx").options.update('
                '{"enable_mathdx_gemm": False, "enable_backward": False})\n\n'
                'wp.set_module_options({"enable_mathdx_gemm": True, "enable_backward": False})'
                "\n\n\n@wp.kernel\ndef gemm16(a: wp.array2d(dtype=wp.float16)):\n    pass\n\n\n"
                '@wp.kernel(module="gemm_without_mathdx")\ndef gemm32(a: wp.array2d(dtype=float)):\n    pass\n'
            ),
        ),
        Example(
            title="a project's `from warp import` file: `import warp as wp` joins its third-party section",
            args={
                "file": "nn/gemm.py",
                "kernels": ["gemm32"],
                "module": "dense_without_mathdx",
                "options": {"enable_mathdx_gemm": False, "enable_backward": False},
            },
            before=GEMM_BEFORE,
            after=GEMM_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before='import warp as wp\n\n\n@wp.kernel(module="unique")\ndef k(x: float):\n    pass\n',
            args={"kernels": ["k"], "module": "m", "options": {"enable_mathdx_gemm": False}},
            reason="takes module_options",
        ),
        Refusal(
            before="import warp as wp\n\n\n@wp.kernel\ndef k(x: float):\n    pass\n",
            args={"kernels": ["k"], "module": "m", "options": {}},
            reason="options must be a non-empty dict",
        ),
        Refusal(
            before="import warp as wp\n",
            args={"kernels": ["k"], "module": "m", "options": {"enable_mathdx_gemm": False}},
            reason="no kernel def named 'k'",
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        return Focus.of(kwargs, defs=DefReading.DECORATORS)  # reads decorators, names and module scope only

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        options, module = self.args["options"], self.args["module"]
        if not isinstance(options, dict) or not options:
            raise self.refuse(f"options must be a non-empty dict, got {options!r}")
        warp = WarpImports.of(tree)
        wanted = set(self.args["kernels"])
        for function in find_functions(tree):
            dec = kernel_decorator(function.node, warp)
            if function.node.name.value in wanted and dec is not None and is_string(decorator_module(dec), "unique"):
                raise self.refuse(
                    f'{function.node.name.value}() is a module="unique" kernel: it takes module_options '
                    "in its decorator instead (module_options codemod)"
                )
        tree = assign_modules(self, tree, dict.fromkeys(self.args["kernels"], module))
        return add_module_options(self, tree, [module], options)


__all__ = ["SplitByOptions"]
