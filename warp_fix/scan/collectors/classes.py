"""Classes and attribute stores: what the tape walk needs to follow a method call through the class hierarchy.

`solver.step(...)` after `solver = SolverXPBD(model)` runs the `step` that SolverXPBD's hierarchy defines, not every
function of the repository named `step`; `self.solver.step(...)` does too when every store to `.solver` that can
reach the instance stores a SolverXPBD. The collectors record the facts; `warp_fix.scan.hierarchy` decides.
"""

from __future__ import annotations

import ast

from ..index import AttributeStore, ClassInfo, ClassMember
from ..names import dotted_name
from ..receivers import Receivers, made_here
from .base import Collector

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_PROPERTIES = frozenset({"property", "cached_property", "functools.cached_property"})
# the called name's last part -> the call as written that stores an attribute by a name given as a string
_SETS_ATTRIBUTE = {"setattr": "setattr", "delattr": "delattr", "__setattr__": "object.__setattr__",
                   "__delattr__": "object.__delattr__"}


class ClassCollector(Collector):
    """Every class, with its bases qualified and what its body binds. A class made inside a function is recorded
    too (a subclass the hierarchy must know of), its bases qualified only through module-level names.

    >>> # class Solver(SolverBase):          bases ["pkg.base.SolverBase"]
    >>> #     step = _Solver_step           members step -> _Solver_step
    >>> #     def reset(self): ...          reset -> Solver.reset
    >>> #     @property
    >>> #     def state(self): ...          state -> None (a call of it runs what the property returns)
    """

    NODE_TYPES = (ast.ClassDef,)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.receivers = Receivers.of(self.parsed)

    def visit(self, node: ast.AST) -> None:
        assert isinstance(node, ast.ClassDef)
        if not self.parsed.info.in_repo:
            return
        bases = [self._base(base) for base in node.bases]
        bound = {binding.name: binding.function for binding in self.parsed.class_bindings() if binding.cls is node}
        around = self.parsed.enclosing_definitions(node)
        prefix = ".".join([*(d.name if isinstance(d, ast.ClassDef) else f"{d.name}.<locals>" for d in around),
                           node.name])
        members = []
        for statement in node.body:
            if isinstance(statement, _Function):
                decorators = {dotted_name(d.func if isinstance(d, ast.Call) else d) for d in statement.decorator_list}
                runs = not decorators & _PROPERTIES and not any(
                    d and d.endswith((".setter", ".getter", ".deleter")) for d in decorators)
                members.append(ClassMember(statement.name, f"{prefix}.{statement.name}" if runs else None))
            elif isinstance(statement, ast.ClassDef):
                members.append(ClassMember(statement.name))
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                declared = self.receivers.annotated(statement.annotation, node)
                members.append(ClassMember(statement.target.id, None, declared))
            else:
                for name in _bound_in_body(statement):
                    function = bound.get(name)
                    members.append(ClassMember(name, function.name if function is not None else None))
        self.found.classes.append(ClassInfo(**self.parsed.located(node), name=prefix,
                                            python_module=self.parsed.info.python_module, bases=bases,
                                            members=members))

    def _base(self, base: ast.expr) -> str:
        """A base's qualified name; "" when it is not a name the module's top level or the builtins give."""
        if isinstance(base, ast.Subscript):  # Generic[T], Base[float]
            base = base.value
        return self.receivers.qualify(base, base) or ""


class AttributeStoreCollector(Collector):
    """Every store to an attribute (`x.a = ...`, `del x.a`, `x.a += ...`, `setattr(x, "a", ...)`), with the class
    whose method stores it on `self` and the class a plain `self.a = Class(...)` stores. A `setattr` whose name is
    computed is not recorded: as for calls by name, the walk does not follow names made at run time."""

    NODE_TYPES = (ast.Attribute, ast.Call)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.receivers = Receivers.of(self.parsed)

    def visit(self, node: ast.AST) -> None:
        if not self.parsed.info.in_repo:
            return
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            parent = self.parsed.parent_of(node)
            value, exact, names = None, False, []
            if isinstance(parent, ast.Assign | ast.AnnAssign) and (
                    parent.targets == [node] if isinstance(parent, ast.Assign) else parent.target is node):
                value, exact = self.receivers.value_class(parent.value, node), made_here(parent.value)
                names = self._names_read(parent.value, node)
            self._store(node, node.value, node.attr, value, exact, names)
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and self._sets_attribute(node.func):
            attribute = node.args[1]
            if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
                self._store(node, node.args[0], attribute.value, None)

    @staticmethod
    def _sets_attribute(func: ast.expr) -> bool:
        """`setattr`, `delattr`, `object.__setattr__`, `object.__delattr__` (the last part first: most calls are
        none of them)."""
        last = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        return last in _SETS_ATTRIBUTE and dotted_name(func) == _SETS_ATTRIBUTE[last]

    def _names_read(self, value: ast.expr | None, at: ast.AST) -> list[str]:
        """The project names a stored value is, when each of its alternatives (`a if c else b`) is a name the module
        binds (`kernels.diffuse`, `integrate`); empty otherwise."""
        alternatives = [value]
        while any(isinstance(a, ast.IfExp) for a in alternatives):
            alternatives = [b for a in alternatives for b in ((a.body, a.orelse) if isinstance(a, ast.IfExp) else (a,))]
        names = [self.receivers.qualify(a, at) if isinstance(a, ast.Name | ast.Attribute) else None
                 for a in alternatives]
        project = self.parsed.info.project_names
        if any(name is None or name.split(".", 1)[0] not in project for name in names):
            return []
        return list(dict.fromkeys(names))  # type: ignore[arg-type]

    def _store(self, node: ast.AST, target: ast.expr, attribute: str, value: str | None, exact: bool = False,
               names: list[str] | None = None) -> None:
        function = self.parsed.innermost_function(node)
        owner = self.receivers.class_of_method(function)
        on_self = (isinstance(target, ast.Name) and isinstance(function, _Function)
                   and self.receivers.self_name(function) == target.id)
        on = None if on_self else self.receivers.object_class(target, node)
        self.found.attribute_stores.append(AttributeStore(**self.parsed.located(node), attribute=attribute,
                                                          owner=owner if on_self else None, value=value,
                                                          exact=exact and value is not None,
                                                          on=on[0] if on else None, on_exact=bool(on and on[1]),
                                                          names=names or []))


def _bound_in_body(statement: ast.stmt) -> list[str]:
    """The names a class-body statement (other than a def, a class or an annotated name) binds: assignment
    targets, imports, loop targets."""
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in statement.names]
    return [n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)]
