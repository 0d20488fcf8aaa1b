"""The call-structure family: launches made through helper functions of the project instead of in place, and a
launching function held by a class."""

from __future__ import annotations

import ast
from collections import Counter

import libcst as cst
import libcst.matchers as m

from tests.variants.names import module_level_warp_alias, names_in
from tests.variants.transform import Example, Fixture, Skip, Transformation, Variant


class _ThroughHelper(cst.CSTTransformer):
    def __init__(self, alias: str, helper: str) -> None:
        self.alias, self.helper = alias, helper

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        func = original_node.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and (func.value.value, func.attr.value) == (self.alias, "launch")
        ):
            return updated_node.with_changes(func=cst.Name(self.helper))
        return updated_node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        """The helper follows the module's leading imports."""
        body = list(updated_node.body)
        at = 0
        for i, statement in enumerate(body):
            if isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(node, (cst.Import, cst.ImportFrom)) for node in statement.body
            ):
                at = i + 1
            elif i > 0 or not _is_docstring_line(statement):
                break
        helper = cst.parse_statement(
            f"def {self.helper}(*args, **kwargs):\n    return {self.alias}.launch(*args, **kwargs)\n"
        ).with_changes(leading_lines=(cst.EmptyLine(), cst.EmptyLine()))
        body.insert(at, helper)
        return updated_node.with_changes(body=body)


def _is_docstring_line(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)


class LaunchThroughHelper(Transformation):
    NAME = "launch-through-helper"
    FAMILY = "call structure"
    DESCRIPTION = "Every `wp.launch(...)` of a file calls a helper of that file that calls `wp.launch` in turn."
    NOTHING_TO_REWRITE = "no file launches with wp.launch at the name `_launch` free"
    HELPER = "_launch"
    EXAMPLES = (
        Example(
            before=(
                '"""Sim."""\n\nimport warp as wp\n\nfrom pkg import kernels\n\n\n'
                "def step(a):\n    wp.launch(kernels.k, dim=1, inputs=[a])\n"
            ),
            after=(
                '"""Sim."""\n\nimport warp as wp\n\nfrom pkg import kernels\n\n\ndef _launch(*args, **kwargs):\n'
                "    return wp.launch(*args, **kwargs)\n\n\ndef step(a):\n    _launch(kernels.k, dim=1, inputs=[a])\n"
            ),
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        text = module.code
        alias = module_level_warp_alias(text)
        if alias is None or f"{alias}.launch(" not in text or self.HELPER in names_in(text):
            return None
        return module.visit(_ThroughHelper(alias, self.HELPER))


class _LaunchStatements(cst.CSTVisitor):
    """The statements of a function that are a bare `<alias>.launch(...)` call, in source order (nested
    functions, classes and lambdas are scopes of their own: not searched)."""

    def __init__(self, alias: str) -> None:
        self.alias = alias
        self.found: list[cst.SimpleStatementLine] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        if len(node.body) == 1 and isinstance(node.body[0], cst.Expr) and _is_launch(node.body[0].value, self.alias):
            self.found.append(node)
        return False


def _is_launch(node: cst.BaseExpression, alias: str) -> bool:
    func = node.func if isinstance(node, cst.Call) else None
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and (func.value.value, func.attr.value) == (alias, "launch")
    )


class _LocalNames(ast.NodeVisitor):
    """The names a function binds in its own scope (parameters included, `global`/`nonlocal` ones excluded)."""

    def __init__(self, function: ast.FunctionDef) -> None:
        self.bound: set[str] = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        self.declared: set[str] = set()
        for statement in function.body:
            self.visit(statement)

    @property
    def locals(self) -> set[str]:
        return self.bound - self.declared

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.bound.add(node.id)

    def visit_alias(self, node: ast.alias) -> None:
        self.bound.add((node.asname or node.name).split(".")[0])

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.declared.update(node.names)

    visit_Nonlocal = visit_Global

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.bound.add(node.name)  # its body is a scope of its own; decorators and defaults are read here
        for expression in [*node.decorator_list, *getattr(getattr(node, "args", None), "defaults", [])]:
            self.visit(expression)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Lambda(self, node: ast.Lambda) -> None:
        pass

    def visit_ListComp(self, node: ast.AST) -> None:
        pass  # a comprehension binds its targets in a scope of its own

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


def _names_read(code: str) -> list[str]:
    """The names a piece of code reads, in order of first appearance."""
    reads = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    reads.sort(key=lambda n: (n.lineno, n.col_offset))
    return list(dict.fromkeys(n.id for n in reads))


class _Replace(cst.CSTTransformer):
    """Statements replaced by others, found by identity."""

    def __init__(self, replacements: dict[cst.SimpleStatementLine, cst.BaseStatement]) -> None:
        self.replacements = {id(old): new for old, new in replacements.items()}

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement:
        return self.replacements.get(id(original_node), updated_node)


class LaunchesInTwoHelpers(Transformation):
    """A function's first two `wp.launch(...)` statements each move into a helper function of the file (placed
    before the function or its class), called where the launch stood, with the function's locals the launch reads
    as arguments. Launch order and arguments do not change; the launches' calling function does."""

    NAME = "launches-in-two-helpers"
    FAMILY = "call structure"
    DESCRIPTION = (
        "A function's first two `wp.launch(...)` statements move into two helper functions of the file, each called "
        "where its launch stood, with the locals it reads as arguments."
    )
    NOTHING_TO_REWRITE = "no module-scope function or method makes two or more wp.launch statements"
    EXAMPLES = (
        Example(
            before=(
                "import warp as wp\n\n\ndef step(a, b, n):\n    wp.launch(k1, dim=n, inputs=[a])\n"
                "    for i in range(3):\n        wp.launch(k2, dim=n, inputs=[a, b, i])\n"
            ),
            after=(
                "import warp as wp\n\n\ndef _step_launch_1(n, a):\n    wp.launch(k1, dim=n, inputs=[a])\n\n\n"
                "def _step_launch_2(n, a, b, i):\n    wp.launch(k2, dim=n, inputs=[a, b, i])\n\n\n"
                "def step(a, b, n):\n    _step_launch_1(n, a)\n    for i in range(3):\n"
                "        _step_launch_2(n, a, b, i)\n"
            ),
        ),
        # a method: its helpers take `self` like any local
        Example(
            before=(
                "import warp as wp\n\n\nclass Sim:\n    def step(self):\n        wp.launch(self.k, dim=1)\n"
                "        wp.launch(self.k, dim=2)\n"
            ),
            after=(
                "import warp as wp\n\n\ndef _Sim_step_launch_1(self):\n    wp.launch(self.k, dim=1)\n\n\n"
                "def _Sim_step_launch_2(self):\n    wp.launch(self.k, dim=2)\n\n\nclass Sim:\n    def step(self):\n"
                "        _Sim_step_launch_1(self)\n        _Sim_step_launch_2(self)\n"
            ),
        ),
        # one launch only: nothing to split
        Example(
            before="import warp as wp\n\n\ndef step(a):\n    wp.launch(k, dim=1, inputs=[a])\n",
            after="import warp as wp\n\n\ndef step(a):\n    wp.launch(k, dim=1, inputs=[a])\n",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        text = module.code
        alias = module_level_warp_alias(text)
        if alias is None or f"{alias}.launch(" not in text:
            return None
        taken = names_in(text)
        body: list[cst.BaseStatement] = []
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                helpers, statement = self._split(statement, statement.name.value, alias, taken)
            elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
                helpers, methods = [], []
                for method in statement.body.body:
                    if isinstance(method, cst.FunctionDef):
                        prefix = f"{statement.name.value}_{method.name.value}"
                        made, method = self._split(method, prefix, alias, taken)
                        helpers += made
                    methods.append(method)
                statement = statement.with_changes(body=statement.body.with_changes(body=methods))
            else:
                helpers = []
            if helpers:
                helpers[0] = helpers[0].with_changes(leading_lines=statement.leading_lines)
                statement = statement.with_changes(leading_lines=(cst.EmptyLine(), cst.EmptyLine()))
            body += [*helpers, statement]
        return module.with_changes(body=body) if len(body) != len(module.body) else None

    def _split(
        self, function: cst.FunctionDef, prefix: str, alias: str, taken: set[str]
    ) -> tuple[list[cst.FunctionDef], cst.FunctionDef]:
        """Helpers for the function's first two launch statements, and the function calling them."""
        finder = _LaunchStatements(alias)
        function.body.visit(finder)
        names = [f"_{prefix}_launch_{n}" for n in (1, 2)]
        if len(finder.found) < 2 or taken & set(names) or function.asynchronous:
            return [], function
        tree = ast.parse(cst.Module(body=[function.with_changes(decorators=())]).code).body[0]
        local = _LocalNames(tree).locals
        helpers, calls = [], {}
        for name, launch in zip(names, finder.found[:2]):
            code = cst.Module(body=[launch.with_changes(leading_lines=())]).code
            arguments = ", ".join(n for n in _names_read(code) if n in local)
            helper = cst.parse_statement(f"def {name}({arguments}):\n    pass\n")
            helper = helper.with_changes(
                body=helper.body.with_changes(body=[launch.with_changes(leading_lines=())]),
                leading_lines=(cst.EmptyLine(), cst.EmptyLine()) if helpers else (),
            )
            helpers.append(helper)
            calls[launch] = cst.parse_statement(f"{name}({arguments})\n").with_changes(
                leading_lines=launch.leading_lines
            )
        return helpers, function.visit(_Replace(calls))


class _CallsThroughClass(cst.CSTTransformer):
    """Calls of the named functions go through their holder class: `step(...)` -> `_Step.step(...)`."""

    def __init__(self, holders: dict[str, str]) -> None:
        self.holders = holders

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        func = original_node.func
        if isinstance(func, cst.Name) and func.value in self.holders:
            return updated_node.with_changes(
                func=cst.Attribute(cst.Name(self.holders[func.value]), cst.Name(func.value))
            )
        return updated_node


def _holder_name(function: str) -> str:
    return "_" + "".join(part.capitalize() for part in function.split("_") if part)


class LaunchingFunctionAsStaticMethod(Transformation):
    """A module-scope function that launches becomes a `@staticmethod` of a small class of its own, called as
    `_Step.step(...)` in its file; where it is read otherwise (another file imports it, a registry lists it) the
    module keeps the name for it (`step = _Step.step`, the same function object). Only where its callers find it
    changes: the code, its globals and the launches are the same. A function that defines a function or a kernel
    inside stays (their qualified names, and so a kernel's key, would change)."""

    NAME = "function-as-static-method"
    FAMILY = "call structure"
    DESCRIPTION = "A module-scope function that launches becomes a `@staticmethod` of a class, called through it."
    NOTHING_TO_REWRITE = "no module-scope function launches without defining a function inside"
    EXAMPLES = (
        Example(
            before=(
                "import warp as wp\n\n\ndef step_all(a):\n    wp.launch(k, dim=1, inputs=[a])\n\n\n"
                "def run(a):\n    step_all(a)\n"
            ),
            after=(
                "import warp as wp\n\n\nclass _StepAll:\n    @staticmethod\n    def step_all(a):\n"
                "        wp.launch(k, dim=1, inputs=[a])\n\n\ndef run(a):\n    _StepAll.step_all(a)\n"
            ),
        ),
        # read as a value (a callback): the module keeps the name for it
        Example(
            before="import warp as wp\n\n\ndef step(a):\n    wp.launch(k, dim=1)\n\n\nHOOKS = [step]\n",
            after=(
                "import warp as wp\n\n\nclass _Step:\n    @staticmethod\n    def step(a):\n"
                "        wp.launch(k, dim=1)\nstep = _Step.step\n\n\nHOOKS = [step]\n"
            ),
        ),
        # a factory: the kernel it defines would get another key
        Example(
            before=(
                "import warp as wp\n\n\ndef make():\n    @wp.kernel\n    def k():\n        pass\n\n"
                "    wp.launch(k, dim=1)\n"
            ),
            after=(
                "import warp as wp\n\n\ndef make():\n    @wp.kernel\n    def k():\n        pass\n\n"
                "    wp.launch(k, dim=1)\n"
            ),
        ),
    )

    def apply(self, fixture: Fixture) -> Variant | Skip:
        """The variant, whose plan reads a moved function's qualified name (`_Step.step`) as the original's."""
        variant = super().apply(fixture)
        if isinstance(variant, Variant):
            for path, text in variant.files.items():
                before = names_in(fixture.sources[path])
                for node in ast.parse(text).body:
                    if isinstance(node, ast.ClassDef) and node.name not in before:
                        variant.names.update({f"{node.name}.{f.name}": f.name for f in node.body})
        return variant

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        text = module.code
        alias = module_level_warp_alias(text)
        if alias is None:
            return None
        elsewhere = set().union(*(_names_and_attributes(t) for p, t in fixture.every_python_file.items() if p != path))
        called, read = _calls_and_reads(text)
        taken = names_in(text)
        holders: dict[str, str] = {}
        body: list[cst.BaseStatement] = []
        for statement in module.body:
            name = statement.name.value if isinstance(statement, cst.FunctionDef) else None
            holder = _holder_name(name) if name else ""
            if (
                name is None
                or statement.decorators
                or statement.asynchronous
                or f"{alias}.launch(" not in cst.Module(body=[statement]).code
                or _defines_inside(statement)
                or holder in taken
            ):
                body.append(statement)
                continue
            method = statement.with_changes(decorators=(cst.Decorator(cst.Name("staticmethod")),), leading_lines=())
            holders[name] = holder
            body.append(
                cst.ClassDef(cst.Name(holder), cst.IndentedBlock(body=[method]), leading_lines=statement.leading_lines)
            )
            if name in elsewhere or read[name] != called[name]:
                body.append(cst.parse_statement(f"{name} = {holder}.{name}\n"))
        if not holders:
            return None
        return module.with_changes(body=body).visit(_CallsThroughClass(holders))


def _names_and_attributes(text: str) -> set[str]:
    return names_in(text) | {n.attr for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Attribute)}


def _calls_and_reads(text: str) -> tuple[Counter[str], Counter[str]]:
    """How often each name is called by name, and how often it is read at all."""
    tree = ast.parse(text)
    called = Counter(n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    read = Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    return called, read


def _defines_inside(function: cst.FunctionDef) -> bool:
    return bool(m.findall(function.body, m.FunctionDef() | m.ClassDef() | m.Lambda()))


def _function_name(cls: str, method: str) -> str:
    return f"_{cls}_{method.strip('_')}"


def _class_scope_names(cls: ast.ClassDef) -> set[str]:
    """The names the class body binds (a method's defaults and annotations are read in that scope)."""
    found: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        else:
            found |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return found


def _movable_method(method: ast.stmt, class_names: set[str], alias: str) -> str | None:
    """How the class binds the method once it is a module function ("" a plain method: the function itself;
    "staticmethod": wrapped), or None where it must stay a method: it does not launch, is decorated otherwise or
    async, defines a function, kernel, class or lambda inside (their qualified names, a kernel's key, would
    change), reads `super()`/`__class__` (the cell only a class body gives) or a name the class would mangle, or
    its defaults and annotations read the class's own names."""
    if not isinstance(method, ast.FunctionDef):
        return None
    decorators = [ast.unparse(d) for d in method.decorator_list]
    if decorators not in ([], ["staticmethod"]):
        return None
    if f"{alias}.launch(" not in ast.unparse(method):
        return None
    inside = [n for statement in method.body for n in ast.walk(statement)]
    if any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda) for n in inside):
        return None
    names = {n.id for n in ast.walk(method) if isinstance(n, ast.Name)}
    identifiers = names | {n.attr for n in ast.walk(method) if isinstance(n, ast.Attribute)}
    identifiers |= {a.arg for a in ast.walk(method.args) if isinstance(a, ast.arg)}
    if {"super", "__class__"} & names or any(i.startswith("__") and not i.endswith("__") for i in identifiers):
        return None
    args = method.args
    signature = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    signature += [a.annotation for a in ast.walk(args) if isinstance(a, ast.arg) and a.annotation is not None]
    if method.returns is not None:
        signature.append(method.returns)
    read = {n.id for node in signature for n in ast.walk(node) if isinstance(n, ast.Name)}
    if read & class_names:
        return None
    return "staticmethod" if decorators else ""


class MethodAsModuleFunction(Transformation):
    """A method that launches is a module-scope function of its file, `_<Class>_<method>`, defined before the class,
    and the class binds it under the method's name: `step = _Sim_step` for a plain method (a function in a class's
    namespace is its method: `self.step()` passes `self` as before), `step = staticmethod(_Sim_step)` for a static
    one. Callers, `self.step`, `Sim.step` and subclasses find the same code; only its qualified name changes, which
    the verdict reads back (`_Sim_step` is `Sim.step`). A method stays where moving it would change what it does:
    see `_movable_method`. No fixture has a launching method that never reads `self`, so plain methods that read it
    move too, `self` their function's first parameter."""

    NAME = "static-method-as-function"
    FAMILY = "call structure"
    DESCRIPTION = (
        "A method that launches (a `@staticmethod`, or a plain one with `self` as its first parameter) becomes a "
        "module-scope function `_<Class>_<method>` of its file; the class binds it by the method's name."
    )
    NOTHING_TO_REWRITE = (
        "no method of a module-scope class launches without defining a function inside, another decorator than "
        "@staticmethod, super() or a mangled name"
    )
    EXAMPLES = (
        Example(
            before=(
                "import warp as wp\n\n\nclass Sim:\n    def __init__(self, n):\n        self.n = n\n\n"
                "    @staticmethod\n    def clear(a):\n        wp.launch(zero, dim=1, inputs=[a])\n\n"
                "    def step(self, a):\n        wp.launch(k, dim=self.n, inputs=[a])\n"
            ),
            after=(
                "import warp as wp\n\n\ndef _Sim_clear(a):\n    wp.launch(zero, dim=1, inputs=[a])\n\n\n"
                "def _Sim_step(self, a):\n    wp.launch(k, dim=self.n, inputs=[a])\n\n\n"
                "class Sim:\n    def __init__(self, n):\n        self.n = n\n\n"
                "    clear = staticmethod(_Sim_clear)\n\n    step = _Sim_step\n"
            ),
        ),
        # a factory method (its kernel's key), a property, and a method calling super(): all stay
        Example(
            before=(
                "import warp as wp\n\n\nclass Sim(Base):\n    def make(self):\n        @wp.kernel\n"
                "        def k():\n            pass\n\n        wp.launch(k, dim=1)\n\n    @property\n"
                "    def ready(self):\n        wp.launch(k, dim=1)\n\n    def step(self):\n"
                "        super().step()\n        wp.launch(k, dim=1)\n"
            ),
            after=(
                "import warp as wp\n\n\nclass Sim(Base):\n    def make(self):\n        @wp.kernel\n"
                "        def k():\n            pass\n\n        wp.launch(k, dim=1)\n\n    @property\n"
                "    def ready(self):\n        wp.launch(k, dim=1)\n\n    def step(self):\n"
                "        super().step()\n        wp.launch(k, dim=1)\n"
            ),
        ),
    )

    def _moved(self, text: str) -> dict[tuple[str, str], tuple[str, str]]:
        """(class, method) -> (its module function's name, how the class binds it) for the file's methods that
        move."""
        alias = module_level_warp_alias(text)
        if alias is None:
            return {}
        tree = ast.parse(text)
        taken = names_in(text)
        found: dict[tuple[str, str], tuple[str, str]] = {}
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef) or any(
                _decorator_attr(d) in {"struct", "kernel", "func"} for d in cls.decorator_list
            ):
                continue
            class_names = _class_scope_names(cls)
            for method in cls.body:
                binding = _movable_method(method, class_names, alias)
                if binding is None:
                    continue
                name = _function_name(cls.name, method.name)
                if name in taken:
                    continue
                taken.add(name)
                found[(cls.name, method.name)] = (name, binding)
        return found

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        moved = self._moved(module.code)
        if not moved:
            return None
        body: list[cst.BaseStatement] = []
        for statement in module.body:
            if not isinstance(statement, cst.ClassDef) or not isinstance(statement.body, cst.IndentedBlock):
                body.append(statement)
                continue
            functions, members = [], []
            for member in statement.body.body:
                key = (statement.name.value, member.name.value) if isinstance(member, cst.FunctionDef) else None
                found = moved.get(key) if key else None
                if found is None:
                    members.append(member)
                    continue
                name, binding = found
                functions.append(
                    member.with_changes(
                        name=cst.Name(name), decorators=(), leading_lines=(cst.EmptyLine(), cst.EmptyLine())
                    )
                )
                value = f"staticmethod({name})" if binding else name
                members.append(
                    cst.parse_statement(f"{member.name.value} = {value}\n").with_changes(
                        leading_lines=member.leading_lines
                    )
                )
            if functions:
                functions[0] = functions[0].with_changes(leading_lines=statement.leading_lines)
                statement = statement.with_changes(
                    body=statement.body.with_changes(body=members), leading_lines=(cst.EmptyLine(), cst.EmptyLine())
                )
            body += [*functions, statement]
        return module.with_changes(body=body)

    def apply(self, fixture: Fixture) -> Variant | Skip:
        """The variant, whose plan reads a moved method's function (`_Sim_step`) as the method (`Sim.step`)."""
        variant = super().apply(fixture)
        if isinstance(variant, Variant):
            for text in fixture.sources.values():
                variant.names.update({name: f"{c}.{m}" for (c, m), (name, _) in self._moved(text).items()})
        return variant


def _decorator_attr(decorator: ast.expr) -> str | None:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)


class _MethodsThroughLocals(cst.CSTTransformer):
    """Rewrites each statement `receiver.method(...)` of a function whose receiver starts at `self`, a parameter or
    a local of that function, into `bound_<method> = receiver.method` then `bound_<method>(...)`."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.locals: list[set[str]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = {p.name.value for p in m.findall(node.params, m.Param())}
        assigned = {t.target.value for t in m.findall(node.body, m.AssignTarget(target=m.Name()))}
        self.locals.append(params | assigned)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.locals.pop()
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        method = self._bound_method(updated_node)
        if method is None:
            return updated_node
        call = updated_node.body[0].value  # type: ignore[attr-defined]
        name = f"bound_{method.attr.value}"
        binding = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(name))], method)], leading_lines=updated_node.leading_lines
        )
        called = updated_node.with_changes(body=[cst.Expr(call.with_changes(func=cst.Name(name)))], leading_lines=())
        return cst.FlattenSentinel([binding, called])

    def _bound_method(self, line: cst.SimpleStatementLine) -> cst.Attribute | None:
        """The `receiver.method` the line calls, where the rewrite keeps what it does."""
        if not self.locals or len(line.body) != 1 or not m.matches(line.body[0], m.Expr(m.Call(m.Attribute()))):
            return None
        func = line.body[0].value.func  # type: ignore[attr-defined]
        root = func.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root.value not in self.locals[-1] | {"self"}:
            return None  # a module (`np.sum`, `wp.launch`), a call's result, `super()`
        if f"bound_{func.attr.value}" in self.taken:
            return None
        return func


class MethodThroughLocalAlias(Transformation):
    """A method called as a statement is first bound to a local and called through it, as code that hoists a
    lookup out of a loop writes it. Python evaluates `receiver.method` before the arguments either way, so the
    program does the same; only the name the call is written with changes."""

    NAME = "method-through-local-alias"
    FAMILY = "call structure"
    DESCRIPTION = (
        "Each statement `receiver.method(...)` in a function, its receiver rooted at `self`, a parameter or a "
        "local, becomes `bound_method = receiver.method` then `bound_method(...)`."
    )
    NOTHING_TO_REWRITE = "no function calls a method of self, a parameter or a local as a statement"
    EXAMPLES = (
        Example(
            before=(
                "import numpy as np\n\n\ndef fit(solver, x):\n    solver.step(x)\n    np.save('x', x)\n"
                "    with tape:\n        solver.model.forward(x, y=1)\n"
            ),
            after=(
                "import numpy as np\n\n\ndef fit(solver, x):\n    bound_step = solver.step\n    bound_step(x)\n"
                "    np.save('x', x)\n    with tape:\n        bound_forward = solver.model.forward\n"
                "        bound_forward(x, y=1)\n"
            ),
        ),
        # module scope, a call's result and super() stay
        Example(
            before="sim.run()\n\n\ndef go(self):\n    make().run()\n    super().run()\n",
            after="sim.run()\n\n\ndef go(self):\n    make().run()\n    super().run()\n",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        rewritten = module.visit(_MethodsThroughLocals(names_in(module.code)))
        return rewritten if rewritten.code != module.code else None
