"""call_site_argument: change a literal keyword argument at one call site (an option passed to a factory)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import code, keyword, literal_value, py_literal, replace_nodes
from ._partial import Focus
from .specs import CallSiteArgumentArgs


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


DENOISE_BEFORE = '''\
"""Denoising pipeline: blur the frame, then keep its gradient for the edge pass."""

from __future__ import annotations

import logging

import numpy as np
from warp import array, launch

from .filters import make_filter

log = logging.getLogger(__name__)


def build_passes(size: int) -> tuple[object, object]:
    """The blur and gradient kernels for a `size`-wide stencil; only the gradient is differentiated."""
    log.debug('building passes of width %d', size)
    blur = make_filter(size, enable_backward=True)
    grad = make_filter(size, enable_backward=True)
    return blur, grad


def denoise(frame: np.ndarray, size: int = 5) -> array:
    blur, _ = build_passes(size)
    out = array(frame, dtype=float)
    launch(blur, dim=out.shape, inputs=[out])
    return out
'''
DENOISE_AFTER = '''\
"""Denoising pipeline: blur the frame, then keep its gradient for the edge pass."""

from __future__ import annotations

import logging

import numpy as np
from warp import array, launch

from .filters import make_filter

log = logging.getLogger(__name__)


def build_passes(size: int) -> tuple[object, object]:
    """The blur and gradient kernels for a `size`-wide stencil; only the gradient is differentiated."""
    log.debug('building passes of width %d', size)
    blur = make_filter(size, enable_backward=False)
    grad = make_filter(size, enable_backward=True)
    return blur, grad


def denoise(frame: np.ndarray, size: int = 5) -> array:
    blur, _ = build_passes(size)
    out = array(frame, dtype=float)
    launch(blur, dim=out.shape, inputs=[out])
    return out
'''


class CallSiteArgument(WarpCodemod):
    """Sets a keyword argument that one call site passes as a literal, e.g. `make_filter(size,
    enable_backward=True)` -> `enable_backward=False`, when an option comes from a factory parameter:
    the factory's default stays, so its other callers keep what they had.

    A call already passing `value` is left alone (idempotent). Refuses when no call to `callee` spans
    `line`, when two do side by side, when the call does not pass `keyword` (the callee's default then
    applies: change it there, or add the argument by hand), or when it passes a value that is not a
    literal (a variable or expression computed at run time).
    """

    NAME = "call_site_argument"
    ARGS_TYPE = CallSiteArgumentArgs
    DESCRIPTION = "Change a literal keyword argument at one call site (not the callee's default)."
    EXAMPLES = (
        Example(
            title="a factory called with backward on: this call site only",
            args={"file": "app.py", "line": 5, "callee": "make_filter", "keyword": "enable_backward", "value": False},
            before=(
                "from filters import make_filter\n\n\ndef build(size):\n"
                "    blur = make_filter(size, enable_backward=True)  # forward only\n"
                "    grad = make_filter(size, enable_backward=True)\n    return blur, grad\n"
            ),
            after=(
                "from filters import make_filter\n\n\ndef build(size):\n"
                "    blur = make_filter(size, enable_backward=False)  # forward only\n"
                "    grad = make_filter(size, enable_backward=True)\n    return blur, grad\n"
            ),
        ),
        Example(
            title="a call over several lines, through a module attribute",
            args={"file": "app.py", "line": 6, "callee": "make_filter", "keyword": "block_dim", "value": 128},
            before=(
                "import filters\n\nblur = filters.make_filter(\n    8,\n    tile=True,\n"
                "    block_dim=256,\n)\n"
            ),
            after=(
                "import filters\n\nblur = filters.make_filter(\n    8,\n    tile=True,\n"
                "    block_dim=128,\n)\n"
            ),
        ),
        Example(
            title="a project's module: its `from warp import`, its single quotes, a relative import",
            args={
                "file": "denoise/pipeline.py",
                "line": 18,
                "callee": "make_filter",
                "keyword": "enable_backward",
                "value": False,
            },
            before=DENOISE_BEFORE,
            after=DENOISE_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before="from filters import make_filter\n\nflag = True\nblur = make_filter(8, enable_backward=flag)\n",
            args={"line": 4, "callee": "make_filter", "keyword": "enable_backward", "value": False},
            reason="not a literal",
        ),
        Refusal(
            before="from filters import make_filter\n\nblur = make_filter(8)\n",
            args={"line": 3, "callee": "make_filter", "keyword": "enable_backward", "value": False},
            reason="passes no enable_backward=",
        ),
        Refusal(
            before="from filters import make_filter\n\nblur = make_filter(8, enable_backward=True)\n",
            args={"line": 1, "callee": "make_filter", "keyword": "enable_backward", "value": False},
            reason="no call to make_filter",
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        """Only the statement holding the line: names elsewhere do not matter."""
        return Focus(frozenset(), frozenset({int(kwargs["line"])}) if "line" in kwargs else frozenset())

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        line, callee, name = int(self.args["line"]), self.args["callee"], self.args["keyword"]
        index = self.lines.index_at_line(line)
        if index is None:
            raise self.refuse(f"no call to {callee} on line {line}")
        top = tree.body[index]
        positions = self.lines.positions(index)
        finder = _Calls()
        top.visit(finder)
        spans = [
            (positions[c].start.line, positions[c].end.line, c)
            for c in finder.calls
            if _names(c.func, callee) and positions[c].start.line <= line <= positions[c].end.line
        ]
        if not spans:
            raise self.refuse(f"no call to {callee} on line {line}")
        # the innermost call: nested calls lie within the lines of those around them
        spans.sort(key=lambda s: s[1] - s[0])
        innermost = [s for s in spans if (s[0], s[1]) == (spans[0][0], spans[0][1])]
        if len(innermost) > 1:
            raise self.refuse(f"{len(innermost)} calls to {callee} on line {line}; which one is meant?")
        call = innermost[0][2]
        arg = keyword(call, name)
        if arg is None:
            raise self.refuse(f"`{callee}(...)` on line {line} passes no {name}=; its default applies there")
        ok, current = literal_value(arg.value)
        if not ok:
            raise self.refuse(f"{name}={code(arg.value)} on line {line} is not a literal")
        value = self.args["value"]
        if current == value and type(current) is type(value):
            return tree
        return replace_nodes(tree, {arg.value: cst.parse_expression(py_literal(value))}, within=[top])


def _names(func: cst.BaseExpression, callee: str) -> bool:
    written = code(func).replace(" ", "")
    return written == callee or written.rsplit(".", 1)[-1] == callee


__all__ = ["CallSiteArgument"]
