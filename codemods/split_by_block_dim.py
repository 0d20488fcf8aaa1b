"""split_by_block_dim: one named module per stable CUDA block_dim group (CS-5)."""

from __future__ import annotations

import json
from typing import Any

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    decorator_module,
    decorator_with_module,
    ensure_warp_alias,
    find_functions,
    header_end,
    insert_at,
    is_string,
    kernel_decorator,
    keyword,
    module_has_statement,
    parse_stmt,
    py_literal,
    replace_nodes,
    with_blank_line_before,
)
from ._partial import DefReading, Focus
from .specs import SplitByBlockDimArgs


def assign_modules(command: WarpCodemod, tree: cst.Module, groups: dict[str, str]) -> cst.Module:
    """Sets `module="<group>"` on the `@wp.kernel` decorator of every kernel named in `groups`."""
    warp = WarpImports.of(tree)
    functions = find_functions(tree)
    replacements: dict[cst.CSTNode, cst.CSTNode] = {}
    for kernel_name, module in groups.items():
        if not isinstance(module, str) or not module:
            raise command.refuse(f"module for {kernel_name!r} must be a non-empty string, got {module!r}")
        kernels = [f.node for f in functions if f.node.name.value == kernel_name]
        if not kernels:
            raise command.refuse(f"no kernel def named {kernel_name!r}")
        for kernel in kernels:
            dec = kernel_decorator(kernel, warp)
            if dec is None:
                raise command.refuse(f"{kernel_name}() is not decorated with wp.kernel")
            value = decorator_module(dec)
            if is_string(value, module):
                continue
            if value is not None and not isinstance(value, cst.SimpleString):
                raise command.refuse(f"{kernel_name}(): module={code(value)} is computed; cannot rename it")
            if isinstance(dec.decorator, cst.Call) and keyword(dec.decorator, "module_options") is not None:
                raise command.refuse(
                    f'{kernel_name}() sets module_options, only accepted with module="unique"'
                )
            replacements[dec] = decorator_with_module(dec, module)
    return replace_nodes(tree, replacements)


def add_module_options(
    command: WarpCodemod, tree: cst.Module, modules: list[str], options: dict[str, Any]
) -> cst.Module:
    """Adds `wp.get_module("<m>").options.update({...})` after the import header for each module."""
    if not options:
        return tree
    warp = WarpImports.of(tree)
    alias = ensure_warp_alias(command, warp)
    new = []
    for module in modules:
        text = f"{alias}.get_module({json.dumps(module)}).options.update({py_literal(options)})"
        if not module_has_statement(tree, text) and all(code(s).strip() != text for s in new):
            new.append(parse_stmt(text))
    if not new:
        return tree
    new[0] = with_blank_line_before(new[0])
    return tree.with_changes(body=insert_at(tree.body, header_end(tree, warp), new))


SPH_BEFORE = '''\
"""Smoothed-particle hydrodynamics: density, then forces, at the block sizes the profiler chose."""

import math

import numpy as np
import warp

from .constants import KERNEL_RADIUS

warp.set_module_options({"fast_math": True})


@warp.kernel
def compute_density(positions: warp.array(dtype=warp.vec3), density: warp.array(dtype=float)):
    """Density at each particle (launched with block_dim=256)."""
    i = warp.tid()
    density[i] = warp.length(positions[i]) / KERNEL_RADIUS


@warp.kernel(enable_backward=False)
def apply_forces(density: warp.array(dtype=float), forces: warp.array(dtype=warp.vec3)):
    """Pressure forces (launched with block_dim=64)."""
    i = warp.tid()
    forces[i] = forces[i] * density[i]


def step(positions: warp.array, forces: warp.array) -> np.ndarray:
    density = warp.zeros(positions.shape[0], dtype=float)
    warp.launch(compute_density, dim=positions.shape, inputs=[positions, density], block_dim=256)
    warp.launch(apply_forces, dim=forces.shape, inputs=[density, forces], block_dim=64)
    return density.numpy() * math.pi
'''
SPH_AFTER = '''\
"""Smoothed-particle hydrodynamics: density, then forces, at the block sizes the profiler chose."""

import math

import numpy as np
import warp

from .constants import KERNEL_RADIUS

warp.get_module("sph_bd256").options.update({"fast_math": True})
warp.get_module("sph_bd64").options.update({"fast_math": True})

warp.set_module_options({"fast_math": True})


@warp.kernel(module="sph_bd256")
def compute_density(positions: warp.array(dtype=warp.vec3), density: warp.array(dtype=float)):
    """Density at each particle (launched with block_dim=256)."""
    i = warp.tid()
    density[i] = warp.length(positions[i]) / KERNEL_RADIUS


@warp.kernel(enable_backward=False, module="sph_bd64")
def apply_forces(density: warp.array(dtype=float), forces: warp.array(dtype=warp.vec3)):
    """Pressure forces (launched with block_dim=64)."""
    i = warp.tid()
    forces[i] = forces[i] * density[i]


def step(positions: warp.array, forces: warp.array) -> np.ndarray:
    density = warp.zeros(positions.shape[0], dtype=float)
    warp.launch(compute_density, dim=positions.shape, inputs=[positions, density], block_dim=256)
    warp.launch(apply_forces, dim=forces.shape, inputs=[density, forces], block_dim=64)
    return density.numpy() * math.pi
'''


class SplitByBlockDim(WarpCodemod):
    """Gives each block_dim group of kernels its own named module, so a module is built at one stable
    CUDA block_dim instead of once per block_dim, and carries the old module's options to each new one.

    Sets (or adds) `module="<group>"` on each kernel's `@wp.kernel` decorator; for every group, in
    order of first appearance, adds `wp.get_module("<group>").options.update({...})` after the
    import header (skipped when `options` is empty). A kernel launched at a run-time block_dim is
    simply a group of its own.

    Refuses when a kernel is missing or not a Warp kernel, its `module=` is computed (not a literal),
    or it carries `module_options`.
    """

    NAME = "split_by_block_dim"
    ARGS_TYPE = SplitByBlockDimArgs
    DESCRIPTION = "Give each block_dim group of kernels its own named module, carrying the old options."
    EXAMPLES = (
        Example(
            title="two block-dim groups, options carried",
            args={
                "file": "sim.py",
                "groups": {"integrate": "sim_bd256", "reduce": "sim_bd64"},
                "options": {"fast_math": True},
            },
            before=(
                'import warp as wp\n\nwp.set_module_options({"fast_math": True})\n\n\n'
                "@wp.kernel\ndef integrate(x: wp.array(dtype=float)):\n    x[wp.tid()] += 1.0\n\n\n"
                "@wp.kernel(enable_backward=False)\ndef reduce(x: wp.array(dtype=float)):\n    pass\n"
            ),
            after=(
                "import warp as wp\n\n"
                'wp.get_module("sim_bd256").options.update({"fast_math": True})\n'
                'wp.get_module("sim_bd64").options.update({"fast_math": True})\n\n'
                'wp.set_module_options({"fast_math": True})\n\n\n'
                '@wp.kernel(module="sim_bd256")\ndef integrate(x: wp.array(dtype=float)):\n'
                "    x[wp.tid()] += 1.0\n\n\n"
                '@wp.kernel(enable_backward=False, module="sim_bd64")\n'
                "def reduce(x: wp.array(dtype=float)):\n"
                "    pass\n"
            ),
        ),
        Example(
            title="a project's module: its `import warp`, options carried to both groups",
            args={
                "file": "sph/forces.py",
                "groups": {"compute_density": "sph_bd256", "apply_forces": "sph_bd64"},
                "options": {"fast_math": True},
            },
            before=SPH_BEFORE,
            after=SPH_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\n\n\n@wp.kernel(module=NAME)\ndef k(x: float):\n    pass\n",
            args={"groups": {"k": "g"}},
            reason="computed",
        ),
        Refusal(before="import warp as wp\n", args={"groups": {"k": "g"}}, reason="no kernel def named 'k'"),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        return Focus.of(kwargs, defs=DefReading.DECORATORS)  # reads decorators, names and module scope only

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        groups = self.args["groups"]
        options = self.args["options"] or {}
        if not isinstance(groups, dict) or not groups:
            raise self.refuse("groups must be a non-empty {kernel: module} mapping")
        if not isinstance(options, dict):
            raise self.refuse(f"options must be a dict, got {options!r}")
        tree = assign_modules(self, tree, groups)
        ordered = list(dict.fromkeys(groups.values()))
        return add_module_options(self, tree, ordered, options)


__all__ = ["SplitByBlockDim", "add_module_options", "assign_modules"]
