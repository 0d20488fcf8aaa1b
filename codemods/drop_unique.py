"""drop_unique: replace `module="unique"` by a shared named module (CS-9)."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    decorator_module,
    decorator_without_module,
    find_functions,
    is_string,
    kernel_decorator,
    keyword,
    replace_nodes,
    string_arg,
    with_keyword,
)
from ._partial import DefReading, Focus
from .specs import DropUniqueArgs


class _InnerKernels(cst.CSTVisitor):
    def __init__(self) -> None:
        self.defs: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defs.append(node)


PARTICLES_BEFORE = '''\
"""Particle integrators shared by the solver and the viewer."""

import math

import numpy as np
from warp import array, kernel, launch, tid

from ..config import TIME_STEP


@kernel(module="unique")
def integrate_particles(positions: array(dtype=float), velocities: array(dtype=float), dt: float):
    """Explicit Euler: one thread per particle."""
    i = tid()
    positions[i] = positions[i] + velocities[i] * dt


def advance(positions: array, velocities: array, frames: int = 1) -> np.ndarray:
    """Advance the particles `frames` steps of TIME_STEP."""
    for _ in range(frames):
        launch(integrate_particles, dim=positions.shape, inputs=[positions, velocities, TIME_STEP])
    return positions.numpy() * math.pi
'''
PARTICLES_AFTER = '''\
"""Particle integrators shared by the solver and the viewer."""

import math

import numpy as np
from warp import array, kernel, launch, tid

from ..config import TIME_STEP


@kernel(module="particles")
def integrate_particles(positions: array(dtype=float), velocities: array(dtype=float), dt: float):
    """Explicit Euler: one thread per particle."""
    i = tid()
    positions[i] = positions[i] + velocities[i] * dt


def advance(positions: array, velocities: array, frames: int = 1) -> np.ndarray:
    """Advance the particles `frames` steps of TIME_STEP."""
    for _ in range(frames):
        launch(integrate_particles, dim=positions.shape, inputs=[positions, velocities, TIME_STEP])
    return positions.numpy() * math.pi
'''


class DropUnique(WarpCodemod):
    """Replaces `module="unique"` with a named module, so stable kernels share one module (one build)
    instead of one hash-named module each.

    Edits, for each name in `names`: a kernel's `@wp.kernel(module="unique")`; a factory's parameter
    default `="unique"` (e.g. `def make(module="unique")`); and literal `module="unique"` decorators
    of kernels defined inside that factory. Other arguments stay as written.

    A factory parameter whose default it changes but that the body does not use (left behind when
    the factory's kernels moved to module scope) is kept and reported (note "unused-parameter").

    Refuses when a name is not found, has neither `"unique"` nor the target module (nothing to do
    means the planner's premise is wrong), or its decorator carries `module_options` (only valid
    with `module="unique"`), or `module` is "" for a factory's parameter default (a parameter needs
    a name).
    """

    NAME = "drop_unique"
    ARGS_TYPE = DropUniqueArgs
    DESCRIPTION = 'Replace module="unique" on given kernels/factories by a named Warp module.'
    EXAMPLES = (
        Example(
            title="kernel decorator",
            args={"file": "ops.py", "names": ["scale"], "module": "ops"},
            before=(
                'import warp as wp\n\n\n@wp.kernel(module="unique", enable_backward=False)\n'
                "def scale(x: wp.array(dtype=float)):\n    x[wp.tid()] *= 2.0\n"
            ),
            after=(
                'import warp as wp\n\n\n@wp.kernel(module="ops", enable_backward=False)\n'
                "def scale(x: wp.array(dtype=float)):\n    x[wp.tid()] *= 2.0\n"
            ),
        ),
        Example(
            title="a module-scope kernel joins its file's own module: the keyword goes",
            args={"file": "fft.py", "names": ["transpose", "scale"], "module": ""},
            before=(
                'import warp as wp\n\n\n@wp.kernel(module="unique")\ndef transpose(x: wp.array(dtype=float)):\n'
                '    pass\n\n\n@wp.kernel(module="unique", enable_backward=False)\n'
                "def scale(x: wp.array(dtype=float)):\n    pass\n"
            ),
            after=(
                "import warp as wp\n\n\n@wp.kernel\ndef transpose(x: wp.array(dtype=float)):\n"
                "    pass\n\n\n@wp.kernel(enable_backward=False)\ndef scale(x: wp.array(dtype=float)):\n"
                "    pass\n"
            ),
        ),
        Example(
            title="factory parameter default",
            args={"file": "ops.py", "names": ["make_scale"], "module": "ops"},
            before=(
                "from warp import kernel\n\n\ndef make_scale(s, module='unique'):\n"
                "    @kernel(module=module)\n    def scale(x: float):\n        pass\n\n    return scale\n"
            ),
            after=(
                "from warp import kernel\n\n\ndef make_scale(s, module='ops'):\n"
                "    @kernel(module=module)\n    def scale(x: float):\n        pass\n\n    return scale\n"
            ),
        ),
        Example(
            title="a factory whose kernel already moved to module scope: the unused parameter is reported",
            args={"file": "ops.py", "names": ["make_scale"], "module": "ops"},
            before="from ops_kernels import scale\n\n\ndef make_scale(module=\"unique\"):\n    return scale\n",
            after="from ops_kernels import scale\n\n\ndef make_scale(module=\"ops\"):\n    return scale\n",
            notes=("make_scale(): parameter `module` is not used by the body (kept: callers may still pass it)",),
        ),
        Example(
            title="a project's kernel: its `from warp import kernel, launch`, a relative import",
            args={"file": "particles/integrate.py", "names": ["integrate_particles"], "module": "particles"},
            before=PARTICLES_BEFORE,
            after=PARTICLES_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\n\n\n@wp.kernel\ndef k(x: float):\n    pass\n",
            args={"names": ["k"], "module": "ops"},
            reason='has no module="unique"',
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\n@wp.kernel(module='unique', module_options={'fast_math': True})\n"
                "def k(x: float):\n    pass\n"
            ),
            args={"names": ["k"], "module": "ops"},
            reason="module_options",
        ),
        Refusal(before="import warp as wp\n", args={"names": ["k"], "module": "ops"}, reason="no function"),
        Refusal(
            before="from warp import kernel\n\n\ndef make(module='unique'):\n    pass\n",
            args={"names": ["make"], "module": ""},
            reason="needs a named module",
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        return Focus.of(kwargs, defs=DefReading.SIGNATURE)  # reads decorators, signatures and module scope only

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        module = self.args["module"]
        replacements: dict[cst.CSTNode, cst.CSTNode] = {}
        functions = find_functions(tree)
        for name in self.args["names"]:
            found = [f.node for f in functions if f.node.name.value == name]
            if not found:
                raise self.refuse(f"no function named {name!r}")
            touched = already = False
            for func in found:
                inner = _InnerKernels()
                func.body.visit(inner)
                for kernel in [func, *inner.defs]:
                    dec = kernel_decorator(kernel, warp)
                    value = None if dec is None else decorator_module(dec)
                    if is_string(value, "unique"):
                        assert dec is not None and isinstance(dec.decorator, cst.Call)
                        if keyword(dec.decorator, "module_options") is not None:
                            raise self.refuse(
                                f"{kernel.name.value}() sets module_options, "
                                'only accepted with module="unique"'
                            )
                        if module:
                            replacements[dec] = dec.with_changes(
                                decorator=with_keyword(dec.decorator, "module", string_arg(module))
                            )
                        else:
                            replacements[dec] = decorator_without_module(dec)
                        touched = True
                    elif kernel is func and (is_string(value, module) if module else dec is not None and value is None):
                        already = True
                for param in [*func.params.params, *func.params.kwonly_params, *func.params.posonly_params]:
                    if is_string(param.default, "unique") and not module:
                        raise self.refuse(f"{name}(): a factory's module parameter needs a named module, not \"\"")
                    if is_string(param.default, "unique"):
                        replacements[param] = param.with_changes(default=string_arg(module))
                        touched = True
                        if not re.search(rf"\b{re.escape(param.name.value)}\b", code(func.body)):
                            self.note(
                                "unused-parameter",
                                f"{name}(): parameter `{param.name.value}` is not used by the body "
                                "(kept: callers may still pass it)",
                            )
                    elif is_string(param.default, module):
                        already = True
            if not (touched or already):
                raise self.refuse(f'{name}() has no module="unique" (decorator or parameter default)')
        return replace_nodes(tree, replacements)


__all__ = ["DropUnique"]
