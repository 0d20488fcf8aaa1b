"""Kernels made by a call inside the loop that launches them: one kernel per loop value, made lazily."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..index import LoopFactoryCall
from ..parsed import ParsedFile, argument, literal_of
from .base import Collector
from .launches import LAUNCH_POSITIONS

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class _Method:
    """A function as the method `name` of `cls`: defined in the class body, or a module-scope function of the file
    that the class binds by assignment (`apply = _FilterBank_apply`: `self.apply()` runs it, `self` its first
    parameter)."""

    cls: ast.ClassDef
    name: str
    function: _Function


def _methods(parsed: ParsedFile, cls: ast.ClassDef) -> list[_Method]:
    """The class's methods both ways; a `staticmethod(f)` or `classmethod(f)` binding takes no `self`: left out."""
    found = [_Method(cls, s.name, s) for s in cls.body if isinstance(s, _Function)]
    return found + [_Method(cls, b.name, b.function) for b in parsed.class_bindings() if b.cls is cls and not b.wrapper]


def _method_of(parsed: ParsedFile, function: _Function, parent: ast.AST | None) -> _Method | None:
    """`function` as a method: of the class whose body defines it, or of the one class binding it when the file
    reads its name nowhere else (a function also called on its own may be passed any first argument)."""
    if isinstance(parent, ast.ClassDef):
        return _Method(parent, function.name, function)
    bound = parsed.bound_method(function)
    return _Method(bound.cls, bound.name, function) if bound is not None else None


def _name(function: _Function, method: _Method | None) -> str:
    return method.name if method is not None else function.name


class LoopFactoryCallCollector(Collector):
    """Finds `wp.launch(make(v), ...)`, or `k = make(v)` then `wp.launch(k, ...)`, in one `for` loop of a function,
    and where the loop's values and the call's arguments come from (a constructor's attribute, a constant, a
    parameter, values computed per call)."""

    NODE_TYPES = (ast.Call,)

    def visit(self, node: ast.AST) -> None:
        assert isinstance(node, ast.Call)
        if not self.parsed.info.in_repo or self.parsed.launch_kind(node) is None:
            return
        function = self.parsed.innermost_function(node)
        loop = next((a for a in self.parsed.iter_ancestors(node) if isinstance(a, ast.For | _Function)), None)
        if function is None or not isinstance(loop, ast.For):
            return
        kernel = argument(node, "kernel", LAUNCH_POSITIONS["kernel"])
        call = kernel if isinstance(kernel, ast.Call) else _assigned_call(loop, kernel, node)
        if call is None or self.parsed.warp_symbol(call.func) is not None:
            return
        method = _method_of(self.parsed, function, self.parsed.parent_of(function))
        origin, detail, init_line, constructor_values = self._origin(loop.iter, function, method)
        targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        arguments = [self.parsed.source(a) for a in call.args]
        arguments += [f"{k.arg}={self.parsed.source(k.value)}" if k.arg else f"**{self.parsed.source(k.value)}"
                      for k in call.keywords]
        self.found.loop_factory_calls.append(
            LoopFactoryCall(
                **self.parsed.located(call),
                callee=self.parsed.source(call.func),
                arguments=arguments,
                class_name=method.cls.name if method else None,
                method=method.name if method else None,
                loop_line=loop.lineno,
                loop_target=self.parsed.source(loop.target),
                loop_iter=self.parsed.source(loop.iter),
                origin=origin,
                origin_detail=detail,
                init_line=init_line,
                constructor_values=constructor_values,
                per_call=self._per_call(call, targets, function),
            )
        )

    def _origin(
        self, values: ast.expr, function: _Function, method: _Method | None
    ) -> tuple[str, str, int | None, str]:
        """(origin, detail, the constructor's assignment line, the values as the constructor holds them when the
        loop's own iterable is a parameter standing for them)."""
        if literal_of(values)[0]:
            return "constant", "a literal", None, ""
        if isinstance(values, ast.Name):
            if values.id in _parameters(function):
                return self._parameter_origin(values.id, function, method)
            if _module_constant(self.parsed.tree, values.id):
                return "constant", f"{values.id} is a module-scope constant", None, ""
            return "computed", f"{values.id} is computed in {_name(function, method)}()", None, ""
        if _self_attribute(values, function) is not None:
            return (*self._constructor_origin(values, method), "")
        return "computed", f"{self.parsed.source(values)} is computed when the loop runs", None, ""

    def _parameter_origin(
        self, parameter: str, function: _Function, method: _Method | None
    ) -> tuple[str, str, int | None, str]:
        """A parameter of a private method (`_react(self, orders)`) that every call of it in its class fills with
        one attribute fixed at construction (`self._react(self.orders)`) holds that attribute's values; any other
        parameter is known only per call."""
        per_call = "parameter", f"{parameter} is a parameter of {_name(function, method)}()", None, ""
        if method is None or not method.name.startswith("_") or method.name.startswith("__"):
            return per_call
        passed = [_argument_for(call, function, parameter) for call in _calls_of_method(self.parsed, method)]
        attributes = [a for a in passed if isinstance(a, ast.Attribute) and _self_attribute(a, function)]
        if not passed or len(attributes) != len(passed) or len({self.parsed.source(a) for a in attributes}) != 1:
            return per_call
        origin, detail, line = self._constructor_origin(attributes[0], method)
        if origin != "constructor":
            return per_call
        held = self.parsed.source(attributes[0])
        count = f"{len(passed)} call{'s' if len(passed) > 1 else ''}"
        return origin, f"{parameter} is {held} at every call of {method.name}() ({count} in {method.cls.name}); " \
            f"{detail}", line, held

    def _constructor_origin(self, values: ast.Attribute, method: _Method | None) -> tuple[str, str, int | None]:
        """`self.X`: fixed at construction when only the class's `__init__` assigns it (at its top level), whichever
        way the class holds its methods (defined in its body, or module functions it binds by name)."""
        name = values.attr
        if method is None:
            return "computed", f"self.{name} of a function that is no method of a class", None
        cls = method.cls
        methods = _methods(self.parsed, cls)
        init = next((m.function for m in methods if m.name == "__init__"), None)
        elsewhere = [m.name for m in methods if m.function is not init and _assigns_self(m.function, name)]
        if elsewhere:
            return "computed", f"self.{name} is also assigned in {', '.join(elsewhere)}()", None
        if init is None:
            return "computed", f"{cls.name} has no __init__ assigning self.{name}", None
        lines = [s.end_lineno or s.lineno for s in init.body if _assigns_self(s, name)]
        if not lines:
            return "computed", f"{cls.name}.__init__ does not assign self.{name}", None
        return "constructor", f"self.{name} is set in {cls.name}.__init__", lines[-1]

    def _per_call(self, call: ast.Call, targets: set[str], function: _Function) -> list[str]:
        """Names the call's arguments read that are neither the loop variable nor module-scope names."""
        found: list[str] = []
        parameters = _parameters(function)
        for node in [*call.args, *(k.value for k in call.keywords)]:
            for name in (n for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute)):
                if isinstance(name, ast.Attribute):
                    if isinstance(name.value, ast.Name) and name.value.id in parameters:
                        found.append(f"{self.parsed.source(name)} (an attribute read when the loop runs)")
                    continue
                if name.id in targets or _module_constant(self.parsed.tree, name.id) or name.id in _BUILTINS:
                    continue
                if name.id in parameters:
                    found.append(f"{name.id} (a parameter of {function.name}())")
                    continue
                bound = _assignment_of(function, name.id)
                where = f"line {bound.lineno}: {self.parsed.source(bound)}" if bound is not None else "not a constant"
                found.append(f"{name.id} ({where})")
        return list(dict.fromkeys(found))


_BUILTINS = frozenset({"int", "float", "bool", "str", "len", "min", "max", "abs", "round", "tuple"})


def _assigned_call(loop: ast.For, kernel: ast.expr | None, launch: ast.Call) -> ast.Call | None:
    """The call assigned to the launched name in the loop body, before the launch: `kernel = make(width)`."""
    if not isinstance(kernel, ast.Name):
        return None
    found = None
    for statement in ast.walk(loop):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == kernel.id
            and statement.lineno <= launch.lineno
        ):
            found = statement.value if isinstance(statement.value, ast.Call) else None
    return found


def _parameters(function: _Function) -> set[str]:
    args = function.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return set(names) | {a.arg for a in (args.vararg, args.kwarg) if a is not None}


def _module_constant(tree: ast.Module, name: str) -> bool:
    """Bound at module scope: an import, a def or class, or an assignment (a constant, a registry)."""
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            if any((alias.asname or alias.name.split(".")[0]) == name for alias in statement.names):
                return True
        elif isinstance(statement, _Function | ast.ClassDef) and statement.name == name:
            return True
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def _calls_of_method(parsed: ParsedFile, method: _Method) -> list[ast.Call]:
    """`self.<method>(...)` calls in its class's methods (by each method's own first parameter)."""
    found = []
    for other in _methods(parsed, method.cls):
        for node in ast.walk(other.function):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method.name
                    and _self_attribute(node.func, other.function) is not None):
                found.append(node)
    return found


def _argument_for(call: ast.Call, method: _Function, parameter: str) -> ast.expr | None:
    """The expression a bound-method call passes for `parameter` (None: not passed, or passed through `*`/`**`)."""
    keyword = next((k.value for k in call.keywords if k.arg == parameter), None)
    if keyword is not None:
        return keyword
    names = [a.arg for a in (*method.args.posonlyargs, *method.args.args)][1:]  # without self
    if parameter not in names or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    position = names.index(parameter)
    return call.args[position] if position < len(call.args) else None


def _self_attribute(node: ast.expr, function: _Function) -> str | None:
    args = function.args.posonlyargs + function.args.args
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and args and node.value.id == args[0].arg:
        return node.attr
    return None


def _assigns_self(node: ast.AST, name: str) -> bool:
    for item in ast.walk(node):
        targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(
            item, ast.AnnAssign | ast.AugAssign) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr == name and isinstance(target.value, ast.Name) \
                    and target.value.id == "self":
                return True
    return False


def _assignment_of(function: _Function, name: str) -> ast.stmt | None:
    for statement in ast.walk(function):
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in statement.targets
        ):
            return statement
    return None
