"""Generic-kernel overloads, tape use and the calls followed from it (a tape decides if backward code is needed)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import TypeVar

from ..index import Argument, FunctionCalls, OverloadCall, PassedArguments, TapeBlock, TapeUse
from ..names import dotted_name
from ..parsed import argument
from ..receivers import Receivers
from ..targets import CallTargets
from .base import Collector

T = TypeVar("T")


class OverloadCollector(Collector):
    """Finds `wp.overload(kernel, types)` calls (the decorator form is found with the kernels)."""

    NODE_TYPES = (ast.Call,)

    def visit(self, node: ast.AST) -> None:
        assert isinstance(node, ast.Call)
        if self.parsed.warp_symbol(node.func) != "overload":
            return
        kernel = argument(node, "kernel", 0)
        types = argument(node, "arg_types", 1)
        self.found.overloads.append(
            OverloadCall(
                **self.parsed.located(node),
                kernel=self.parsed.source(kernel) if kernel is not None else "",
                types=self.parsed.source(types) if types is not None else None,
            )
        )


class TapeCollector(Collector):
    """Finds `wp.Tape()` and `.backward(...)` on a tape (a name bound to a Tape, or one named *tape*)."""

    NODE_TYPES = (ast.Call,)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._tape_names: set[str] = set()
        self._backward_calls: list[tuple[ast.Call, str]] = []
        self.targets = CallTargets.of(self.parsed)

    def visit(self, node: ast.AST) -> None:
        assert isinstance(node, ast.Call)
        if self.parsed.warp_symbol(node.func) == "Tape":
            receiver = self._bound_name(node)
            if receiver:
                self._tape_names.add(receiver)
            blocks = self._blocks(node, receiver)
            if not blocks and receiver and "." in receiver:
                entered = self._entered_in_class(node, receiver)
                if entered:  # `self.tape = wp.Tape()` in __init__, `with self.tape:` in the methods that record
                    for with_node, method_blocks in entered:
                        self.found.tapes.append(TapeUse(**self.parsed.located(with_node), kind="tape",
                                                        receiver=receiver, blocks=method_blocks))
                    return
            self.found.tapes.append(TapeUse(**self.parsed.located(node), kind="tape", receiver=receiver, blocks=blocks))
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
            self._backward_calls.append((node, self.parsed.source(node.func.value)))

    def finish(self) -> None:
        for call, receiver in self._backward_calls:
            if receiver in self._tape_names or "tape" in receiver.lower():
                blocks = self._blocks(call, receiver)
                use = TapeUse(**self.parsed.located(call), kind="backward", receiver=receiver, blocks=blocks)
                self.found.tapes.append(use)

    def _blocks(self, call: ast.Call, receiver: str | None) -> list[TapeBlock]:
        """The `with` blocks of the call's function that enter this tape: `with tape:` on its name, or the `with
        wp.Tape() as tape:` holding the call itself. A tape recorded otherwise (entered by hand, passed to a helper
        that enters it) has none, and the walk then follows the whole function."""
        scope = self.parsed.innermost_function(call) or self.parsed.tree
        blocks = []
        for node in ast.walk(scope):
            if not isinstance(node, ast.With | ast.AsyncWith) or not node.body:
                continue
            if any(self._enters(item, call, receiver) for item in node.items):
                body = ast.Module(body=node.body, type_ignores=[])
                # Warp's API runs no project code, and a launch (through a helper too) is a launch site
                calls = [n for n in ast.walk(body) if isinstance(n, ast.Call)
                         and not self.parsed.names_warp(n.func) and not self.parsed.launch_kind(n)]
                runs = [self.targets.runs(n) for n in calls]
                dynamic = [f"{n.lineno}: {self.parsed.source(n.func)}(...)" for n, r in zip(calls, runs) if r.dynamic]
                yields = any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(body))
                last = node.body[-1].end_lineno or node.lineno
                blocks.append(TapeBlock(node.body[0].lineno, last, _each(r.callees for r in runs), yields,
                                        _each(r.methods for r in runs), _each(r.typed for r in runs), dynamic))
        return blocks

    def _entered_in_class(self, call: ast.Call, receiver: str) -> list[tuple[ast.AST, list[TapeBlock]]]:
        """A tape kept on an attribute is recorded where the class's methods enter it (`with self.tape:`), not in
        the method that made it: per method, its first such `with` and the blocks it holds."""
        owner = next((a for a in self.parsed.iter_ancestors(call) if isinstance(a, ast.ClassDef)), None)
        if owner is None:
            return []
        entered = []
        for method in (n for n in ast.walk(owner) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            withs = [n for n in ast.walk(method) if isinstance(n, ast.With | ast.AsyncWith)
                     and self.parsed.innermost_function(n) is method
                     and any(self._enters(item, call, receiver) for item in n.items)]
            if withs:
                entered.append((withs[0], self._blocks(withs[0], receiver)))
        return entered

    def _enters(self, item: ast.withitem, call: ast.Call, receiver: str | None) -> bool:
        """`with <call>`, `with tape:` or `with wp.Tape() as tape:` for the tape named `receiver`."""
        if item.context_expr is call:
            return True
        names = [item.context_expr] if item.optional_vars is None else [item.context_expr, item.optional_vars]
        return receiver is not None and any(self.parsed.source(name) == receiver for name in names)

    def _bound_name(self, call: ast.Call) -> str | None:
        """`tape` in `tape = wp.Tape()` or `with wp.Tape() as tape:`."""
        parent = self.parsed.parent_of(call)
        while isinstance(parent, ast.IfExp | ast.BoolOp):  # `self.tape = wp.Tape() if grad else None`
            parent = self.parsed.parent_of(parent)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
            return self.parsed.source(parent.targets[0])
        if isinstance(parent, ast.withitem) and parent.optional_vars is not None:
            return self.parsed.source(parent.optional_vars)
        return None


class CallCollector(Collector):
    """Records which names each function of a repository file calls, so code reached from a tape can be followed.

    A tape in `calibrate()` that calls `model.predict(...)` differentiates the kernels `predict` launches,
    wherever `predict` is defined: the scan keeps one FunctionCalls per function, the walk over them is in
    `warp_fix.scan.differentiation`.
    """

    NODE_TYPES = (ast.Call, ast.FunctionDef, ast.AsyncFunctionDef)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._calls: dict[str | None, FunctionCalls] = {}
        # per function node: its record (keyed by qualname: a function defined twice under one name is one) and
        # its own parameters, found once instead of at each of its calls
        self._of_function: dict[int, tuple[FunctionCalls, set[str]]] = {}
        self._escaping: dict[int, frozenset[str]] = {}  # per enclosing function node, see `_escaping_names`
        self._bindings: dict[int, list[str]] | None = None  # see `_bound_as`
        self.receivers = Receivers.of(self.parsed)
        self.targets = CallTargets.of(self.parsed)
        self._defined_names: frozenset[str] | None = None

    def visit(self, node: ast.AST) -> None:
        if not self.parsed.info.in_repo:
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):  # one that calls nothing has a signature too
            self._record_of(node.body[0], node)
            return
        assert isinstance(node, ast.Call)
        func = node.func
        name = _callee(func)
        function = self.parsed.innermost_function(node)
        calls, parameters = self._record_of(node, function)
        if name is not None and name in self._defined():
            calls.passes.append(self._passed(node, name))
        if self._into_a_library(func) or self.parsed.launch_kind(node):  # wp.copy(...) runs Warp's code, not every
            return  # project function named `copy`; a launch, through a helper too, is recorded as a launch
        runs = self.targets.runs(node)
        if runs.dynamic:
            calls.dynamic.append(f"{node.lineno}: {self.parsed.source(func)}(...)")
        if runs.closure_parameter and runs.closure_parameter not in calls.closure_parameters:
            calls.closure_parameters.append(runs.closure_parameter)
        calls.methods.extend(method for method in runs.methods if method not in calls.methods)
        calls.typed.extend(typed for typed in runs.typed if typed not in calls.typed)
        calls.callees.extend(callee for callee in runs.callees if callee not in calls.callees)

    def _passed(self, node: ast.Call, name: str) -> PassedArguments:
        """What a call of a function of this file passes, each argument typed where the scan can."""
        target = self.parsed.own_method(node) or self.receivers.function_named(node.func, node)
        passed = PassedArguments(name, node.lineno, target, bound=isinstance(node.func, ast.Attribute))
        for position, value in enumerate(node.args):
            if isinstance(value, ast.Starred):
                passed.opaque = True
                break
            passed.arguments.append(self._argument(value, node, position=position))
        for keyword in node.keywords:
            if keyword.arg is None:
                passed.opaque = True
            else:
                passed.arguments.append(self._argument(keyword.value, node, keyword=keyword.arg))
        return passed

    def _argument(self, value: ast.expr, call: ast.Call, position: int | None = None,
                  keyword: str | None = None) -> Argument:
        if self.parsed.names_warp(value):  # `wp.launch` handed on: Warp's code
            return Argument(position, keyword, warp=self.parsed.warp_symbol(value) or dotted_name(value) or "warp")
        function = self.receivers.function_named(value, call)
        methods = [] if function else self.receivers.methods_named(value, call)
        return Argument(position, keyword, self.receivers.value_type(value, call), function, methods)

    def _defined(self) -> frozenset[str]:
        """The names of this file's functions (methods and nested ones too): calls of them are recorded with what
        they pass."""
        if self._defined_names is None:
            self._defined_names = frozenset(n.name for n in self.parsed.nodes
                                            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
        return self._defined_names

    def _record_of(self, node: ast.Call, function: ast.AST | None) -> tuple[FunctionCalls, set[str]]:
        found = self._of_function.get(id(function))
        if found is None:
            parameters = _parameters(function)
            located = self.parsed.located(node, function.lineno if function is not None else None)
            calls = self._calls.get(located["function"])
            if calls is None:
                calls = self._calls[located["function"]] = FunctionCalls(**located, parameters=sorted(parameters))
                if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                    calls.signature = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
            found = self._of_function[id(function)] = (calls, parameters)
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and calls.enclosed_in is None:
                calls.enclosed_in = self._enclosed_in(function)
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and not calls.bound_as:
                calls.bound_as = self._bound_as().get(id(function), [])
            returned = self.receivers.returned(function)
            if returned is not None and not calls.returns:
                calls.returns, calls.returns_exact = returned
        return found

    def _bound_as(self) -> dict[int, list[str]]:
        """Per module-scope function node, the methods classes of this file bind it as (`Tank.step` for `step =
        _Tank_step` in `class Tank:`, wrapped in `staticmethod` or not). Found once per file."""
        if self._bindings is None:
            self._bindings = {}
            for binding in self.parsed.class_bindings():
                self._bindings.setdefault(id(binding.function), []).append(f"{binding.cls.name}.{binding.name}")
        return self._bindings

    def _enclosed_in(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
        """The qualname of the function `function` is nested in, when no code outside that function can reach it:
        every use of its name there is a call, it is not decorated and not declared global or nonlocal."""
        around = self.parsed.enclosing_definitions(function)
        if not around or not isinstance(around[-1], ast.FunctionDef | ast.AsyncFunctionDef) or function.decorator_list:
            return None  # module scope, a method (an instance goes anywhere), or a decorator that may register it
        if function.name in self._escaping_names(around[-1]):
            return None  # returned, stored, passed on: callable from anywhere it goes
        return self.parsed.function_of(function)

    def _escaping_names(self, outer: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
        """Names `outer` declares global or nonlocal or uses other than by calling them: one walk per enclosing
        function, whatever the number of functions nested in it."""
        found = self._escaping.get(id(outer))
        if found is None:
            names: set[str] = set()
            for node in ast.walk(outer):
                if isinstance(node, ast.Global | ast.Nonlocal):
                    names.update(node.names)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    parent = self.parsed.parent_of(node)
                    if not (isinstance(parent, ast.Call) and parent.func is node):
                        names.add(node.id)
            found = self._escaping[id(outer)] = frozenset(names)
        return found

    def _into_a_library(self, func: ast.expr) -> bool:
        """The call names Warp's API: a launch under a tape is recorded as a launch, and Warp's other functions
        (`wp.copy`, `wp.zeros`) run no project kernel, whatever project functions share their names."""
        return self.parsed.names_warp(func)

    def finish(self) -> None:
        self.found.calls.extend(self._calls.values())


def _parameters(function: ast.AST | None) -> set[str]:
    """The parameter names of a def: a call through one runs whatever the caller passed in."""
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return set()
    args = function.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return set(names)


def _each(lists: Iterable[list[T]]) -> list[T]:
    """The items of `lists`, each once, in order."""
    return list(dict.fromkeys(item for items in lists for item in items))


def _callee(func: ast.expr) -> str | None:
    """The name a call is followed by: `step` for `sim.step(...)` and `step(...)`."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
