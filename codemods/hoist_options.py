"""hoist_options: move a constant module-options call out of a function to module scope (CS-3)."""

from __future__ import annotations

import json

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    find_functions,
    header_end,
    insert_at,
    is_string,
    literal_value,
    module_has_statement,
    parse_stmt,
    remove_statements,
    shell_names,
    single_call,
    with_blank_line_before,
    without_leading_blank_lines,
)
from .specs import HoistOptionsArgs


def options_call_parts(call: cst.Call, warp: WarpImports) -> tuple[str, cst.BaseExpression | None] | None:
    """("set", None) for `wp.set_module_options(d)`, ("get", name_expr) for
    `wp.get_module(name).options.update(d)`; None for anything else."""
    if warp.is_call_to(call, "set_module_options"):
        return "set", None
    func = call.func
    if (
        isinstance(func, cst.Attribute)
        and func.attr.value == "update"
        and isinstance(func.value, cst.Attribute)
        and func.value.attr.value == "options"
        and warp.is_call_to(func.value.value, "get_module")
    ):
        getter = func.value.value
        assert isinstance(getter, cst.Call)
        return "get", getter.args[0].value if getter.args else None
    return None


def options_dict(call: cst.Call) -> cst.BaseExpression | None:
    """The options argument (first positional or `options=`) when it is the only argument."""
    if len(call.args) != 1:
        return None
    arg = call.args[0]
    if arg.keyword is None or arg.keyword.value == "options":
        return arg.value
    return None


# The comment a function the hoist emptied keeps, in place of its work.
WHERE_OPTIONS_WENT = "Its module options are set at module scope now, before the module's first load."

# A module of a project, with its own import style (a `from __future__` line, `import warp` unaliased).
SETTINGS_BEFORE = '''\
"""Stage settings; the project's tests check that configure() applies them."""

from __future__ import annotations

import warp


def configure() -> None:
    """Turn off the backward pass for this stage's kernels."""
    warp.get_module(__name__).options.update({'enable_backward': False})
'''
SETTINGS_AFTER = '''\
"""Stage settings; the project's tests check that configure() applies them."""

from __future__ import annotations

import warp

warp.get_module(__name__).options.update({'enable_backward': False})


def configure() -> None:
    """Turn off the backward pass for this stage's kernels."""
    # Its module options are set at module scope now, before the module's first load.
'''


class _OptionsCalls(cst.CSTVisitor):
    def __init__(self, warp: WarpImports) -> None:
        self.warp = warp
        self.found: list[cst.SimpleStatementLine] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        call = single_call(node)
        if call is not None and options_call_parts(call, self.warp) is not None:
            self.found.append(node)
        return False


CONTACTS_BEFORE = '''\
"""Rigid-body contact stage."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import warp as wp

from .geometry import closest_point

log = logging.getLogger(__name__)


@wp.kernel
def resolve_contacts(points: wp.array(dtype=wp.vec3), normals: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    points[i] = closest_point(points[i], normals[i])


@dataclass
class ContactStage:
    """Pushes bodies out of each other once per frame."""

    iterations: int = 4

    def setup(self) -> None:
        """Prepare the stage before its first frame."""
        wp.set_module_options({'enable_backward': False})
        log.info('contact stage: %d iterations', self.iterations)

    def run(self, points: wp.array, normals: wp.array) -> np.ndarray:
        for _ in range(self.iterations):
            wp.launch(resolve_contacts, dim=points.shape, inputs=[points, normals])
        return points.numpy()
'''
CONTACTS_AFTER = '''\
"""Rigid-body contact stage."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import warp as wp

from .geometry import closest_point

wp.set_module_options({'enable_backward': False})

log = logging.getLogger(__name__)


@wp.kernel
def resolve_contacts(points: wp.array(dtype=wp.vec3), normals: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    points[i] = closest_point(points[i], normals[i])


@dataclass
class ContactStage:
    """Pushes bodies out of each other once per frame."""

    iterations: int = 4

    def setup(self) -> None:
        """Prepare the stage before its first frame."""
        log.info('contact stage: %d iterations', self.iterations)

    def run(self, points: wp.array, normals: wp.array) -> np.ndarray:
        for _ in range(self.iterations):
            wp.launch(resolve_contacts, dim=points.shape, inputs=[points, normals])
        return points.numpy()
'''


class HoistOptions(WarpCodemod):
    """Moves `wp.set_module_options({...})` / `wp.get_module(name).options.update({...})` from a
    function body to module scope, so the options are in place before the module's first load.

    Placement: right after the file's import header (see `header_end`): after the last top-level
    import, and after any `wp.config.X = ...` lines that directly follow it; this is before every
    kernel definition and any top-level launch. The function keeps its other statements. Only calls
    that are direct statements of the function body move.

    A function the hoist leaves without statements is no empty shell: a private one (`_name`) that the file
    only calls as a bare statement is removed with its calls (note "removed-helper"); any other keeps its
    docstring and a comment saying where its options went (notes "emptied-function", and "stale-docstring"
    when it has a docstring, which described them).

    Refuses when the options are not a literal of constants, the call sits inside an if/for/with/try,
    takes extra arguments, names another module than `module`, or the function has no options call
    and the module scope has none either.
    """

    NAME = "hoist_options"
    ARGS_TYPE = HoistOptionsArgs
    DESCRIPTION = (
        "Move a constant Warp module-options call from a function to module scope (before any load)."
    )
    EXAMPLES = (
        Example(
            title="set_module_options in a setup function",
            args={"file": "sim.py", "function": "setup"},
            before=(
                "import warp as wp\n\n\n"
                "@wp.kernel\ndef step(x: wp.array(dtype=float)):\n    x[wp.tid()] += 1.0\n\n\n"
                'def setup():\n    wp.set_module_options({"fast_math": True})\n'
            ),
            after=(
                'import warp as wp\n\nwp.set_module_options({"fast_math": True})\n\n\n'
                "@wp.kernel\ndef step(x: wp.array(dtype=float)):\n    x[wp.tid()] += 1.0\n\n\n"
                "def setup():\n"
                "    pass  # Its module options are set at module scope now, before the module's first load.\n"
            ),
            notes=("setup() was left empty: kept for its callers, with a comment",),
        ),
        Example(
            title="a private function left empty goes, with its calls",
            args={"file": "stage.py", "function": "_forward_only"},
            before=(
                "import warp as wp\n\n\ndef _forward_only():\n"
                '    wp.get_module(__name__).options.update({"enable_backward": False})\n\n\n'
                "def run(a):\n    _forward_only()\n    wp.launch(scale, dim=1, inputs=[a])\n"
            ),
            after=(
                'import warp as wp\n\nwp.get_module(__name__).options.update({"enable_backward": False})\n\n\n'
                "def run(a):\n    wp.launch(scale, dim=1, inputs=[a])\n"
            ),
            notes=("_forward_only() was left empty and only called: removed, with its calls",),
        ),
        Example(
            title="a project's public setup function: it keeps its docstring, which is flagged",
            args={"file": "pipeline/settings.py", "function": "configure"},
            before=SETTINGS_BEFORE,
            after=SETTINGS_AFTER,
            notes=(
                "configure() was left empty: kept for its callers, with a comment",
                "configure(): its docstring describes the options it set, no longer done",
            ),
        ),
        Example(
            title="named module, other statements stay",
            args={"file": "sim.py", "function": "run", "module": "solver"},
            before=(
                'import warp\n\n\ndef run(n):\n    """Run it."""\n'
                '    warp.get_module("solver").options.update({"max_unroll": 4})\n    return n\n'
            ),
            after=(
                'import warp\n\nwarp.get_module("solver").options.update({"max_unroll": 4})\n\n\n'
                'def run(n):\n    """Run it."""\n    return n\n'
            ),
        ),
        Example(
            title="set_module_options re-targeted at an explicitly named module",
            args={"file": "sim.py", "function": "setup", "module": "sim_stage"},
            before=(
                "import warp as wp\n\n\ndef setup():\n"
                "    wp.set_module_options({'mode': 'release'})\n    go()\n"
            ),
            after=(
                "import warp as wp\n\nwp.get_module(\"sim_stage\").options.update({'mode': 'release'})\n\n\n"
                "def setup():\n    go()\n"
            ),
        ),
        Example(
            title="a project's dataclass method: its single quotes, the options above the module-scope code",
            args={"file": "physics/contacts.py", "function": "setup"},
            before=CONTACTS_BEFORE,
            after=CONTACTS_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\n\n\ndef setup(fm):\n    wp.set_module_options({'fast_math': fm})\n",
            args={"function": "setup"},
            reason="not a literal of constants",
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef setup(a):\n    if a:\n"
                "        wp.set_module_options({'fast_math': True})\n"
            ),
            args={"function": "setup"},
            reason="inside a conditional",
        ),
        Refusal(before="import warp as wp\n", args={"function": "setup"}, reason="no function named"),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        name = self.args["function"]
        functions = [f for f in find_functions(tree) if f.node.name.value == name]
        if not functions:
            if self._module_scope_has_options(tree, warp):
                return tree  # hoisted already, and the function it emptied removed
            raise self.refuse(f"no function named {name!r}")
        wanted_line = self.args["line"]

        moved: list[cst.SimpleStatementLine] = []
        tops: list[cst.CSTNode] = []
        for found in functions:
            visitor = _OptionsCalls(warp)
            found.node.body.visit(visitor)
            body = found.node.body.body if isinstance(found.node.body, cst.IndentedBlock) else ()
            # positions of the top-level statement holding the function only, not of the whole file
            positions = self.lines.positions(self.lines.index_of(found.top)) if wanted_line is not None else None
            for stmt in visitor.found:
                if positions is not None and positions[stmt].start.line != wanted_line:
                    continue
                if stmt not in body:
                    raise self.refuse(
                        f"the options call `{code(stmt).strip()}` in {name}() is inside a conditional, "
                        "loop, with or try block; hoisting it would make it unconditional"
                    )
                moved.append(stmt)
                tops.append(found.top)

        if not moved:
            if self._module_scope_has_options(tree, warp):
                return tree
            where = f" on line {wanted_line}" if wanted_line is not None else ""
            raise self.refuse(f"no module-options call{where} directly in {name}()")

        new_statements = [self._module_statement(stmt, warp) for stmt in moved]
        shells_before = shell_names(tree)
        tree = remove_statements(tree, [s.body[0] for s in moved], within=tops)
        emptied = (shell_names(tree) - shells_before) & {name}
        tree = self.clear_emptied_functions(tree, emptied, WHERE_OPTIONS_WENT, "the options it set")
        new_statements = [s for s in new_statements if not module_has_statement(tree, code(s))]
        deduped: list[cst.SimpleStatementLine] = []
        for stmt in new_statements:
            if all(code(stmt) != code(d) for d in deduped):
                deduped.append(stmt)
        if not deduped:
            return tree
        deduped[0] = with_blank_line_before(deduped[0])
        index = header_end(tree, warp)
        return tree.with_changes(body=insert_at(tree.body, index, deduped))

    def _module_scope_has_options(self, tree: cst.Module, warp: WarpImports) -> bool:
        for stmt in tree.body:
            call = single_call(stmt)
            if call is not None and options_call_parts(call, warp) is not None:
                return True
        return False

    def _module_statement(self, stmt: cst.SimpleStatementLine, warp: WarpImports) -> cst.SimpleStatementLine:
        call = single_call(stmt)
        assert call is not None
        kind, target = options_call_parts(call, warp) or ("", None)
        options = options_dict(call)
        if options is None:
            raise self.refuse(f"`{code(call)}` must take exactly one argument, the options dict")
        ok, value = literal_value(options)
        if not ok or not isinstance(value, dict):
            raise self.refuse(f"options `{code(options)}` are not a literal of constants")
        module = self.args["module"]
        if kind == "get":
            if target is None or not (is_string(target) or code(target) == "__name__"):
                raise self.refuse(f"`{code(call)}`: get_module() must name a string literal or __name__")
            if module is not None and not is_string(target, module):
                raise self.refuse(f"`{code(call)}` names another module than {module!r}")
        if module is None or kind == "get":
            return without_leading_blank_lines(stmt)
        assert isinstance(call.func, cst.Attribute)
        alias = code(call.func.value)
        text = f"{alias}.get_module({json.dumps(module)}).options.update({code(options)})"
        return parse_stmt(text)


__all__ = ["HoistOptions"]
