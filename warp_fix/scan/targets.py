"""What a call runs, as the tape walk follows it: the one reading of a call for every collector that records calls.

A call is followed through what its callee holds, not through the name it is written with:

    go = solver.advance          # a local alias: the call runs `Solver.advance`
    from pkg import step as go   # an aliased import: the call runs `step`
    for go in (a.run, b.run):    # a loop over bound methods: it runs each
    go = partial(solver.advance) # a partial: it runs what it wraps
    go = lambda y: solver.advance(y)
    go = getattr(solver, "advance")
    runner = Runner(); runner(x) # an instance of a class of this file: its `__call__`

Where the code does not say what the name holds (a parameter, a call's result, a `with` target, a name
bound in several ways one of which cannot be followed), the call cannot be followed (`CallTarget.dynamic`): under
a tape it may run anything. A parameter is decided in the walk, from what the function's callers pass (a closure's
call of an enclosing function's parameter too: `CallTarget.closure_parameter`). Only a name bound nowhere in the
file (a builtin, a `*` import) or bound by `def`, `class` or import is followed by its name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .index import TypedCall
from .names import dotted_name
from .parsed import ParsedFile
from .receivers import Receivers

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_PARTIALS = frozenset({"partial", "functools.partial"})


@dataclass
class CallTarget:
    """What one call runs: functions of its file (qualnames), calls typed by receiver, names followed by name; or
    `dynamic`, something the code does not say (also set beside the others when only part of it is known)."""

    methods: list[str] = field(default_factory=list)
    typed: list[TypedCall] = field(default_factory=list)
    callees: list[str] = field(default_factory=list)
    dynamic: bool = False
    closure_parameter: str = ""  # dynamic: a parameter of an enclosing function, called from a closure


class CallTargets:
    """One file's reading of its calls' targets (asked by the call and tape collectors: made once per file)."""

    DEPTH = 4  # aliases followed through at most this many bindings

    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self.receivers = Receivers.of(parsed)

    @classmethod
    def of(cls, parsed: ParsedFile) -> CallTargets:
        """The file's one instance, shared by its collectors."""
        return parsed.reading(cls)

    def runs(self, call: ast.Call) -> CallTarget:
        """What `call` runs (a launch and Warp's own API run no project function: ask `launch_kind` first)."""
        found = CallTarget()
        self._callee(call.func, call, found, self.DEPTH)
        return found

    def _callee(self, func: ast.expr, at: ast.AST, found: CallTarget, depth: int) -> None:
        """Adds to `found` what calling the value `func` (written at `at`) runs."""
        if depth <= 0:
            found.dynamic = True
        elif self.parsed.names_warp(func):
            return
        elif isinstance(func, ast.Attribute):
            self._attribute(func, at, found)
        elif isinstance(func, ast.Name):
            self._name(func, at, found, depth)
        elif isinstance(func, ast.IfExp):
            self._callee(func.body, at, found, depth - 1)
            self._callee(func.orelse, at, found, depth - 1)
        elif isinstance(func, ast.BoolOp):
            for value in func.values:
                self._callee(value, at, found, depth - 1)
        elif isinstance(func, ast.Lambda):
            self._lambda(func, found, depth)
        elif isinstance(func, ast.Call):
            self._result(func, found, depth)
        else:  # an item of a container (`handlers[kind]`), an attribute of a call's result, ...
            found.dynamic = True

    def _attribute(self, func: ast.Attribute, at: ast.AST, found: CallTarget) -> None:
        own = self.parsed.own_method_named(func, at)
        typed = None if own else self.receivers.typed(func, at)
        if own:
            found.methods.append(own)
        elif typed is not None:
            found.typed.append(typed)
        else:
            found.callees.append(func.attr)

    def _name(self, func: ast.Name, at: ast.AST, found: CallTarget, depth: int) -> None:
        bindings = self._bindings(func.id, at)
        if bindings is None:  # a builtin, a `*` import
            found.callees.append(func.id)
        for binding in bindings or ():
            if isinstance(binding, _Function | ast.ClassDef):
                self._definition(binding, found)
            elif isinstance(binding, ast.ImportFrom | ast.Import):
                self._imported(func.id, binding, found)
            elif isinstance(binding, ast.expr) and not _target(binding):  # `go = <value>`
                self._callee(binding, binding, found, depth - 1)
            elif isinstance(binding, ast.Name) and (value := self._assigned(binding)) is not None:
                self._callee(value, value, found, depth - 1)
            elif isinstance(binding, ast.Name) and (items := self.receivers.loop_items(func, at)) is not None:
                for item, where in items:  # `for go in (a.run, b.run):`
                    self._callee(item, where, found, depth - 1)
            else:  # a parameter, a `with` or `except` target, `global`: what it holds is not written here
                found.dynamic = True
                if isinstance(binding, ast.arg) and binding.arg == func.id and self._in_closure(binding, at):
                    found.closure_parameter = func.id

    def _bindings(self, name: str, at: ast.AST) -> list[ast.AST] | None:
        """What binds `name` where `at` reads it: the nearest enclosing function's (or lambda's) own bindings, else the
        module's; None where nothing in the file does. A binding by a function nested deeper is its own local,
        unless declared `nonlocal` or `global` (then what it holds is not said here: the `Nonlocal` node)."""
        scope = self._scope_of(at)
        while scope is not None:
            bindings = self.receivers.names_bound(scope).get(name, [])
            own = [b for b in bindings if self._scope_of(b) is scope]
            shared = [b for b in bindings if isinstance(b, ast.Global | ast.Nonlocal)]
            if own or shared:
                return own + shared
            scope = self._scope_of(scope)
        return self.receivers.module_bindings().get(name)

    def _in_closure(self, parameter: ast.arg, at: ast.AST) -> bool:
        """`parameter` is an enclosing function's, not the function's (or a lambda's) around `at`."""
        owner = self._scope_of(parameter)
        return isinstance(owner, _Function) and owner is not self._scope_of(at)

    def _scope_of(self, node: ast.AST) -> ast.AST | None:
        """The function or lambda around `node` (a parameter's: its own)."""
        return next((a for a in self.parsed.iter_ancestors(node) if isinstance(a, _Function | ast.Lambda)), None)

    def _assigned(self, target: ast.Name) -> ast.expr | None:
        """The value of `go: Callable = value` and `(go := value)`."""
        parent = self.parsed.parent_of(target)
        if isinstance(parent, ast.AnnAssign | ast.NamedExpr) and parent.target is target:
            return parent.value
        return None

    def _definition(self, definition: _Function | ast.ClassDef, found: CallTarget) -> None:
        """A `def` in a function runs exactly that function; any other `def` or `class` is followed by its name."""
        if isinstance(definition, _Function) and self.parsed.innermost_function(definition) is not None:
            found.methods.append(self.parsed.function_of(definition.body[0]) or definition.name)
        else:
            found.callees.append(definition.name)

    def _imported(self, name: str, statement: ast.Import | ast.ImportFrom, found: CallTarget) -> None:
        """`from pkg import step as go`: the call runs `step`, followed by that name."""
        alias = next((a for a in statement.names if (a.asname or a.name.split(".")[0]) == name), None)
        found.callees.append(alias.name.split(".")[-1] if alias is not None else name)

    def _lambda(self, function: ast.Lambda, found: CallTarget, depth: int) -> None:
        """A lambda runs the calls of its body (a launch there is not one of the tape's `with` block: unknown)."""
        for call in (n for n in ast.walk(function.body) if isinstance(n, ast.Call)):
            if self.parsed.launch_kind(call):
                found.dynamic = True
            else:
                self._callee(call.func, call, found, depth - 1)

    def _result(self, call: ast.Call, found: CallTarget, depth: int) -> None:
        """Calling what a call returns:

        - a `partial`'s wrapped function; `getattr(obj, "name")`'s `obj.name` (and its default);
        - an instance of a class of this file whose bases are too: its `__call__`.

        Anything else (a factory's closure, what `getattr(obj, name)` finds, a class with another file's bases,
        which may dispatch elsewhere as `torch.nn.Module` calls `forward`) is not said here."""
        called = dotted_name(call.func)
        if called in _PARTIALS and call.args:
            self._callee(call.args[0], call, found, depth - 1)
        elif called == "getattr" and self._bindings("getattr", call) is None and _literal_name(call):
            self._callee(ast.Attribute(call.args[0], call.args[1].value, ast.Load()), call, found, depth - 1)
            if len(call.args) > 2 and not (isinstance(call.args[2], ast.Constant) and call.args[2].value is None):
                self._callee(call.args[2], call, found, depth - 1)
        elif isinstance(call.func, ast.Name) and self._own_class(call.func.id, call, depth):
            found.typed.append(TypedCall("__call__", "instance", f"{self.parsed.info.python_module}.{call.func.id}"))
        else:
            found.dynamic = True

    def _own_class(self, name: str, at: ast.AST, depth: int) -> bool:
        """`name` is a module-scope class of this file, and so are its bases."""
        bindings = self._bindings(name, at)
        cls = bindings[0] if bindings and len(bindings) == 1 else None
        if not isinstance(cls, ast.ClassDef) or self.parsed.innermost_function(cls) is not None or depth <= 0:
            return False
        return not cls.keywords and all(
            isinstance(base, ast.Name) and self._own_class(base.id, cls, depth - 1) for base in cls.bases)


def _target(node: ast.expr) -> bool:
    """A name being bound (`go` in `for go in ...`), not a value read (`advance` in `go = advance`)."""
    return isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)


def _literal_name(call: ast.Call) -> bool:
    """`getattr(obj, "name")` or `getattr(obj, "name", default)`: the attribute is written."""
    return (2 <= len(call.args) <= 3 and not call.keywords and isinstance(call.args[1], ast.Constant)
            and isinstance(call.args[1].value, str) and call.args[1].value.isidentifier())
