"""Kernels, Warp functions, `@wp.overload` definitions and the factory functions that create kernels."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from ..captures import FactoryScopes
from ..index import (
    FactoryFunction,
    FuncDef,
    KernelDef,
    KernelSelector,
    OptionParameter,
    OverloadCall,
    Parameter,
    SourceIndex,
)
from ..parsed import argument, function_parameters, parameter_default, qualname, string_literal
from .base import Collector

FUNC_DECORATORS = frozenset({"func", "func_native", "func_grad", "func_replay"})
GENERIC_WARP_TYPES = frozenset({"Any", "Float", "Int", "Scalar", "types.Any"})
GENERIC_TYPING_NAMES = frozenset({"typing.Any", "typing_extensions.Any"})

_Function = ast.FunctionDef | ast.AsyncFunctionDef


class KernelCollector(Collector):
    """Finds `@wp.kernel` / `@wp.func*` / `@wp.overload` defs, and registers their factories.

    A kernel is also a def passed to a `wp.kernel(fn, ...)` call, or one decorated with a project's own `kernel`
    decorator (a wrapper of `wp.kernel` that adds defaults); the tracer's code-object sites confirm them.
    """

    NODE_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Call)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._factories: dict[int, FactoryFunction] = {}
        self._scopes: dict[int, FactoryScopes | None] = {}

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self._visit_call(node)
            return
        assert isinstance(node, _Function)
        for decorator in node.decorator_list:
            symbol = self._decorator_symbol(decorator)
            if symbol == "kernel":
                self._record_kernel(node, decorator)
            elif symbol is None and self._project_kernel_decorator(decorator):
                self._record_kernel(node, decorator, made_by="project-decorator")
            elif symbol in FUNC_DECORATORS:
                self._record_func(node, decorator, symbol)
            elif symbol == "overload":
                self.found.overloads.append(
                    OverloadCall(**self.parsed.located(node), kernel=node.name, types=None, form="decorator")
                )

    def finish(self) -> None:
        """Kernels of factories listed in a module-scope registry (`SHADERS = {"toon": make_toon}`), and
        module-scope kernels listed in one (`FILTERS = {"soften": soften}`), are made or launched only for the entry
        a run looks up, and a project can add its own entries: optional plugin code, like a branch on a parameter.

        A function returning module-scope kernels from a fixed `if`/`elif` (or `match`) on a configuration value
        is a `KernelSelector`: they are a closed set of alternatives, all defined at import, one picked per run
        (`picked_by`, set by `link_selectors` once every file is scanned)."""
        registries: dict[str, str] = {}
        for statement in self.parsed.tree.body:
            if isinstance(statement, ast.Assign | ast.AnnAssign) and isinstance(statement.value, ast.Dict):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                name = next((t.id for t in targets if isinstance(t, ast.Name)), None)
                for value in statement.value.values:
                    if name and isinstance(value, ast.Name):
                        registries.setdefault(value.id, f"{name}[...]")
        for entry, selector in self._factory_selectors().items():
            registries.setdefault(entry, f"{selector}(...)")
        for entry, lookup in self._own_name_lookups().items():
            registries.setdefault(entry, lookup)
        for kernel in self.found.kernels:
            owner = kernel.enclosing_functions[0] if kernel.enclosing_functions else kernel.name
            # a plugin class listed by name (`TRANSFORMS = {"blur": Blur}`) owns the kernels its methods make
            owner_class = (kernel.function or "").split(".")[0]
            registry = registries.get(owner) or (registries.get(owner_class) if kernel.enclosing_functions else None)
            if registry and registry not in kernel.chosen_by:
                kernel.chosen_by.append(registry)
        self._mark_alternatives()

    def _factory_selectors(self) -> dict[str, str]:
        """Factory -> the module-scope function that returns it by name from an `if`/`match` on its parameter
        (`if key == "fade": return make_fade`): the registry of factories written as a function, so the kernels
        those factories make are, as a dict registry's, made only for the entry a run looks up. Only factories
        and classes of this file count (a function returning kernels defined at import picks one of a closed set:
        a `KernelSelector`)."""
        kernels = {k.name for k in self.found.kernels if k.at_module_scope}
        makers = {
            node.name for node in self.parsed.tree.body
            if isinstance(node, _Function | ast.ClassDef) and node.name not in kernels
        }  # fmt: skip
        entries: dict[str, str] = {}
        for function in self.parsed.tree.body:
            if not isinstance(function, _Function):
                continue
            returns = self.parsed.own_returns(function)
            names = [r.value.id if isinstance(r.value, ast.Name) else None for r in returns]
            if len(set(names)) < 2 or not set(names) <= makers:
                continue
            if all(self._chosen_by(r) for r in returns[:-1]):  # the last may be the fall-through default
                entries.update({name: function.name for name in names if name})
        return entries

    def _own_name_lookups(self) -> dict[str, str]:
        """Module-scope function or class -> the lookup that picks it from the file's own names by a name made at
        run time (`getattr(sys.modules[__name__], f"make_{key}")`, `globals()[f"make_{key}"]`): the registry of
        every name of the file that fits the pattern, written without a dict, so its entries are, as a dict
        registry's, made only for the name a run looks up."""
        makers = [n.name for n in self.parsed.tree.body if isinstance(n, _Function | ast.ClassDef)]
        entries: dict[str, str] = {}
        for node in self.parsed.nodes:
            found = _own_name_lookup(node) if isinstance(node, ast.Call | ast.Subscript) else None
            if found is None:
                continue
            label, (prefix, suffix) = found
            fits = [n for n in makers if len(n) > len(prefix + suffix) and n.startswith(prefix) and n.endswith(suffix)]
            for name in fits:
                entries.setdefault(name, label)
        return entries

    def _mark_alternatives(self) -> None:
        """A `KernelSelector` for each module-scope function, or method of a module-scope class, whose every
        `return` gives a kernel by name (one of this file's module-scope kernels, or a name imported from another
        module: `from .edges import clamp`, `edges.clamp`), at least one of them inside an `if`/`elif` (or `case`)
        whose test compares names, attributes and constants (`kind == "clamp"`, `self.kind == "clamp"` where the
        object was given its kind), two names or more in all. A lookup in a dict (a registry), a kernel made inside
        the function or any other return value is not a closed set. A method's selector is named by its qualified
        name (`EdgeKernel.run`). The scan links the names to kernels (`link_selectors`)."""
        local = {k.name for k in self.found.kernels if k.at_module_scope}
        imported = self._imported_bindings()
        module = self.parsed.info.python_module
        for function, name in _functions_and_methods(self.parsed.tree):
            returns = self.parsed.own_returns(function)
            names = [_returned_name(r.value, local, imported, module) for r in returns]
            if not returns or None in names or len(set(names)) < 2:
                continue
            if not any(self._under_fixed_branch(r, function) for r in returns):
                continue
            self.found.selectors.append(
                KernelSelector(**self.parsed.located(function), name=name,
                               kernels=list(dict.fromkeys(n for n in names if n)))
            )

    def _imported_bindings(self) -> dict[str, str]:
        """Local name -> qualified name, for this file's module-scope `import` / `from ... import` statements
        (relative ones resolved against the file's package)."""
        bindings: dict[str, str] = {}
        info = self.parsed.info
        package = info.python_module.split(".")
        if not info.file.endswith("__init__.py"):
            package = package[:-1]
        for statement in self.parsed.tree.body:
            if isinstance(statement, ast.ImportFrom):
                base = package[: len(package) - (statement.level - 1)] if statement.level else []
                source = ".".join([*base, *([statement.module] if statement.module else [])])
                for alias in statement.names:
                    bindings[alias.asname or alias.name] = f"{source}.{alias.name}" if source else alias.name
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.asname:
                        bindings[alias.asname] = alias.name
                    else:
                        bindings[alias.name.split(".")[0]] = alias.name.split(".")[0]
        return bindings

    def _under_fixed_branch(self, node: ast.AST, function: _Function) -> bool:
        """`node` is in a branch of an `if` or `match` of `function` whose test only compares names, attributes
        and constants (`kind == "clamp"`, `config.EDGE in ("wrap", "tile")`), and every enclosing test is so."""
        branched = False
        child = node
        for parent in self.parsed.ancestors(node):
            if parent is function:
                break
            if isinstance(parent, ast.If) and child is not parent.test:
                if not _fixed_test(parent.test):
                    return False
                branched = True
            elif isinstance(parent, ast.match_case):
                if not isinstance(parent.pattern, ast.MatchValue | ast.MatchOr | ast.MatchAs) or parent.guard:
                    return False
                branched = True
            elif isinstance(parent, ast.For | ast.While | ast.With | ast.Try | ast.Lambda):
                return False
            child = parent
        return branched

    def _decorator_symbol(self, decorator: ast.expr) -> str | None:
        return self.parsed.warp_symbol(decorator.func if isinstance(decorator, ast.Call) else decorator)

    # Kernels -------------------------------------------------------------------------------------

    def _project_kernel_decorator(self, decorator: ast.expr) -> bool:
        """`@kernel` / `@kernel(...)` / `@tools.kernel(...)` imported from the project itself (a wrapper of
        `wp.kernel` adding defaults); one imported from another library is not assumed to be Warp's."""
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        named = (isinstance(target, ast.Name) and target.id == "kernel") or (
            isinstance(target, ast.Attribute) and target.attr == "kernel"
        )
        project = self.parsed.info.project_names
        return named and any(name.split(".")[0] in project for name in self.parsed.qualified_names(target))

    def _visit_call(self, call: ast.Call) -> None:
        """`wp.kernel(fn, ...)` called as a function on a def of the same scope."""
        if self.parsed.warp_symbol(call.func) != "kernel" or not call.args or not isinstance(call.args[0], ast.Name):
            return
        scope = self.parsed.innermost_function(call) or self.parsed.tree
        name = call.args[0].id
        for node in ast.walk(scope):
            if isinstance(node, _Function) and node.name == name and self.parsed.innermost_function(node) is (
                scope if scope is not self.parsed.tree else None
            ):
                self._record_kernel(node, call, made_by="call")
                return

    def _record_kernel(self, node: _Function, decorator: ast.expr, made_by: str = "decorator") -> None:
        parsed = self.parsed
        call = decorator if isinstance(decorator, ast.Call) else None
        module_argument = argument(call, "module")
        module_kind, module_value, parameter_default_value = self._module_argument(node, module_argument)
        enclosing = [d.name for d in parsed.enclosing_definitions(node) if isinstance(d, _Function)]
        generic_parameters = self._generic_parameters(node)
        kernel = KernelDef(
            **parsed.located(node),
            name=node.name,
            python_module=parsed.info.python_module,
            decorator_line=decorator.lineno,
            decorator=parsed.source(decorator),
            module_kind=module_kind,
            module_value=module_value,
            module_parameter_default=parameter_default_value,
            module_options=parsed.value(argument(call, "module_options")),
            enable_backward=parsed.value(argument(call, "enable_backward")),
            at_module_scope=not enclosing,
            enclosing_functions=enclosing,
            captures=self._captures(node) if enclosing else [],
            is_generic=bool(generic_parameters),
            generic_parameters=generic_parameters,
            made_by=made_by,
            chosen_by=self._chosen_by(decorator if made_by == "call" else node),
            option_parameters=self._option_parameters(node, call) if enclosing else [],
        )
        self.found.kernels.append(kernel)
        if enclosing:
            self._factory_for(node).kernels.append(kernel.name)

    def _option_parameters(self, kernel: _Function, call: ast.Call | None) -> list[OptionParameter]:
        """Options the kernel takes from a parameter of its factory: `enable_backward=grad` and the literal keys
        of `module_options={"enable_backward": grad}`."""
        passed: list[tuple[str, ast.expr]] = []
        backward = argument(call, "enable_backward")
        if backward is not None:
            passed.append(("enable_backward", backward))
        options = argument(call, "module_options")
        if isinstance(options, ast.Dict):
            keys = [string_literal(key) for key in options.keys]
            passed += [(key, value) for key, value in zip(keys, options.values) if key is not None]
        return [
            OptionParameter(option, value.id)
            for option, value in passed
            if isinstance(value, ast.Name) and self._function_binding_parameter(kernel, value.id) is not None
        ]

    def _chosen_by(self, node: ast.AST) -> list[str]:
        """Parameters of the enclosing function read by the `if`/`match` tests that decide whether `node` runs."""
        function = self.parsed.innermost_function(node)
        if function is None:
            return []
        parameters = {arg.arg for arg in function_parameters(function)}
        aliases = _self_attribute_aliases(function)
        read: set[str] = set()
        child = node
        for parent in self.parsed.ancestors(node):
            tests = []
            if isinstance(parent, ast.If) and child is not parent.test:
                tests.append((parent.test, parent))
            elif isinstance(parent, ast.Match) and child is not parent.subject:
                tests.append((parent.subject, parent))
            for test, branch in tests:
                test = _with_attributes_for_aliases(test, aliases)  # noqa: PLW2901
                read |= {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
                read |= _kinds_of_self(test, branch)
            if parent is function:
                break
            child = parent
        return sorted(name for name in read if name.split(".")[0] in parameters)

    def _module_argument(self, kernel: _Function, expression: ast.expr | None):
        """(kind, value, parameter default) of a kernel's `module=` argument."""
        if expression is None:
            return "default", None, None
        literal = string_literal(expression)
        if literal is not None:
            return ("unique" if literal == "unique" else "literal"), literal, None
        if isinstance(expression, ast.Name):
            function = self._function_binding_parameter(kernel, expression.id)
            if function is not None:
                default = self.parsed.value(parameter_default(function, expression.id))
                return "parameter", expression.id, default
        return "expression", self.parsed.source(expression), None

    def _function_binding_parameter(self, kernel: _Function, name: str) -> _Function | None:
        """The nearest enclosing function where `name` is a parameter (None if a nearer one assigns it)."""
        for ancestor in self.parsed.ancestors(kernel):
            if not isinstance(ancestor, _Function):
                continue
            if any(arg.arg == name for arg in function_parameters(ancestor)):
                return ancestor
            if _assigns(ancestor, name):
                return None
        return None

    def _captures(self, kernel: _Function) -> list[str]:
        outermost = next(d for d in self.parsed.enclosing_definitions(kernel) if isinstance(d, _Function))
        scopes = self._scopes_of(outermost)
        if scopes is None:
            return []
        same_named = sorted(
            (n for n in ast.walk(outermost) if isinstance(n, _Function) and n.name == kernel.name),
            key=lambda n: (n.lineno, n.col_offset),
        )
        return scopes.captures(kernel.name, next(i for i, n in enumerate(same_named) if n is kernel))

    def _scopes_of(self, function: _Function) -> FactoryScopes | None:
        if id(function) not in self._scopes:
            first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
            source = self.parsed.source_lines(first, function.end_lineno or function.lineno)
            try:
                self._scopes[id(function)] = FactoryScopes(source)
            except Exception:  # noqa: BLE001 - a scope failure only loses the captures
                self._scopes[id(function)] = None
        return self._scopes[id(function)]

    def _generic_parameters(self, node: _Function) -> list[str]:
        parameters = function_parameters(node)
        return [arg.arg for arg in parameters if arg.annotation and self._is_generic(arg.annotation)]

    def _is_generic(self, annotation: ast.expr) -> bool:
        for part in ast.walk(annotation):
            if not isinstance(part, ast.Name | ast.Attribute):
                continue
            names = self.parsed.qualified_names(part)
            if names & GENERIC_TYPING_NAMES or self.parsed.warp_symbol(part) in GENERIC_WARP_TYPES:
                return True
            if not names and isinstance(part, ast.Name) and part.id == "Any":
                return True
        return False

    # Warp functions ------------------------------------------------------------------------------

    def _record_func(self, node: _Function, decorator: ast.expr, kind: str) -> None:
        call = decorator if isinstance(decorator, ast.Call) else None
        located = self.parsed.located(node)
        self.found.funcs.append(
            FuncDef(
                **located,
                name=node.name,
                python_module=self.parsed.info.python_module,
                kind=kind,
                decorator_line=decorator.lineno,
                module=self.parsed.value(argument(call, "module")),
                at_module_scope=located["function"] is None,
                is_generic=bool(self._generic_parameters(node)),
            )
        )

    # Factories -----------------------------------------------------------------------------------

    def _factory_for(self, kernel: _Function) -> FactoryFunction:
        function = self.parsed.innermost_function(kernel)
        assert function is not None
        if id(function) not in self._factories:
            self._factories[id(function)] = factory = self._describe_factory(function)
            self.found.factories.append(factory)
        return self._factories[id(function)]

    def _describe_factory(self, function: _Function) -> FactoryFunction:
        parsed = self.parsed
        return FactoryFunction(
            **parsed.located(function),
            name=function.name,
            qualname=qualname([*parsed.enclosing_definitions(function), function]),
            python_module=parsed.info.python_module,
            function_path=".".join(
                d.name
                for d in [*parsed.enclosing_definitions(function), function]
                if isinstance(d, _Function)
            ),
            parameters=[
                Parameter(
                    name=arg.arg,
                    default=parsed.value(parameter_default(function, arg.arg)),
                    annotation=parsed.source(arg.annotation) if arg.annotation else None,
                )
                for arg in function_parameters(function)
            ],
            returns=[parsed.source(r.value) if r.value else "None" for r in parsed.own_returns(function)],
            decorators=[parsed.source(d) for d in function.decorator_list],
        )


def link_selectors(index: SourceIndex) -> None:
    """`picked_by` on the module-scope kernels each selector returns, when every name it returns is one
    (a selector returning anything else picks from no closed set). Registry entries keep `chosen_by`."""
    by_name = {f"{k.python_module}.{k.name}": k for k in index.kernels if k.at_module_scope}
    for selector in index.selectors:
        kernels = [by_name.get(name) for name in selector.kernels]
        if len(kernels) < 2 or any(k is None or k.chosen_by for k in kernels):
            continue
        for kernel in kernels:
            if kernel is not None and kernel.picked_by is None:
                kernel.picked_by, kernel.picked_by_file = selector.name, selector.file
                kernel.picked_by_line = selector.line


def _own_name_lookup(node: ast.AST) -> tuple[str, tuple[str, str]] | None:
    """(how the plan names it, (prefix, suffix)) of a lookup of this module's own names by a name made at run time:
    `getattr(sys.modules[__name__], f"make_{key}")` or `globals()[f"make_{key}"]`, named with `{...}` for the
    key (`warp_fix.scope.optional_reason` reads it so); None for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
        this_module = (
            len(node.args) == 2 and isinstance(target := node.args[0], ast.Subscript)
            and ast.unparse(target) == "sys.modules[__name__]"
        )  # fmt: skip
        pattern = _name_pattern(node.args[1]) if this_module else None
        return (f'getattr(sys.modules[__name__], f"{pattern[0]}{{...}}{pattern[1]}")', pattern) if pattern else None
    if isinstance(node, ast.Subscript) and _calls_globals(node.value):
        pattern = _name_pattern(node.slice)
        return (f'globals()[f"{pattern[0]}{{...}}{pattern[1]}"]', pattern) if pattern else None
    return None


def _calls_globals(node: ast.expr) -> bool:
    """`globals()`."""
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals"
        and not node.args and not node.keywords
    )  # fmt: skip


def _name_pattern(name: ast.expr) -> tuple[str, str] | None:
    """(prefix, suffix) of `f"make_{key}"`: one value between constant text, at least one side of it."""
    if not isinstance(name, ast.JoinedStr):
        return None
    parts = name.values
    holes = [i for i, part in enumerate(parts) if isinstance(part, ast.FormattedValue)]
    if len(holes) != 1 or len(parts) > 3 or parts[holes[0]].conversion != -1 or parts[holes[0]].format_spec:
        return None
    prefix = parts[0].value if holes[0] == 1 else ""
    suffix = parts[-1].value if holes[0] == len(parts) - 2 else ""
    return (prefix, suffix) if prefix or suffix else None


def _returned_name(value: ast.expr | None, local: set[str], imported: dict[str, str], module: str) -> str | None:
    """The qualified name a `return` gives: a module-scope kernel of the file, or an imported name (`clamp`,
    `edges.clamp`); None for anything else."""
    if isinstance(value, ast.Name):
        if value.id in local:
            return f"{module}.{value.id}"
        return imported.get(value.id)
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in imported:
        return f"{imported[value.value.id]}.{value.attr}"
    return None


def _self_attribute_aliases(function: _Function) -> dict[str, ast.Attribute]:
    """Local -> `self.<attribute>` for each local the function binds once, to an attribute of `self`
    (`kind = self.kind`): a test of the local is a test of the attribute."""
    stores = [n for n in _own_nodes(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    once = {name for name in {n.id for n in stores} if sum(n.id == name for n in stores) == 1}
    return {
        node.targets[0].id: node.value for node in _own_nodes(function)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in once and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name) and node.value.value.id == "self"
    }  # fmt: skip


def _with_attributes_for_aliases(test: ast.expr, aliases: dict[str, ast.Attribute]) -> ast.expr:
    """`test` with each local alias of an attribute of `self` read as that attribute (`kind == "edge"`:
    `self.kind == "edge"`)."""

    class Expand(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return aliases.get(node.id, node) if isinstance(node.ctx, ast.Load) else node

    return Expand().visit(copy.deepcopy(test)) if aliases else test


def _kinds_of_self(test: ast.expr, branch: ast.AST) -> set[str]:
    """`self.kind` for a branch that compares an attribute of `self` with a string (`if self.kind == "blur":`,
    `match self.kind: case "blur":`): a dispatch on a kind the object was given, not a mode flag of its own."""
    attributes = {
        node.attr for node in ast.walk(test)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
    }
    if not attributes:
        return set()
    if isinstance(branch, ast.Match):
        patterns = [node for case in branch.cases for node in ast.walk(case.pattern)]
        strings = any(isinstance(p, ast.MatchValue) and _is_string(p.value) for p in patterns)
    else:
        strings = any(isinstance(node, ast.Compare) and any(_is_string(c) for c in [node.left, *node.comparators])
                      for node in ast.walk(test))
    return {f"self.{attribute}" for attribute in sorted(attributes)} if strings else set()


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _functions_and_methods(tree: ast.Module) -> Iterator[tuple[_Function, str]]:
    """Each module-scope function and each method of a module-scope class, with its qualified name."""
    for node in tree.body:
        if isinstance(node, _Function):
            yield node, node.name
        elif isinstance(node, ast.ClassDef):
            yield from ((m, f"{node.name}.{m.name}") for m in node.body if isinstance(m, _Function))


def _fixed_test(test: ast.expr) -> bool:
    """A branch test of names, attributes and constants only (comparisons, `and`/`or`/`not`): no call, no
    subscript, nothing computed from run-time data beyond the configuration value it reads."""
    allowed = (
        ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Name, ast.Attribute, ast.Constant, ast.Tuple, ast.List, ast.Set,
        ast.Load, ast.cmpop, ast.boolop, ast.unaryop,
    )
    return all(isinstance(n, allowed) for n in ast.walk(test))


def _own_nodes(function: _Function):
    """Nodes of `function`'s own body, not of functions, classes or lambdas nested in it."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def _assigns(function: _Function, name: str) -> bool:
    stores = (n for n in _own_nodes(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return any(n.id == name for n in stores)
