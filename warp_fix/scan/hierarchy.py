"""Which function a typed method call runs, read from the repository's classes (`ClassInfo`), the names its modules
bind (`ModuleName`, re-exports followed) and its attribute stores (`AttributeStore`).

A call is answered only where the answer holds for every instance the receiver can be: `self.step()` in a class
runs the `step` of the instance's class, which may be any subclass, so every subclass is asked; a subclass whose
bases the scan cannot name may be anything, so a method one of those defines is not answered. Where it cannot
answer (a class it cannot find, a library class that may define the method, an attribute stored from a value it
cannot type, `__getattribute__`), `runs` says None and the walk follows the call by name, as it did before.

Library classes are opaque, except the builtins' and Warp's (`object.__init__`, `dict.update`, `HashGrid.build` run
no project code) and the typing helpers that define no methods (`Generic`, `Protocol`, `ABC`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from .index import Argument, AttributeStore, ClassInfo, LaunchSite, SourceIndex, TypedCall, ValueType
from .parsed import LAUNCH_KINDS

Scope = tuple[str, str | None]
Class = ClassInfo | str  # a repository class, or a library class by its qualified name
Typed = list[tuple[Class, bool]] | None  # classes, each exactly (True) or with its subclasses; None: unknown
T = TypeVar("T")
_OBJECT_METHODS = frozenset(dir(object))
_NO_METHODS = frozenset({"typing.Generic", "typing.Protocol", "typing_extensions.Protocol", "abc.ABC",
                         "builtins.object"})
_INTERCEPTING = ("__getattribute__", "__setattr__")


class ClassHierarchy:
    """Answers `runs(call)` for the walk; everything is computed once, on first use."""

    def __init__(self, index: SourceIndex) -> None:
        self.classes = {c.qualified: c for c in index.classes if c.in_repo}
        self.names: dict[str, dict[str, list[str]]] = {}
        for source in index.files:
            if source.in_repo:
                bound = self.names.setdefault(source.python_module, {})
                for name in source.names:
                    bound.setdefault(name.name, []).append(name.target)
        self.packages = {module.split(".")[0] for module in self.names}
        self.modules = {source.file: source.python_module for source in index.files if source.in_repo}
        self.index = index
        self.returns = {f"{self.modules[c.file]}.{c.function}": (c.returns, c.returns_exact)
                        for c in index.calls if c.returns and c.function and c.file in self.modules}
        self._calls: _Calls | None = None  # who calls what with which arguments: only argument flow asks
        self.stores: dict[str, list[AttributeStore]] = {}
        for store in index.attribute_stores:
            if store.in_repo:
                self.stores.setdefault(store.attribute, []).append(store)
        self._resolved: dict[str, list[Class] | None] = {}
        self._mro: dict[str, list[Class] | None] = {}
        self._children: dict[str, list[ClassInfo]] | None = None
        self._unknown_bases: list[ClassInfo] = []
        self._kernels: set[str] | None = None  # qualified names of the repository's module-scope kernels

    # What a call runs ------------------------------------------------------------------------------

    def runs(self, call: TypedCall) -> list[Scope] | None:
        """The functions the call can run (none: only library code); None when that cannot be said."""
        if call.kind == "class":
            return self._on_class(self.resolve(call.of), call.method)
        if call.kind == "super":
            return self._after(call.of, call.method)
        return self._on_instances(self._held(ValueType(call.kind, call.of, call.attribute)), call.method)

    def handed(self, file: str, function: str, parameter: str) -> list[Scope] | None:
        """The functions a call through `parameter` of `function` (a qualname of `file`) can run: what every call
        of `function` passes there, each a function of that file (`self._for_each(_residual)`) or bound methods the
        scan types (`evaluate(view.get_positions)`, `Receivers.methods_named`)."""
        passed = self._arguments(f"{self.modules.get(file, '')}.{function}", parameter)
        if passed is None or any(not (argument.function or argument.methods or argument.warp) for argument in passed):
            return None
        runs: list[Scope] = [(file, argument.function) for argument in passed if argument.function]
        for method in (method for argument in passed for method in argument.methods):
            reached = self.runs(method)
            if reached is None:
                return None
            runs += reached
        return list(dict.fromkeys(runs))

    def hands_launch(self, file: str, function: str, parameter: str) -> bool:
        """Some call of `function` passes Warp's launch as `parameter` (`_replaying(wp.launch, ...)`): a call
        through it launches a kernel."""
        passed = self._arguments(f"{self.modules.get(file, '')}.{function}", parameter) or []
        return any(argument.warp in LAUNCH_KINDS for argument in passed)

    def kernels_held(self, launch: LaunchSite) -> list[str] | None:
        """The kernels (their names) a launch of `self.<attribute>` can run: what every store of the attribute on
        an instance of the method's class or a subclass names (`self.kernel = kernels.diffuse_clamped if clamp
        else kernels.diffuse`), through re-exports. None when that cannot be said: a store of anything else, none
        at all, a class-body binding, a subclass whose bases the scan cannot name defining it, `__setattr__`."""
        cls = self.classes.get(launch.holder) if launch.held_in else None
        family = self._family(cls) if cls is not None else None
        related = self._related(family) if family is not None else None
        attribute = launch.held_in
        if family is None or related is None or self._maybe_in_unknown(attribute) or self._intercepts(family):
            return None
        if any(m.name == attribute for c in related.values() for m in c.members):
            return None
        stores = [s for s in self.stores.get(attribute, []) if self._stores_on(s, family, related)]
        if not stores or any(not s.names for s in stores):
            return None
        if self._kernels is None:
            self._kernels = {f"{k.python_module}.{k.name}" for k in self.index.kernels
                             if k.in_repo and k.at_module_scope}
        kernels = self._kernels
        found: list[str] = []
        for name in dict.fromkeys(n for s in stores for n in s.names):
            resolved = self._follow(name, frozenset(), lambda q: [q] if q in kernels else None)
            if not resolved:
                return None
            found += [str(q).rsplit(".", 1)[-1] for q in resolved]
        return list(dict.fromkeys(found))

    def _held(self, value: ValueType, seen: frozenset[tuple[str, str]] = frozenset()) -> Typed:
        """The classes a typed value is an instance of (exactly, or of any subclass), its attributes read."""
        path = value.attribute.split(".") if value.attribute else []
        classes: list[tuple[Class, bool]] | None = None
        if value.kind == "self":
            cls = self.classes.get(value.of)
            classes = [(cls, False)] if cls is not None else None
        elif value.kind == "argument" and path:
            classes = self._passed(value.of, path.pop(0), seen)
        elif value.kind in ("instance", "declared"):  # exactly the class made, or the annotated one or a subclass
            classes = _exactly(self.resolve(value.of), value.kind == "instance")
            if classes is None and value.kind == "instance":  # `make_solver(model)`: what the function returns
                classes = self._returned(value.of)
        for attribute in path:
            classes = self._attribute_of(classes, attribute)
        return classes

    def _passed(self, function: str, parameter: str, seen: frozenset[tuple[str, str]]) -> Typed:
        """The classes every call of `function` passes as `parameter`."""
        if (function, parameter) in seen:
            return None
        passed = self._arguments(function, parameter)
        if passed is None or any(argument.value is None for argument in passed):
            return None
        return _union(self._held(a.value, seen | {(function, parameter)}) for a in passed if a.value)

    def _arguments(self, function: str, parameter: str) -> list[Argument] | None:
        """What each call of `function` (qualified) passes as `parameter`. Answered only when every call of its
        name is one the scan recorded in its caller's file (`PassedArguments`) and either runs it, passing the
        parameter without `*args`, or runs another function: by a bare name bound to it, or through `self` in a
        class that `function`'s class does not derive from (else an override of it may run). A nested function that
        never leaves the function around it is called only from there."""
        if self._calls is None:
            self._calls = _Calls(self.index, self.modules)
        record = self._calls.functions.get(function)
        if record is None or parameter not in record.signature or record.function is None:
            return None
        index = record.signature.index(parameter)
        names = {record.function.split(".")[-1], *(bound.split(".")[-1] for bound in record.bound_as)}
        found: list[Argument] = []
        callers = {scope for name in names for scope in self._calls.callers.get(name, ())}
        if record.enclosed_in is not None:  # a nested function that never leaves its own: only code there calls it
            inside = record.enclosed_in
            callers = {(file, caller) for file, caller in callers if file == record.file and caller is not None
                       and (caller == inside or caller.startswith(f"{inside}.<locals>."))}
        for scope in callers:
            calls = [p for p in self._calls.passes.get(scope, []) if p.name in names]
            if not calls:
                return None  # a call the scan did not record: its arguments are unknown
            for call in calls:
                runs = (scope[0], call.function)
                if runs != (record.file, record.function):
                    if not call.function or (call.bound and self._may_override(runs, function)):
                        return None
                    continue
                argument = next((a for a in call.arguments
                                 if a.keyword == parameter or a.position == index - int(call.bound)), None)
                if call.opaque or argument is None:
                    return None  # anything, or the parameter's default
                found.append(argument)
        return found or None

    def _may_override(self, method: Scope, function: str) -> bool:
        """`self.<name>()` resolved to `method` may run `function` instead: its class derives from the method's."""
        file, qualname = method
        owner = self.classes.get(f"{self.modules.get(file, '')}.{(qualname or '').rsplit('.', 1)[0]}")
        target = self.classes.get(function.rsplit(".", 1)[0])
        return owner is None or target is None or target in self._family(owner)

    def _returned(self, function: str) -> Typed:
        """What the function named `function` (through re-exports) returns, when the scan could say."""
        found = self._follow(function, frozenset(), lambda name: [name] if name in self.returns else None)
        if not found or len(found) != 1 or not isinstance(found[0], str):
            return None
        classes, exact = self.returns[found[0]]
        typed = [_exactly(self.resolve(cls), exact) for cls in classes]
        return None if any(t is None for t in typed) else [c for t in typed if t for c in t]

    def _after(self, of: str, method: str) -> list[Scope] | None:
        """`super().method()` in a method of `of`: the next definition along each subclass's MRO."""
        cls = self.classes.get(of)
        if cls is None or self._maybe_in_unknown(method):
            return None
        family = self._family(cls)
        found = []
        for member in family:
            order = self.mro(member)
            if order is None:
                return None
            found.append(self._method_of(order[order.index(cls) + 1:], method, family))
        return _union(found)

    def _attribute_of(
        self, classes: list[tuple[Class, bool]] | None, attribute: str
    ) -> list[tuple[Class, bool]] | None:
        """What `attribute` holds on an instance of one of `classes` (exactly, or of a subclass)."""
        if classes is None:
            return None
        found: list[tuple[Class, bool]] = []
        for cls, exact in classes:
            if isinstance(cls, str) or (not exact and self._maybe_in_unknown(attribute)):
                return None
            held = self._attribute_types(attribute, [cls] if exact else self._family(cls))
            if held is None:
                return None
            found += [c for c in held if c not in found]
        return found

    def overrides(self, file: str, method: str) -> list[Scope] | None:
        """For `self.advance()` in a class defining `advance` (`method`, its qualname in `file`): the definitions
        the subclasses put in its place, which run when `self` is one of theirs. None when they cannot be told (a
        subclass whose bases the scan cannot name defines a method of that name)."""
        owner, _, name = method.rpartition(".")
        cls = self.classes.get(f"{self.modules.get(file, '')}.{owner}")
        if cls is None:
            return []
        return self.runs(TypedCall(name, "self", cls.qualified))

    def _on_instances(self, classes: list[tuple[Class, bool]] | None, method: str) -> list[Scope] | None:
        """`method` called on an instance of one of `classes`: of exactly that class (True), or of any subclass."""
        if classes is None:
            return None
        found: list[list[Scope] | None] = []
        for cls, exact in classes:
            if isinstance(cls, str):
                found.append([] if _runs_no_project_code(cls) else None)
                continue
            family = [cls] if exact else self._family(cls)
            if not exact and self._maybe_in_unknown(method):
                return None
            found += [self._method_of(self.mro(member), method, family) for member in family]
        return _union(found)

    def _on_class(self, classes: list[Class] | None, method: str) -> list[Scope] | None:
        """`method` looked up on a class object: along its MRO, no instance attribute in the way."""
        if classes is None or len(classes) != 1:
            return None
        cls = classes[0]
        if isinstance(cls, str):
            return [] if _runs_no_project_code(cls) else None
        return self._method_of(self.mro(cls), method, [])

    def _method_of(self, order: list[Class] | None, method: str, family: list[ClassInfo]) -> list[Scope] | None:
        """The first definition of `method` along `order` (an MRO or its tail), for instances of `family`'s
        classes: unanswered when an instance may hold an attribute of that name or intercepts attribute access."""
        if order is None or (family and (self._stored_on(method, family) or self._intercepts(family))):
            return None
        for cls in order:
            if isinstance(cls, str):
                if cls == "builtins.object" and method in _OBJECT_METHODS:
                    return []  # object.__init__ and the like: no project code
                if cls in _NO_METHODS:
                    continue
                return [] if _runs_no_project_code(cls) else None
            defined = [m for m in cls.members if m.name == method]
            if defined:
                function = defined[-1].function  # the last binding in the body wins
                return [(cls.file, function)] if function is not None else None
        return None

    def _attribute_types(self, attribute: str, family: list[ClassInfo]) -> list[tuple[Class, bool]] | None:
        """The classes `self.<attribute>` can hold: what the hierarchy's own methods store there and the classes
        its class bodies annotate the name with (a dataclass field). Unanswered when they store anything else or
        bind it otherwise in a class body, or when nothing of the hierarchy stores or declares it. Stores by other
        code count where the scan types the object (a builder's `m = Model(); m.grid = ...`); on an object it
        cannot type (`spec.solver = name`, a test's `example.solver = fake`) they are not counted: the walk takes
        a class's own methods and the code that types its instances to decide its attributes (the one assumption
        typing adds; `docs/mechanisms.md`)."""
        related = self._related(family)
        if related is None:
            return None
        declared = [(m.declared, False) for c in related.values() for m in c.members if m.name == attribute]
        own = [(s.value, s.exact) for s in self.stores.get(attribute, []) if self._stores_on(s, family, related)]
        if not (own or declared) or any(value is None for value, _ in [*own, *declared]):
            return None
        found: list[tuple[Class, bool]] = []
        for value, exact in dict.fromkeys([*own, *declared]):
            classes = _exactly(self.resolve(value), exact) if value else None
            if classes is None:
                return None
            found += [c for c in classes if c not in found]
        return found

    def _stored_on(self, name: str, family: list[ClassInfo]) -> bool:
        """An instance of `family` may hold an attribute `name` of its own, which a call of `name` would run: the
        hierarchy's methods store it (other code's stores are not counted, as in `_attribute_types`)."""
        related = self._related(family)
        return related is None or any(self._stores_on(s, family, related) for s in self.stores.get(name, []))

    def _stores_on(self, store: AttributeStore, family: list[ClassInfo], related: dict[str, ClassInfo]) -> bool:
        """The store can reach an instance of `family`: a method of theirs (`related`: their MROs) stores it on
        `self`, or other code stores it on an object the scan types as one of them (a builder's `m = Model();
        m.solver = ...`; a parameter `model: Base` may be one when `Base` is in their MROs)."""
        if store.owner is not None:
            return store.owner in related
        on = self.resolve(store.on) if store.on else None
        reach = {c.qualified for c in family} if store.on_exact else related
        return bool(on) and any(isinstance(c, ClassInfo) and c.qualified in reach for c in on or [])

    def _intercepts(self, family: list[ClassInfo]) -> bool:
        related = self._related(family)
        return related is None or any(m.name in _INTERCEPTING for c in related.values() for m in c.members)

    def _related(self, family: list[ClassInfo]) -> dict[str, ClassInfo] | None:
        """Every repository class whose methods run on an instance of one of `family`: their MROs."""
        related: dict[str, ClassInfo] = {}
        for member in family:
            order = self.mro(member)
            if order is None:
                return None
            related.update((c.qualified, c) for c in order if isinstance(c, ClassInfo))
        return related

    # Classes --------------------------------------------------------------------------------------

    def resolve(self, qualified: str) -> list[Class] | None:
        """The classes a qualified name can stand for, through the modules' re-exports (each import that binds
        the name, star imports included): a library name is itself; None for a repository name that is not a
        class the scan found."""
        if qualified not in self._resolved:
            self._resolved[qualified] = self._follow(qualified, frozenset(), self._class_named, library=True)
        return self._resolved[qualified]

    def _class_named(self, qualified: str) -> list[Class] | None:
        return [self.classes[qualified]] if qualified in self.classes else None

    def _follow(
        self, qualified: str, seen: frozenset[str], found: Callable[[str], list[Class] | None], library: bool = False
    ) -> list[Class] | None:
        """What `found` says of the name, or of what the module binding its last part binds it to (each binding;
        a star import's module if none). A name outside the repository is itself where `library`."""
        direct = found(qualified)
        if direct is not None:
            return direct
        if qualified in seen or len(seen) > 32:
            return None
        seen = seen | {qualified}
        parts = qualified.split(".")
        for end in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:end])
            if module not in self.names:
                continue
            bound, first, rest = self.names[module], parts[end], parts[end + 1 :]
            targets = bound.get(first)
            if targets is None:  # maybe from a star import
                stars = [self._follow(".".join([star, first, *rest]), seen, found, library)
                         for star in bound.get("*", [])]
                return [c for classes in stars if classes for c in classes] or None
            if "" in targets:
                return None
            return _union(self._follow(".".join([target, *rest]), seen, found, library) for target in targets)
        return [qualified] if library and parts[0] not in self.packages else None

    def mro(self, cls: ClassInfo) -> list[Class] | None:
        """Python's method resolution order (C3) over the repository's classes; a library base closes its branch.
        None when a base cannot be resolved to one class."""
        if cls.qualified in self._mro:
            return self._mro[cls.qualified]
        self._mro[cls.qualified] = None  # a cycle of bases resolves to None
        orders: list[list[Class]] = []
        for base in cls.bases or ["builtins.object"]:
            resolved = self.resolve(base) if base else None
            if resolved is None or len(resolved) != 1:
                return None
            only = resolved[0]
            order = [only] if isinstance(only, str) else self.mro(only)
            if order is None:
                return None
            orders.append(order)
        merged = _c3([*orders, [b for order in orders for b in order[:1]]])
        result = [cls, *merged] if merged is not None else None
        self._mro[cls.qualified] = result
        return result

    def _family(self, cls: ClassInfo) -> list[ClassInfo] | None:
        """`cls` and every repository class that derives from it: what `self` in its methods can be."""
        if self._children is None:
            self._children = {}
            for child in self.classes.values():
                for base in child.bases:
                    resolved = self.resolve(base) if base else None
                    if resolved is None:
                        self._unknown_bases.append(child)
                        continue
                    for parent in resolved:
                        if isinstance(parent, ClassInfo):
                            self._children.setdefault(parent.qualified, []).append(child)
            self._unknown_bases = list({c.qualified: c for c in self._unknown_bases}.values())
        family, pending = {cls.qualified: cls}, [cls]
        while pending:
            for child in self._children.get(pending.pop().qualified, []):
                if child.qualified not in family:
                    family[child.qualified] = child
                    pending.append(child)
        return list(family.values())

    def _maybe_in_unknown(self, name: str) -> bool:
        """A class whose bases the scan cannot name may derive from any class and define `name`."""
        return any(m.name == name for c in self._unknown_bases for m in c.members)


class _Calls:
    """Each function's record by qualified name, the scopes calling each name, and what each scope's calls of its
    own file's functions pass."""

    def __init__(self, index: SourceIndex, modules: dict[str, str]) -> None:
        self.functions = {f"{modules[c.file]}.{c.function}": c for c in index.calls if c.function and c.file in modules}
        self.passes = {(c.file, c.function): c.passes for c in index.calls if c.passes}
        self.callers: dict[str, set[Scope]] = {}
        for c in index.calls:
            names = [*c.callees, *(m.split(".")[-1] for m in c.methods), *(t.method for t in c.typed),
                     *(p.name for p in c.passes)]
            for name in names:
                self.callers.setdefault(name, set()).add((c.file, c.function))


def _c3(sequences: list[list[Class]]) -> list[Class] | None:
    """The C3 merge of linearizations; None where Python would refuse the class."""
    def key(cls: Class) -> str:
        return cls if isinstance(cls, str) else cls.qualified

    pending = [list(s) for s in sequences if s]
    merged: list[Class] = []
    while pending:
        for sequence in pending:
            head = sequence[0]
            if not any(key(head) in {key(c) for c in other[1:]} for other in pending):
                break
        else:
            return None
        merged.append(head)
        pending = [[c for c in s if key(c) != key(head)] for s in pending]
        pending = [s for s in pending if s]
    return merged


def _union(found: Iterable[list[T] | None]) -> list[T] | None:
    """Every part's items once, in order; None when any part is unknown."""
    items: list[T] = []
    for part in found:
        if part is None:
            return None
        items += [item for item in part if item not in items]
    return items


def _exactly(classes: list[Class] | None, exact: bool) -> list[tuple[Class, bool]] | None:
    return None if classes is None else [(cls, exact) for cls in classes]


def _runs_no_project_code(library_class: str) -> bool:
    """A builtin's or Warp's class: its methods run no project code (as a call of Warp's API does not)."""
    return library_class.startswith(("builtins.", "warp."))
