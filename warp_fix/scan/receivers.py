"""What a method call's receiver is, where one file says it soundly: the class a name stands for, and the kind
of receiver (`TypedCall`) the tape walk resolves through the class hierarchy instead of by the method's name.

Only values whose class the code fixes are typed: a constructor call or a literal, a local or a closure's
variable bound once to one (or to what a function returns), a parameter by its annotation, or, unannotated, by
what its function's callers pass (`PassedArguments`, decided in the walk), `self` and `super()` in a method (also
in a module function its class binds as one), a class named directly, and attributes read from any of these (what
they hold is decided by the class hierarchy's stores, in the walk). Everything else stays a call by name.
"""

from __future__ import annotations

import ast
import builtins

from .index import TypedCall, ValueType
from .names import dotted_name
from .parsed import ParsedFile

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_LITERALS = {ast.Dict: "dict", ast.DictComp: "dict", ast.List: "list", ast.ListComp: "list", ast.Set: "set",
             ast.SetComp: "set", ast.Tuple: "tuple"}
# builtin classes whose methods run no project code (`type(x).step()` and `super` name other classes)
_BUILTINS = frozenset(name for name in dir(builtins) if isinstance(getattr(builtins, name), type)) - {
    "type", "super", "staticmethod", "classmethod", "property"}


class Receivers:
    """One file's typing of call receivers and class names (asked by several collectors: made once per file)."""

    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self._top: dict[str, list[str]] | None = None
        self._all: dict[int, dict[str, list[ast.AST]]] | None = None
        self._chains: dict[int, list[ast.AST]] = {}
        self._classes: dict[int, str | None] = {}  # per function node, see `class_of_method`

    @classmethod
    def of(cls, parsed: ParsedFile) -> Receivers:
        """The file's one instance, shared by its collectors (each answer is found once per file)."""
        return parsed.reading(cls)

    def typed(self, func: ast.expr, at: ast.AST) -> TypedCall | None:
        """A call of `func` (`solver.step`, read at `at`) as a `TypedCall`, when its receiver is one of the shapes
        above."""
        if not isinstance(func, ast.Attribute):
            return None
        receiver, method = func.value, func.attr
        function = self.parsed.innermost_function(at)
        cls = self.class_of_method(function)
        if _is_super(receiver):
            plain = not receiver.args and not receiver.keywords  # type: ignore[attr-defined]
            return TypedCall(method, "super", cls) if cls is not None and plain else None
        root = self._receiver(receiver, at, function, cls, depth=4)
        if root is None:
            return None
        kind, of, path = root
        if kind == "class" and path:  # an attribute of a class object, or of a module: not followed
            return None
        return TypedCall(method, kind, of, ".".join(path))

    def _receiver(
        self, node: ast.AST, at: ast.AST, function: ast.AST | None, cls: str | None, depth: int
    ) -> tuple[str, str, list[str]] | None:
        """(kind, class, attribute path) of what `node` holds: `self.solver` is ("self", the class, ["solver"]),
        a local bound once to `self.model`, then `.grid`, is ("self", the class, ["model", "grid"])."""
        if depth <= 0:
            return None
        if isinstance(node, ast.Attribute):
            holder = self._receiver(node.value, at, function, cls, depth - 1)
            return (holder[0], holder[1], [*holder[2], node.attr]) if holder else None
        if isinstance(node, (ast.Call, ast.Constant, *_LITERALS)):
            made = self.value_class(node, at)  # type: ignore[arg-type]
            return ("instance", made, []) if made else None
        if not isinstance(node, ast.Name) or function is None:
            return None
        if cls is not None and self._is_self(node.id, function):
            return "self", cls, []
        bindings = self._bindings(function).get(node.id, [])
        if not bindings:
            outer = self._enclosing_binding(node.id, function)
            if outer is not None:  # a closure's variable, bound once by the function around it
                return self._receiver(outer, at, self.parsed.innermost_function(outer), cls, depth - 1)
            named = self.qualify(node, at)  # `object.__setattr__(self, ...)`, `Base.reset(self)`
            return ("class", named, []) if named else None
        if len(bindings) != 1:
            return None
        value = bindings[0]  # the one value the name holds: a parameter, a constructor call, `self.x`
        if isinstance(value, ast.arg):
            declared = self.declared(value, function) if value.annotation is not None else None
            if declared:
                return "declared", declared, []
            if value.annotation is None and isinstance(function, _Function) and value in function.args.args:
                return "argument", self._qualified(function), [value.arg]  # what its callers pass
            return None
        if isinstance(value, ast.expr) and self.parsed.innermost_function(value) is function:
            return self._receiver(value, at, function, cls, depth - 1)
        return None

    def object_class(self, target: ast.expr, at: ast.AST) -> tuple[str, bool] | None:
        """The class of an object other than `self` that code stores an attribute on, when the code says it, and
        whether exactly (`m` after `m = Model(...)`; a parameter `model: Model` may be a subclass): such a store
        counts for that class's attributes."""
        typed = self.value_type(target, at)
        if typed is None or typed.kind not in ("instance", "declared") or typed.attribute:
            return None
        return typed.of, typed.kind == "instance"

    def value_type(self, value: ast.expr, at: ast.AST) -> ValueType | None:
        """What a value passed at `at` is, as a receiver would be typed (`_receiver`)."""
        function = self.parsed.innermost_function(at)
        root = self._receiver(value, at, function, self.class_of_method(function), depth=4)
        return ValueType(root[0], root[1], ".".join(root[2])) if root is not None else None

    def function_named(self, value: ast.expr, at: ast.AST) -> str:
        """The qualname (this file) of the function `value` names, a callback handed on: a nested `def` the
        function binds only so, a module-scope function of the file, `self.method` of the class's own methods."""
        if isinstance(value, ast.Attribute):
            return self.parsed.own_method_named(value, at) or ""
        if not isinstance(value, ast.Name):
            return ""
        function = self.parsed.innermost_function(at)
        while function is not None:
            bindings = self._bindings(function).get(value.id)
            if bindings:
                only = bindings[0] if len(bindings) == 1 else None
                own = isinstance(only, _Function) and self.parsed.innermost_function(only) is function
                return self._qualname(only) if own else ""  # type: ignore[arg-type]
            function = self.parsed.innermost_function(function)
        top = self._top_level().get(value.id, [])
        if top != [f"{self.parsed.info.python_module}.{value.id}"]:
            return ""
        defined = next((n for n in self.parsed.tree.body if isinstance(n, _Function) and n.name == value.id), None)
        return self._qualname(defined) if defined is not None else ""

    def methods_named(self, value: ast.expr, at: ast.AST) -> list[TypedCall]:
        """The bound methods a value handed on at `at` may be, each as the call it makes when called, where the
        code says them all: `view.get_positions` with `view` typed, or a loop variable over a literal of those (or
        over what a function of this file returns, every `return` such a literal), one element per item:

            for getter, setter in ((cloth.get_q, cloth.set_q), (cable.get_q, cable.set_q)):
                evaluate(getter)   # runs cloth.get_q or cable.get_q

        Empty when any of them is something else."""
        found = self._methods(value, at, depth=3)
        return found or []

    def _methods(self, value: ast.expr, at: ast.AST, depth: int) -> list[TypedCall] | None:
        if depth <= 0:
            return None
        if isinstance(value, ast.Attribute):
            function = self.parsed.innermost_function(at)
            root = self._receiver(value.value, at, function, self.class_of_method(function), depth=4)
            if root is None or (root[0] == "class" and root[2]):
                return None
            return [TypedCall(value.attr, root[0], root[1], ".".join(root[2]))]
        items = self.loop_items(value, at) if isinstance(value, ast.Name) else None
        if not items:
            return None
        found: list[TypedCall] = []
        for item, where in items:
            methods = self._methods(item, where, depth - 1)
            if methods is None:
                return None
            found += [m for m in methods if m not in found]
        return found or None

    def loop_items(self, name: ast.Name, at: ast.AST) -> list[tuple[ast.expr, ast.AST]] | None:
        """The values a loop variable takes, each with where it is written, when its function binds it only as
        the target (or one element of it) of a loop over a literal, or over what a function of this file returns,
        every `return` such a literal: `for make, label in ((_grid, "a"), (_mesh, "b")):` gives `_grid`, `_mesh`.
        None for a name bound otherwise."""
        function = self.parsed.innermost_function(at)
        bindings = self._bindings(function).get(name.id, []) if function is not None else []
        loop = self.parsed.parent_of(bindings[0]) if len(bindings) == 1 else None
        position = None
        if isinstance(loop, ast.Tuple):  # `for getter, setter in ...`: the name's place in the target
            position = next(i for i, element in enumerate(loop.elts) if element is bindings[0])
            loop = self.parsed.parent_of(loop)
        if not isinstance(loop, ast.For) or self.parsed.innermost_function(loop) is not function:
            return None
        found = []
        for item, where in self._items(loop.iter, loop):
            if position is not None:
                if not isinstance(item, ast.Tuple | ast.List) or len(item.elts) <= position:
                    return None
                item = item.elts[position]
            found.append((item, where))
        return found or None

    def _items(self, iterable: ast.expr, at: ast.AST) -> list[tuple[ast.expr, ast.AST]]:
        """The items a loop goes over, each with where it is written, when the code lists them all: a literal, or
        the call of a function of this file whose every `return` is one. Empty otherwise."""
        if isinstance(iterable, ast.Tuple | ast.List):
            if any(isinstance(e, ast.Starred) for e in iterable.elts):
                return []
            return [(element, element) for element in iterable.elts]
        if not isinstance(iterable, ast.Call) or not isinstance(iterable.func, ast.Name):
            return []
        named = self.function_named(iterable.func, at)
        definition = next((n for n in self.parsed.nodes if isinstance(n, _Function) and named
                           and self._qualname(n) == named), None)
        returns = self.parsed.own_returns(definition) if definition is not None else []
        if not returns or any(not isinstance(r.value, ast.Tuple | ast.List) for r in returns):
            return []
        items = [item for r in returns for item in self._items(r.value, r)]  # type: ignore[arg-type]
        return items if all(items) else []

    def _qualname(self, function: _Function) -> str:
        """`function`'s `__qualname__` (`Fit.run.<locals>.residual`)."""
        return self.parsed.function_of(function.body[0]) or function.name

    def _qualified(self, function: _Function) -> str:
        return f"{self.parsed.info.python_module}.{self._qualname(function)}"

    def _enclosing_binding(self, name: str, function: ast.AST) -> ast.expr | None:
        """The value of the one plain binding of `name` in the nearest enclosing function that binds it."""
        outer = self.parsed.innermost_function(function)
        while outer is not None:
            bindings = self._bindings(outer).get(name, [])
            if bindings:
                value = bindings[0] if len(bindings) == 1 else None
                own = isinstance(value, ast.expr) and self.parsed.innermost_function(value) is outer
                return value if own else None  # type: ignore[return-value]
            outer = self.parsed.innermost_function(outer)
        return None

    def returned(self, function: ast.AST | None) -> tuple[list[str], bool] | None:
        """The classes a function's result is an instance of, and whether exactly: its return annotation's (or a
        subclass), else what every one of its `return`s gives (a constructor call, a local bound once to one, an
        annotated parameter). None when a return gives anything else, or it has none."""
        if not isinstance(function, _Function):
            return None
        declared = self.annotated(function.returns, function) if function.returns is not None else None
        if declared is not None:
            return [declared], False
        returns = self.parsed.own_returns(function)
        if not returns or any(r.value is None for r in returns):
            return None
        cls = self.class_of_method(function)
        roots = [self._receiver(r.value, r, function, cls, depth=4) for r in returns]  # type: ignore[arg-type]
        if any(root is None or root[0] not in ("instance", "declared") or root[2] for root in roots):
            return None
        return list(dict.fromkeys(root[1] for root in roots if root)), all(root[0] == "instance" for root in roots
                                                                             if root)

    def value_class(self, value: ast.expr | None, at: ast.AST) -> str | None:
        """The class a value is an instance of: a literal's, a constructor call's (exactly: `made_here`), or a
        parameter's the function never rebinds, by its annotation (or of a subclass)."""
        if isinstance(value, ast.Constant):
            return f"builtins.{type(value.value).__name__}"
        if isinstance(value, ast.Dict | ast.DictComp | ast.List | ast.ListComp | ast.Set | ast.SetComp | ast.Tuple):
            return f"builtins.{_LITERALS[type(value)]}"
        if isinstance(value, ast.Call):
            return self.constructed(value)
        function = self.parsed.innermost_function(at)
        if isinstance(value, ast.Name) and function is not None:
            bindings = self._bindings(function).get(value.id, [])
            if len(bindings) == 1 and isinstance(bindings[0], ast.arg):
                return self.declared(bindings[0], function)
        return None

    def declared(self, parameter: ast.arg, function: ast.AST) -> str | None:
        """The class a parameter's annotation names: what the code says it holds."""
        return self.annotated(parameter.annotation, function)

    def annotated(self, annotation: ast.expr | None, at: ast.AST) -> str | None:
        """The class an annotation names (`Model`, `Model | None`, `Optional[Model]`, `"Model"`, `dict[str, X]`:
        `dict`): an instance of it or of a subclass."""
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [s for s in (annotation.left, annotation.right)
                     if not (isinstance(s, ast.Constant) and s.value is None)]
            annotation = sides[0] if len(sides) == 1 else None
        if isinstance(annotation, ast.Subscript):
            optional = dotted_name(annotation.value) in ("Optional", "typing.Optional")
            annotation = annotation.slice if optional else annotation.value
        if not isinstance(annotation, ast.Name | ast.Attribute):
            return None
        return self.qualify(annotation, at)

    def constructed(self, call: ast.Call) -> str | None:
        """The qualified name called (`pkg.solver.Solver` for `Solver(model)`): the walk knows whether it is a
        class."""
        return self.qualify(call.func, call)

    def qualify(self, node: ast.AST, at: ast.AST) -> str | None:
        """The qualified name a dotted name stands for at `at`: through the module's one top-level binding of its
        first part (an import, a class of this file), a builtin type, or None (bound in a function, bound twice or
        otherwise, not a dotted name)."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        first, _, rest = dotted.partition(".")
        function = self.parsed.innermost_function(at)
        while function is not None:
            if first in self._bindings(function):
                return None
            function = self.parsed.innermost_function(function)
        targets = set(self._top_level().get(first, ()))  # `import pkg` and `import pkg.sub` both bind `pkg`
        if not targets:
            return f"builtins.{first}" if first in _BUILTINS and not rest else None
        if len(targets) != 1 or "" in targets:
            return None
        target = targets.pop()
        return f"{target}.{rest}" if rest else target

    def class_of_method(self, function: ast.AST | None) -> str | None:
        """The qualified class whose body defines `function` (or binds it, `ParsedFile.bound_method`), when the
        class sits at module scope or in such a class (a class made inside a function is a new class at each
        call). Found once per function."""
        if function is None:
            return None
        key = id(function)
        if key not in self._classes:
            self._classes[key] = self._class_of_method(function)
        return self._classes[key]

    def _class_of_method(self, function: ast.AST) -> str | None:
        owner = self.parsed.parent_of(function)
        bound = self.parsed.bound_method(function)
        if bound is not None:  # `step = _Tank_step` in the class body: its method
            owner = bound.cls
        if not isinstance(owner, ast.ClassDef):
            return None
        around = self.parsed.enclosing_definitions(owner)
        if not all(isinstance(d, ast.ClassDef) for d in around):
            return None
        return ".".join([self.parsed.info.python_module, *(d.name for d in around), owner.name])

    def self_name(self, function: _Function) -> str | None:
        """The name of a method's instance parameter (`self`), unless it is a static or class method."""
        decorators = {dotted_name(d) for d in function.decorator_list}
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional or decorators & {"staticmethod", "classmethod"}:
            return None
        return positional[0].arg

    def _is_self(self, name: str, function: ast.AST | None) -> bool:
        """`name` is the method's instance parameter and the method never binds it again."""
        if not isinstance(function, _Function) or self.self_name(function) != name:
            return False
        return len(self._bindings(function).get(name, [])) == 1

    def names_bound(self, function: ast.AST) -> dict[str, list[ast.AST]]:
        """Per name `function` (or a function nested in it) binds, what binds it: see `_bindings`."""
        return self._bindings(function)

    def module_bindings(self) -> dict[str, list[ast.AST]]:
        """`names_bound` of the module's own scope (not its functions', lambdas' or class bodies')."""
        self._bindings(self.parsed.tree)
        return self._all.get(id(self.parsed.tree), {})  # type: ignore[union-attr]

    def _bindings(self, function: ast.AST) -> dict[str, list[ast.AST]]:
        """Per name the function binds (its parameters, assignments, loop and `with` targets, imports, nested
        definitions, `global`/`nonlocal`): the value of a plain `name = value`, else the binding node. Names bound
        in functions nested in it count too (a `nonlocal` there rebinds them). One pass over the file finds every
        function's, and the module scope's (keyed by the tree)."""
        if self._all is None:
            self._all = {}
            for node in self.parsed.nodes:
                found = _binds(node, self.parsed)
                if not found:
                    continue
                owners = self._owners(node)
                if not owners and not any(isinstance(a, ast.ClassDef) for a in self.parsed.iter_ancestors(node)):
                    owners = [self.parsed.tree]  # the module's own names
                if isinstance(node, _Function | ast.Lambda):  # its parameters are its own; its name, its owner's
                    named = 1 if isinstance(node, _Function) else 0
                    for name, binding in found[named:]:
                        self._all.setdefault(id(node), {}).setdefault(name, []).append(binding)
                    found = found[:named]
                for owner in owners:
                    for name, binding in found:
                        self._all.setdefault(id(owner), {}).setdefault(name, []).append(binding)
        return self._all.get(id(function), {})

    def _owners(self, node: ast.AST) -> list[ast.AST]:
        """The functions (and lambdas) around `node`, innermost first; each function's own chain found once."""
        inner = next((a for a in self.parsed.iter_ancestors(node) if isinstance(a, _Function | ast.Lambda)), None)
        if inner is None:
            return []
        chain = self._chains.get(id(inner))
        if chain is None:
            chain = self._chains[id(inner)] = [inner, *self._owners(inner)]
        return chain

    def _top_level(self) -> dict[str, list[str]]:
        if self._top is None:
            self._top = {}
            for name in self.parsed.top_level_names():
                self._top.setdefault(name.name, []).append(name.target)
        return self._top


_BINDING = frozenset({ast.Name, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Import,
                      ast.ImportFrom, ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar,
                      ast.MatchMapping})


def _binds(node: ast.AST, parsed: ParsedFile) -> list[tuple[str, ast.AST]]:
    """What one node binds: a plain assignment's name binds its value; anything else binds the node."""
    kind = type(node)
    if kind not in _BINDING or (kind is ast.Name and type(node.ctx) is ast.Load):  # type: ignore[attr-defined]
        return []  # most nodes: asked of every node of the file
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        parent = parsed.parent_of(node)
        plain = isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is node
        if not plain and isinstance(parent, ast.Tuple | ast.List):  # `grid, view = Grid(5), FieldView([1])`
            element = _unpacked(parent, parsed)
            if element is not None:
                return [(node.id, element[parent.elts.index(node)])]
        return [(node.id, parent.value if plain else node)]  # type: ignore[union-attr]
    if isinstance(node, _Function):
        return [(node.name, node), *((a.arg, a) for a in _parameters(node))]
    if isinstance(node, ast.ClassDef):
        return [(node.name, node)]
    if isinstance(node, ast.Lambda):
        return [(a.arg, a) for a in _parameters(node)]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [((a.asname or a.name).split(".")[0], node) for a in node.names]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return [(name, node) for name in node.names]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [(node.name, node)]
    if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        return [(node.name, node)]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [(node.rest, node)]
    return []


def _unpacked(target: ast.Tuple | ast.List, parsed: ParsedFile) -> list[ast.expr] | None:
    """The values a plain assignment unpacks into `target`'s names one by one: a literal of as many items, none
    starred, on either side."""
    assignment = parsed.parent_of(target)
    if not (isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 and assignment.targets[0] is target):
        return None
    value = assignment.value
    if not isinstance(value, ast.Tuple | ast.List) or len(value.elts) != len(target.elts):
        return None
    if any(isinstance(e, ast.Starred) for e in (*value.elts, *target.elts)):
        return None
    return value.elts


def _parameters(function: _Function | ast.Lambda) -> list[ast.arg]:
    args = function.args
    names = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return names + [a for a in (args.vararg, args.kwarg) if a is not None]


def _is_super(node: ast.AST) -> bool:
    """`super()`: the method after the enclosing class's (`super(Other, obj)` names another place: not typed)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def made_here(value: ast.expr | None) -> bool:
    """The value is made where it is written (a literal, a constructor call): an instance of exactly its class."""
    return isinstance(value, (ast.Call, ast.Constant, *_LITERALS))
