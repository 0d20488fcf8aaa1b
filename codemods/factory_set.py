"""factory_set: a class makes its factory kernels before the first launch, in one named module (CS-1 of a factory)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    find_functions,
    is_string,
    iter_statements,
    keyword,
    parse_stmt,
    replace_nodes,
    string_arg,
    with_keyword,
)
from ._partial import Focus
from .specs import FactorySetArgs

# Beyond this a built dict is written over three lines (88: the strictest usual line limit, black's and ruff's).
_ONE_LINE = 88


class _Loops(cst.CSTVisitor):
    """Every call of a function, with the innermost `for` loop around it (None outside loops)."""

    def __init__(self) -> None:
        self.loops: list[cst.For] = []
        self.calls: list[tuple[cst.Call, cst.For | None]] = []

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.pop()

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.loops[-1] if self.loops else None))


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()
        self.assigned: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self.assigned.add(node.target.value)


RACK_BEFORE = '''\
"""Audio effects rack: one gain kernel per channel preset."""

from collections.abc import Sequence

import numpy as np
import warp as wp

from .presets import DEFAULT_GAINS


def make_gain_kernel(gain: float):
    """A kernel scaling a signal by `gain` (public: the mixer makes its own)."""

    def apply_gain(signal: wp.array(dtype=float)):
        i = wp.tid()
        signal[i] = signal[i] * gain

    return wp.kernel(apply_gain, module="unique")


class EffectsRack:
    """Applies each preset gain to the signal in turn."""

    def __init__(self, gains: Sequence[float] = DEFAULT_GAINS, device: str = "cuda:0") -> None:
        self.gains = tuple(gains)
        self.device = device

    def process(self, signal: wp.array) -> np.ndarray:
        """The signal after every gain, one row per preset."""
        rows = []
        for gain in self.gains:
            kernel = make_gain_kernel(gain)
            wp.launch(kernel, dim=signal.shape, inputs=[signal], device=self.device)
            rows.append(signal.numpy())
        return np.stack(rows)
'''
RACK_AFTER = '''\
"""Audio effects rack: one gain kernel per channel preset."""

from collections.abc import Sequence

import numpy as np
import warp as wp

from .presets import DEFAULT_GAINS


def make_gain_kernel(gain: float, module: str = "unique"):
    """A kernel scaling a signal by `gain` (public: the mixer makes its own)."""

    def apply_gain(signal: wp.array(dtype=float)):
        i = wp.tid()
        signal[i] = signal[i] * gain

    return wp.kernel(apply_gain, module=module)


class EffectsRack:
    """Applies each preset gain to the signal in turn."""

    def __init__(self, gains: Sequence[float] = DEFAULT_GAINS, device: str = "cuda:0") -> None:
        self.gains = tuple(gains)
        self._gain_kernels = {
            gain: make_gain_kernel(gain, module="audio.rack.EffectsRack") for gain in self.gains
        }
        self.device = device

    def process(self, signal: wp.array) -> np.ndarray:
        """The signal after every gain, one row per preset."""
        rows = []
        for gain in self.gains:
            kernel = self._gain_kernels[gain]
            wp.launch(kernel, dim=signal.shape, inputs=[signal], device=self.device)
            rows.append(signal.numpy())
        return np.stack(rows)
'''


# the factory of the examples below, before and after: a keyword whose default keeps a module per kernel
_FILTER_BEFORE = (
    "import warp as wp\n\n\ndef make_filter(width):\n    def box(x: wp.array(dtype=float)):\n"
    "        x[wp.tid()] *= float(width)\n\n    return wp.kernel(box, module=\"unique\")\n\n\n"
)
_FILTER_AFTER = (
    "import warp as wp\n\n\ndef make_filter(width, module=\"unique\"):\n    def box(x: wp.array(dtype=float)):\n"
    "        x[wp.tid()] *= float(width)\n\n    return wp.kernel(box, module=module)\n\n\n"
)


class FactorySet(WarpCodemod):
    """Makes the kernels a class launches from a factory, one per value of a loop, before the first launch and
    in one named module, instead of one `module="unique"` module each, made lazily inside the launch loop.

    A shared module alone does not help: each kernel made in the loop joins the module after its previous
    build, so Warp builds it again for every value (measured: 4 widths, 4 builds either way). Made together
    in `__init__`, they are all in the module at its first load: one build.

    In the class's file: `__init__` gains, after its last assignment of the loop's `self.<values>` (at its end
    when the loop runs over a constant), `self.<attribute> = {v: callee(v, ..., <parameter>="<module>") for v in
    <values>}`, and the call inside the loop of `method` becomes `self.<attribute>[v]`. `<values>` is the loop's
    iterable, or `values` when the loop runs over a parameter of a helper that stands for them (`for order in
    orders:` in `_react(self, orders)`, every call of which passes `self.orders`). In the factory's file:
    `factory` gains the keyword parameter `<parameter>="unique"` (annotated `str` when its other parameters
    are; the default keeps a module per kernel for every other caller) and passes it where it wrote
    `module="unique"` (`wp.kernel(fn, module="unique")`, or `@wp.kernel(module="unique")` on a kernel it
    defines). Other arguments stay as written.

    Refuses when the call is not in a `for` loop of `method` whose variable is a plain name, when its
    arguments read anything of the method besides the loop variable (data known only per call), when the
    class has no `__init__` or the loop's `self.<values>` is not assigned at its top level, when the factory
    has no `module="unique"` to pass the parameter to, or when that kernel sets `module_options` (Warp accepts
    them only with `module="unique"`).
    """

    NAME = "factory_set"
    ARGS_TYPE = FactorySetArgs
    DESCRIPTION = "Make a class's factory kernels in __init__, in one named module, instead of in the launch loop."
    EXAMPLES = (
        Example(
            title="a filter bank: the loop's factory kernels made in the constructor, the factory gains a keyword",
            args={
                "file": "bank.py", "class_name": "Bank", "method": "run", "line": 19, "callee": "make_filter",
                "attribute": "_filter_kernels", "module": "bank.Bank", "factory_file": "bank.py",
                "factory": "make_filter",
            },
            before=(
                _FILTER_BEFORE
                + "class Bank:\n    def __init__(self, widths=(3, 5)):\n        self.widths = tuple(widths)\n"
                "        self.ready = True\n\n    def run(self, x):\n        out = []\n"
                "        for width in self.widths:\n            kernel = make_filter(width)\n"
                "            wp.launch(kernel, dim=x.shape[0], inputs=[x])\n            out.append(x.numpy())\n"
                "        return out\n"
            ),
            after=(
                _FILTER_AFTER
                + "class Bank:\n    def __init__(self, widths=(3, 5)):\n        self.widths = tuple(widths)\n"
                "        self._filter_kernels = {\n"
                "            width: make_filter(width, module=\"bank.Bank\") for width in self.widths\n        }\n"
                "        self.ready = True\n\n    def run(self, x):\n        out = []\n"
                "        for width in self.widths:\n            kernel = self._filter_kernels[width]\n"
                "            wp.launch(kernel, dim=x.shape[0], inputs=[x])\n            out.append(x.numpy())\n"
                "        return out\n"
            ),
        ),
        Example(
            title="the loop's method is a module function the class binds by name (`run = _Bank_run`): its body is "
            "edited where it is written",
            args={
                "file": "bank.py", "class_name": "Bank", "method": "run", "line": 13, "callee": "make_filter",
                "attribute": "_filter_kernels", "module": "bank.Bank", "factory_file": "bank.py",
                "factory": "make_filter",
            },
            before=(
                _FILTER_BEFORE
                + "def _Bank_run(self, x):\n    for width in self.widths:\n"
                "        wp.launch(make_filter(width), dim=x.shape[0], inputs=[x])\n\n\n"
                "class Bank:\n    def __init__(self, widths=(3, 5)):\n        self.widths = tuple(widths)\n\n"
                "    run = _Bank_run\n"
            ),
            after=(
                _FILTER_AFTER
                + "def _Bank_run(self, x):\n    for width in self.widths:\n"
                "        wp.launch(self._filter_kernels[width], dim=x.shape[0], inputs=[x])\n\n\n"
                "class Bank:\n    def __init__(self, widths=(3, 5)):\n        self.widths = tuple(widths)\n"
                "        self._filter_kernels = {\n"
                "            width: make_filter(width, module=\"bank.Bank\") for width in self.widths\n        }\n\n"
                "    run = _Bank_run\n"
            ),
        ),
        Example(
            title="the loop runs over a parameter of a private helper that every call fills with `self.widths`: the "
            "constructor iterates `self.widths`",
            args={
                "file": "bank.py", "class_name": "Bank", "method": "_smooth", "line": 20, "callee": "make_filter",
                "attribute": "_filter_kernels", "module": "bank.Bank", "factory_file": "bank.py",
                "factory": "make_filter", "values": "self.widths",
            },
            before=(
                _FILTER_BEFORE
                + "class Bank:\n    def __init__(self, widths=(3, 5)):\n        self.widths = tuple(widths)\n\n"
                "    def run(self, x):\n        self._smooth(x, self.widths)\n\n"
                "    def _smooth(self, x, widths):\n        for width in widths:\n"
                "            wp.launch(make_filter(width), dim=x.shape[0], inputs=[x])\n"
            ),
            after=(
                _FILTER_AFTER
                + "class Bank:\n    def __init__(self, widths=(3, 5)):\n        self.widths = tuple(widths)\n"
                "        self._filter_kernels = {\n"
                "            width: make_filter(width, module=\"bank.Bank\") for width in self.widths\n        }\n\n"
                "    def run(self, x):\n        self._smooth(x, self.widths)\n\n"
                "    def _smooth(self, x, widths):\n        for width in widths:\n"
                "            wp.launch(self._filter_kernels[width], dim=x.shape[0], inputs=[x])\n"
            ),
        ),
        Example(
            title="a decorator on the factory's kernel, keyword-only parameters, a launch of the call itself",
            args={
                "file": "gains.py", "class_name": "Mixer", "method": "mix", "line": 18, "callee": "make_gain",
                "attribute": "_gain_kernels", "module": "gains.Mixer", "factory_file": "gains.py",
                "factory": "make_gain",
            },
            before=(
                "from warp import kernel, launch\n\n\ndef make_gain(gain, *, backward=False):\n"
                "    @kernel(module=\"unique\", enable_backward=backward)\n    def apply(x: float):\n"
                "        pass\n\n    return apply\n\n\nclass Mixer:\n    def __init__(self, gains):\n"
                "        self.gains = list(gains)\n\n    def mix(self, x):\n        for g in self.gains:\n"
                "            launch(make_gain(g), dim=1, inputs=[x])\n"
            ),
            after=(
                "from warp import kernel, launch\n\n\ndef make_gain(gain, *, backward=False, module=\"unique\"):\n"
                "    @kernel(module=module, enable_backward=backward)\n    def apply(x: float):\n"
                "        pass\n\n    return apply\n\n\nclass Mixer:\n    def __init__(self, gains):\n"
                "        self.gains = list(gains)\n"
                "        self._gain_kernels = {g: make_gain(g, module=\"gains.Mixer\") for g in self.gains}\n\n"
                "    def mix(self, x):\n        for g in self.gains:\n"
                "            launch(self._gain_kernels[g], dim=1, inputs=[x])\n"
            ),
        ),
        Example(
            title="a real project's shape: a loop over a module constant, a call over several lines, long names",
            args={
                "file": "render/passes.py", "class_name": "ToneMapper", "method": "__call__", "line": 31,
                "callee": "make_tone_curve", "attribute": "_tone_curve_kernels",
                "module": "render.passes.ToneMapper", "factory_file": "render/passes.py",
                "factory": "make_tone_curve",
            },
            before=(
                '"""Tone mapping passes."""\n\nimport warp as wp\n\nEXPOSURES = (-2, -1, 0, 1, 2)\n\n\n'
                "def make_tone_curve(stop: int, gamma: float = 2.2):\n"
                '    """A curve kernel for one exposure stop (public: the viewer makes its own)."""\n'
                "    scale = 2.0**stop\n\n"
                "    def curve(image: wp.array(dtype=float), out: wp.array(dtype=float)):\n"
                "        i = wp.tid()\n        out[i] = wp.pow(image[i] * scale, 1.0 / gamma)\n\n"
                '    curve.__qualname__ = f"tone_curve_{stop + 2}"\n'
                '    return wp.kernel(curve, module="unique")\n\n\n'
                "class ToneMapper:\n"
                '    """Applies every exposure curve in turn."""\n\n'
                "    def __init__(self, device):\n        self.device = device\n\n"
                "    def __call__(self, image, out):\n        for stop in EXPOSURES:\n"
                "            if stop == 0:\n                continue\n            wp.launch(\n"
                "                make_tone_curve(stop, gamma=2.2),\n                dim=image.shape,\n"
                "                inputs=[image, out],\n                device=self.device,\n            )\n"
            ),
            after=(
                '"""Tone mapping passes."""\n\nimport warp as wp\n\nEXPOSURES = (-2, -1, 0, 1, 2)\n\n\n'
                "def make_tone_curve(stop: int, gamma: float = 2.2, module: str = \"unique\"):\n"
                '    """A curve kernel for one exposure stop (public: the viewer makes its own)."""\n'
                "    scale = 2.0**stop\n\n"
                "    def curve(image: wp.array(dtype=float), out: wp.array(dtype=float)):\n"
                "        i = wp.tid()\n        out[i] = wp.pow(image[i] * scale, 1.0 / gamma)\n\n"
                '    curve.__qualname__ = f"tone_curve_{stop + 2}"\n'
                "    return wp.kernel(curve, module=module)\n\n\n"
                "class ToneMapper:\n"
                '    """Applies every exposure curve in turn."""\n\n'
                "    def __init__(self, device):\n        self.device = device\n"
                "        self._tone_curve_kernels = {\n"
                "            stop: make_tone_curve(stop, gamma=2.2, module=\"render.passes.ToneMapper\") "
                "for stop in EXPOSURES\n        }\n\n"
                "    def __call__(self, image, out):\n        for stop in EXPOSURES:\n"
                "            if stop == 0:\n                continue\n            wp.launch(\n"
                "                self._tone_curve_kernels[stop],\n                dim=image.shape,\n"
                "                inputs=[image, out],\n                device=self.device,\n            )\n"
            ),
        ),
        Example(
            title="a project's class: typed constructor, a relative import, the factory in the same file",
            args={
                "file": "audio/rack.py",
                "class_name": "EffectsRack",
                "method": "process",
                "line": 32,
                "callee": "make_gain_kernel",
                "attribute": "_gain_kernels",
                "module": "audio.rack.EffectsRack",
                "factory_file": "audio/rack.py",
                "factory": "make_gain_kernel",
            },
            before=RACK_BEFORE,
            after=RACK_AFTER,
            project_style=True,
        ),
    )
    _BANK = {"class_name": "Bank", "method": "run", "callee": "make", "attribute": "_k", "module": "m",
             "factory_file": "f.py", "factory": "make"}
    _BANK_LOOP = (
        "\n\nclass Bank:\n    def __init__(self, widths):\n        self.widths = widths\n\n    def run(self):\n"
        "        for w in self.widths:\n            wp.launch(make(w), dim=1, inputs=[])\n"
    )
    REFUSALS = (
        Refusal(  # a static method takes no `self`: there are no constructor's values to make the set from
            before=(
                "import warp as wp\nfrom f import make\n\n\ndef _Bank_run(self):\n    for w in self.widths:\n"
                "        wp.launch(make(w), dim=1, inputs=[])\n\n\nclass Bank:\n    def __init__(self, widths):\n"
                "        self.widths = widths\n\n    run = staticmethod(_Bank_run)\n"
            ),
            args={**_BANK, "line": 7},
            reason="Bank has no method 'run'",
        ),
        Refusal(
            before=(
                "import warp as wp\nfrom f import make\n\n\nclass Bank:\n    def __init__(self):\n"
                "        self.n = 1\n\n    def run(self, frames):\n        for frame in frames:\n"
                "            width = int(frame.max())\n            wp.launch(make(width), dim=1, inputs=[])\n"
            ),
            args={**_BANK, "line": 12},
            reason="read per call: width",
        ),
        Refusal(
            before=(
                "import warp as wp\nfrom f import make\n\n\nclass Bank:\n    widths = (3, 5)\n\n"
                "    def run(self):\n        for w in self.widths:\n            wp.launch(make(w), dim=1, inputs=[])\n"
            ),
            args={**_BANK, "line": 10},
            reason="no __init__",
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make(w):\n    def k(x: float):\n        pass\n\n"
                "    return wp.kernel(k, module=\"unique\", module_options={\"fast_math\": True})\n" + _BANK_LOOP
            ),
            args={**_BANK, "line": 17, "factory_file": ""},
            reason="module_options",
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make(w):\n    def k(x: float):\n        pass\n\n"
                "    return wp.kernel(k)\n" + _BANK_LOOP
            ),
            args={**_BANK, "line": 17, "factory_file": ""},
            reason='makes no kernel with module="unique"',
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        return Focus.of({k: v for k, v in kwargs.items() if k in ("class_name", "factory", "callee")})

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        edit = self.args["edit"]
        if edit not in ("loop", "factory", "both"):
            raise self.refuse(f'edit must be "loop", "factory" or "both", not {edit!r}')
        if edit != "factory":
            tree = self._class(tree)  # first: it reads the lines of the file as given
        if edit != "loop":
            tree = self._factory(tree)
        return tree

    # -- the factory: a keyword whose default keeps a module per kernel ------------------------------------------

    def _factory(self, tree: cst.Module) -> cst.Module:
        name, parameter = self.args["factory"], self.args["parameter"]
        warp = WarpImports.of(tree)
        found = [f for f in find_functions(tree) if f.node.name.value == name]
        if not found:
            raise self.refuse(f"no function named {name!r}")
        func = found[0].node
        replacements: dict[cst.CSTNode, cst.CSTNode] = {}
        for call in _kernel_calls(func, warp):
            module = keyword(call, "module")
            if module is not None and is_string(module.value, "unique"):
                if keyword(call, "module_options") is not None:
                    raise self.refuse(f"{name}() passes module_options, which Warp accepts only with module=\"unique\"")
                replacements[module.value] = cst.Name(parameter)
        params = func.params
        has_parameter = any(p.name.value == parameter for p in [*params.params, *params.kwonly_params])
        if not replacements:
            if has_parameter and _uses_parameter(func, warp, parameter):
                return tree  # done already
            raise self.refuse(f'{name}() makes no kernel with module="unique"')
        if not has_parameter:
            # annotated like the factory's other parameters: `module: str = "unique"` beside `width: int`
            annotated = any(p.annotation is not None for p in [*params.params, *params.kwonly_params])
            space = cst.SimpleWhitespace(" " if annotated else "")
            new = cst.Param(
                name=cst.Name(parameter), default=string_arg("unique"),
                annotation=cst.Annotation(cst.Name("str")) if annotated else None,
                equal=cst.AssignEqual(whitespace_before=space, whitespace_after=space),
            )
            replacements[params] = _with_parameter(params, new)
        return replace_nodes(tree, replacements)

    # -- the class: the set made in __init__, looked up in the loop ----------------------------------------------

    def _class(self, tree: cst.Module) -> cst.Module:
        class_name, method_name = self.args["class_name"], self.args["method"]
        cls, top = next(
            ((s, t) for s, _, t in iter_statements(tree) if isinstance(s, cst.ClassDef) and s.name.value == class_name),
            (None, None),
        )
        if cls is None or top is None:
            raise self.refuse(f"no class named {class_name!r}")
        methods = _methods(tree, cls, top)
        (method, method_top), init = methods.get(method_name, (None, None)), methods.get("__init__", (None, None))[0]
        if method is None or method_top is None:
            raise self.refuse(f"{class_name} has no method {method_name!r}")
        if init is None:
            raise self.refuse(f"{class_name} has no __init__ to make the kernels in")
        attribute, line, callee = self.args["attribute"], int(self.args["line"]), self.args["callee"]
        me, init_self = _first_parameter(method), _first_parameter(init)
        if me is None or init_self is None:
            raise self.refuse(f"{class_name}.{method_name} or __init__ takes no self")
        if f"{me}.{attribute}[" in code(method):
            return tree  # done already
        positions = self.lines.positions(self.lines.index_of(method_top))
        finder = _Loops()
        method.visit(finder)
        calls = [(c, loop) for c, loop in finder.calls
                 if _names(c.func, callee) and positions[c].start.line <= line <= positions[c].end.line]
        if not calls:
            raise self.refuse(f"no call to {callee} on line {line} in {class_name}.{method_name}")
        calls.sort(key=lambda item: positions[item[0]].end.line - positions[item[0]].start.line)
        call, loop = calls[0]
        if loop is None or not isinstance(loop.target, cst.Name):
            raise self.refuse(f"{callee}(...) on line {line} is not in a `for` loop over plain values")
        target = loop.target.value
        self._check_arguments(call, target, method, me)
        iterable = cst.parse_expression(self.args["values"]) if self.args.get("values") else loop.iter
        values = code(iterable)
        if f"{me}." in values and me != init_self:
            values = values.replace(f"{me}.", f"{init_self}.")
        anchor = _insertion_point(init, iterable, me)
        made = with_keyword(call, self.args["parameter"], string_arg(self.args["module"]))
        built = f"{init_self}.{attribute} = {{{target}: {code(made)} for {target} in {values}}}"
        if len(tree.default_indent * 2) + len(built) > _ONE_LINE:  # continuation lines: relative to the block
            built = (f"{init_self}.{attribute} = {{\n{tree.default_indent}{target}: {code(made)} for {target} in "
                     f"{values}\n}}")
        statement = parse_stmt(built)
        body = list(init.body.body)
        position = len(body) if anchor is None else body.index(anchor) + 1
        if anchor is None and _self_attribute(iterable, me):
            raise self.refuse(f"{class_name}.__init__ does not assign {values} at its top level")
        body.insert(position, statement)
        lookup = cst.parse_expression(f"{me}.{attribute}[{target}]")
        return replace_nodes(tree, {call: lookup, init.body: init.body.with_changes(body=body)})

    def _check_arguments(self, call: cst.Call, target: str, method: cst.FunctionDef, me: str) -> None:
        """The call may read the loop variable, literals and module-scope names; nothing the method computes."""
        read = _Names()
        for arg in call.args:
            arg.value.visit(read)
        local = _Names()
        method.body.visit(local)
        parameters = {p.name.value for p in [*method.params.params, *method.params.kwonly_params]}
        per_call = sorted((read.names & (local.assigned | parameters)) - {target})
        if per_call:
            raise self.refuse(f"the call's arguments read per call: {', '.join(per_call)}")


def _kernel_calls(func: cst.FunctionDef, warp: WarpImports) -> list[cst.Call]:
    """`wp.kernel(...)` calls and `@wp.kernel(...)` decorator calls inside the factory."""
    found: list[cst.Call] = []

    class _Visitor(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if warp.qualify(node.func) == "warp.kernel":
                found.append(node)

    func.body.visit(_Visitor())
    return found


def _uses_parameter(func: cst.FunctionDef, warp: WarpImports, parameter: str) -> bool:
    for call in _kernel_calls(func, warp):
        module = keyword(call, "module")
        if module is not None and isinstance(module.value, cst.Name) and module.value.value == parameter:
            return True
    return False


def _with_parameter(params: cst.Parameters, new: cst.Param) -> cst.Parameters:
    """`new` appended where a defaulted keyword fits: keyword-only after `*`/`*args`, else the last positional."""
    keyword_only = params.kwonly_params or not isinstance(params.star_arg, cst.MaybeSentinel)
    existing = list(params.kwonly_params if keyword_only else params.params)
    if existing and existing[-1].comma is cst.MaybeSentinel.DEFAULT:
        existing[-1] = existing[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    elif existing and isinstance(existing[-1].comma, cst.Comma):
        new = new.with_changes(comma=existing[-1].comma)  # keep a trailing comma where the author wrote one
    existing.append(new)
    return params.with_changes(**{"kwonly_params" if keyword_only else "params": existing})


def _methods(
    tree: cst.Module, cls: cst.ClassDef, top: cst.BaseStatement
) -> dict[str, tuple[cst.FunctionDef, cst.BaseStatement]]:
    """The class's methods taking `self`, each with the top-level statement holding its body: those its body
    defines, and module-scope functions it binds by name (`apply = _FilterBank_apply`: the body to edit is the
    function's)."""
    functions = {s.name.value: s for s in tree.body if isinstance(s, cst.FunctionDef)}
    found: dict[str, tuple[cst.FunctionDef, cst.BaseStatement]] = {}
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef):
            found[statement.name.value] = (statement, top)
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            function = functions.get(small.value.value) if isinstance(small, cst.Assign) and isinstance(
                small.value, cst.Name) else None
            if function is not None:
                found.update({t.target.value: (function, function) for t in small.targets
                              if isinstance(t.target, cst.Name)})
    return found


def _first_parameter(func: cst.FunctionDef) -> str | None:
    params = [*func.params.posonly_params, *func.params.params]
    return params[0].name.value if params else None


def _self_attribute(node: cst.BaseExpression, me: str) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == me:
        return node.attr.value
    return None


def _insertion_point(init: cst.FunctionDef, values: cst.BaseExpression, me: str) -> cst.BaseStatement | None:
    """The last top-level statement of `__init__` assigning `self.<values>`; None when the values are no
    attribute of the instance (a constant: the set is made at the end of `__init__`)."""
    name = _self_attribute(values, me)
    init_self = _first_parameter(init)
    if name is None or init_self is None:
        return None
    anchor = None
    for statement in init.body.body:
        assigned = _Assigned(init_self, name)
        statement.visit(assigned)
        if assigned.found:
            anchor = statement
    return anchor


class _Assigned(cst.CSTVisitor):
    """Whether a statement assigns `<owner>.<name>` (`=`, annotated, augmented, or a `for`/`with` target)."""

    def __init__(self, owner: str, name: str) -> None:
        self.owner, self.name, self.found = owner, name, False

    def _check(self, target: cst.BaseExpression) -> None:
        if _self_attribute(target, self.owner) == self.name:
            self.found = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._check(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._check(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node.target)


def _names(func: cst.BaseExpression, callee: str) -> bool:
    written = code(func).replace(" ", "")
    return written == callee or written.rsplit(".", 1)[-1] == callee


__all__ = ["FactorySet"]
