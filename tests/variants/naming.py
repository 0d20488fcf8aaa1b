"""The naming family: the same call with its arguments passed another way, the same kernels under other names,
the same Warp module named another way."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import libcst as cst

from tests.variants.names import module_level_warp_alias, names_in
from tests.variants.placement import after_leading_imports
from tests.variants.transform import Example, Fixture, Skip, Transformation, Variant

# wp.launch(kernel, dim, inputs, outputs, ...): the parameters after the kernel, in order.
LAUNCH_PARAMETERS = ("dim", "inputs", "outputs")


def _is_launch(call: cst.Call, alias: str) -> bool:
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and (func.value.value, func.attr.value) == (alias, "launch")
    )


class _Positional(cst.CSTTransformer):
    def __init__(self, alias: str) -> None:
        self.alias = alias

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not _is_launch(original_node, self.alias):
            return updated_node
        args = list(updated_node.args)
        if not args or args[0].keyword is not None or any(a.star for a in args):
            return updated_node
        positional, keywords = [args[0]], args[1:]
        if any(a.keyword is None for a in keywords):
            return updated_node
        for name in LAUNCH_PARAMETERS:
            found = next((a for a in keywords if a.keyword.value == name), None)
            if found is None:
                break
            keywords.remove(found)
            positional.append(found.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
        if len(positional) == 1:
            return updated_node
        rebuilt = [*positional, *keywords]
        # each argument keeps the comma (and the whitespace after it) of the slot it now fills
        rebuilt = [arg.with_changes(comma=slot.comma) for arg, slot in zip(rebuilt, args)]
        return updated_node.with_changes(args=rebuilt)


class PositionalLaunchArguments(Transformation):
    NAME = "positional-launch"
    FAMILY = "naming"
    DESCRIPTION = "`wp.launch(k, dim=n, inputs=[...])` passes dim, inputs and outputs by position."
    NOTHING_TO_REWRITE = "no wp.launch passes dim by keyword"
    EXAMPLES = (
        Example(
            before="import warp as wp\n\nwp.launch(k, dim=n, inputs=[a], device=d)\n",
            after="import warp as wp\n\nwp.launch(k, n, [a], device=d)\n",
        ),
        Example(
            before="import warp as wp\n\nwp.launch(k, inputs=[a], dim=n, outputs=[b])\n",
            after="import warp as wp\n\nwp.launch(k, n, [a], [b])\n",
        ),
        # the kernel passed by keyword: nothing can go before it by position
        Example(
            before="import warp as wp\n\nwp.launch(kernel=k, dim=n, inputs=[a])\n",
            after="import warp as wp\n\nwp.launch(kernel=k, dim=n, inputs=[a])\n",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        alias = module_level_warp_alias(module.code)
        return module.visit(_Positional(alias)) if alias is not None else None


class _Keywords(cst.CSTTransformer):
    def __init__(self, alias: str) -> None:
        self.alias = alias

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not _is_launch(original_node, self.alias):
            return updated_node
        args = list(updated_node.args)
        positional = [a for a in args if a.keyword is None]
        if any(a.star for a in args) or not positional or len(positional) > 1 + len(LAUNCH_PARAMETERS):
            return updated_node
        names = ("kernel", *LAUNCH_PARAMETERS)
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        named = [
            arg.with_changes(keyword=cst.Name(names[i]), equal=equal) if arg.keyword is None else arg
            for i, arg in enumerate(args)
        ]
        return updated_node.with_changes(args=named)


class KeywordLaunchArguments(Transformation):
    NAME = "keyword-launch"
    FAMILY = "naming"
    DESCRIPTION = "`wp.launch(k, n, [...])` names every argument: `wp.launch(kernel=k, dim=n, inputs=[...])`."
    NOTHING_TO_REWRITE = "no wp.launch passes an argument by position"
    EXAMPLES = (
        Example(
            before="import warp as wp\n\nwp.launch(k, n, [a], device=d)\n",
            after="import warp as wp\n\nwp.launch(kernel=k, dim=n, inputs=[a], device=d)\n",
        ),
        Example(
            before="import warp as wp\n\nwp.launch(k, dim=n, inputs=[a])\n",
            after="import warp as wp\n\nwp.launch(kernel=k, dim=n, inputs=[a])\n",
        ),
        # arguments unpacked from a sequence cannot be named
        Example(
            before="import warp as wp\n\nwp.launch(*args)\n",
            after="import warp as wp\n\nwp.launch(*args)\n",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        alias = module_level_warp_alias(module.code)
        return module.visit(_Keywords(alias)) if alias is not None else None


def _kernel_decorated(node: ast.FunctionDef) -> bool:
    """`@wp.kernel`, `@kernel`, `@wp.kernel(...)`."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)) == "kernel":
            return True
    return False


def _kernels_and_factories(tree: ast.Module) -> set[str]:
    """The names of a file's kernels (decorated, or passed to `wp.kernel(fn)`) outside classes, and of the
    module-scope functions that make one (the factories)."""
    in_classes = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in ast.walk(c)}
    passed = {
        call.args[0].id for call in ast.walk(tree)
        if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Name)
        and (call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)) == "kernel"
    }  # fmt: skip
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and id(n) not in in_classes]
    kernels = {f for f in functions if _kernel_decorated(f) or f.name in passed}
    factories = {
        f.name for f in tree.body if isinstance(f, ast.FunctionDef) and f not in kernels
        and any(inner in kernels for inner in ast.walk(f))
    }  # fmt: skip
    return {k.name for k in kernels} | factories


def _project_modules(tree: ast.Module, packages: set[str]) -> set[str]:
    """The names a file binds by importing from the project (`from pkg import stages`, `import pkg.a as a`)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in packages):
            bound |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in packages}
    return bound


def _read_only_by_name(name: str, fixture: Fixture) -> bool:
    """Every use of `name` in the project is the name itself (a definition, a reference, an import of it, or an
    attribute of a project module): never a parameter, a keyword, an attribute of something else, a word of a
    string (a `getattr`, an `__all__`), a module's path, or a name the fixture's own tests read."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    if any(name in names_in(text) for text in fixture.untouched.values()):
        return False
    if any(name in Path(path).with_suffix("").parts for path in fixture.sources):
        return False
    for text in fixture.sources.values():
        tree = ast.parse(text)
        docstrings = {
            id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr)
        }  # fmt: skip
        modules = _project_modules(tree, fixture.packages)
        for node in ast.walk(tree):
            if isinstance(node, ast.arg | ast.keyword) and node.arg == name:
                return False
            of_a_module = isinstance(node, ast.Attribute) and getattr(node.value, "id", None) in modules
            if isinstance(node, ast.Attribute) and node.attr == name and not of_a_module:
                return False
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            if is_text and word.search(node.value):
                return False
    return True


class _Rename(cst.CSTTransformer):
    def __init__(self, renames: dict[str, str]) -> None:
        self.renames = renames

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.renames.get(updated_node.value, updated_node.value))


class RenamedKernels(Transformation):
    """Kernels and the factories that make them carry other names, everywhere the project names them. Warp keys a
    kernel by its function's qualified name (`make_fade__locals__fade`) and names a unique module after the key,
    so the run's kernels and modules carry the new names: `Variant.names` maps them back, for the verdict and
    for the behaviour check. A name the program could read as a string, a keyword or an attribute of anything
    but a project module is left alone."""

    NAME = "renamed-kernels"
    FAMILY = "naming"
    DESCRIPTION = (
        "Every kernel and kernel factory is renamed (`blur` -> `renamed_blur`, `make_blur` -> `renamed_make_blur`) "
        "in every file that names it."
    )
    NOTHING_TO_REWRITE = "no kernel or factory whose name the program reads only as a name"
    PREFIX = "renamed_"
    EXAMPLES = (
        Example(
            path="pkg/ops.py",
            before=(
                "import warp as wp\n\n\n@wp.kernel\ndef blur(a: wp.array(dtype=float)):\n    pass\n\n\n"
                "def make_fade():\n    def fade(a: wp.array(dtype=float)):\n        pass\n\n"
                '    return wp.kernel(fade, module="unique")\n'
            ),
            after=(
                "import warp as wp\n\n\n@wp.kernel\ndef renamed_blur(a: wp.array(dtype=float)):\n    pass\n\n\n"
                "def renamed_make_fade():\n    def renamed_fade(a: wp.array(dtype=float)):\n        pass\n\n"
                '    return wp.kernel(renamed_fade, module="unique")\n'
            ),
            others=(("pkg/main.py", "from pkg import ops\nfrom pkg.ops import blur\n\nops.make_fade()\n"),),
        ),
        # a kernel the program looks up by its name stays
        Example(
            path="pkg/ops.py",
            before="import warp as wp\n\n\n@wp.kernel\ndef blur(a: wp.array(dtype=float)):\n    pass\n",
            after="import warp as wp\n\n\n@wp.kernel\ndef blur(a: wp.array(dtype=float)):\n    pass\n",
            others=(("pkg/main.py", 'from pkg import ops\n\ngetattr(ops, "blur")\n'),),
        ),
    )

    def renames(self, fixture: Fixture) -> dict[str, str]:
        """Old name -> new name, for every kernel and factory of the project this transformation renames."""
        names = set().union(*(_kernels_and_factories(ast.parse(t)) for t in fixture.sources.values()))
        taken = set().union(*(names_in(t) for t in fixture.every_python_file.values()))
        return {
            name: f"{self.PREFIX}{name}" for name in sorted(names)
            if f"{self.PREFIX}{name}" not in taken and not hasattr(builtins, name) and _read_only_by_name(name, fixture)
        }  # fmt: skip

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        renames = self.renames(fixture)
        return module.visit(_Rename(renames)) if renames else None

    def apply(self, fixture: Fixture) -> Variant | Skip:
        """The variant, with the plan's and the run's new names read as the old ones."""
        variant = super().apply(fixture)
        if isinstance(variant, Variant):
            variant.names.update({new: old for old, new in self.renames(fixture).items()})
        return variant


def _warp_kernel_names(code: str) -> tuple[str | None, bool]:
    """(the alias of a module-scope `import warp as <alias>`, whether `from warp import kernel` binds `kernel`):
    how the file names Warp's `kernel` (a method of the project's named `kernel` is not it)."""
    tree = ast.parse(code)
    imported = any(
        isinstance(n, ast.ImportFrom) and n.module == "warp"
        and any(a.name == "kernel" and not a.asname for a in n.names)
        for n in tree.body
    )  # fmt: skip
    return module_level_warp_alias(code) or ("warp" if "warp" in names_in(code) else None), imported


class _WarpKernelTransformer(cst.CSTTransformer):
    def __init__(self, code: str) -> None:
        self.alias, self.imported = _warp_kernel_names(code)

    def is_kernel(self, node: cst.BaseExpression) -> bool:
        """`wp.kernel` or, where the file imports it so, `kernel` (the decorator or the function)."""
        if isinstance(node, cst.Attribute):
            return node.attr.value == "kernel" and isinstance(node.value, cst.Name) and node.value.value == self.alias
        return self.imported and isinstance(node, cst.Name) and node.value == "kernel"


class _UniqueThroughConstant(_WarpKernelTransformer):
    def __init__(self, code: str, constant: str) -> None:
        super().__init__(code)
        self.constant = constant
        self.changed = False

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_kernel(original_node.func):
            return updated_node
        args = []
        for arg in updated_node.args:
            literal = isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "unique"
            if arg.keyword is not None and arg.keyword.value == "module" and literal:
                arg = arg.with_changes(value=cst.Name(self.constant))
                self.changed = True
            args.append(arg)
        return updated_node.with_changes(args=args)


class UniqueModuleThroughConstant(Transformation):
    """`module="unique"` is read from a module constant (`KERNEL_MODULE = "unique"`), as a library that lets one
    setting choose its kernels' modules writes it.

    Why not a module name: the only string of the same meaning as "unique" is "unique". Warp gives a
    `module="unique"` kernel a module of its own, named `<key>_<hash of its source>`, one per factory call, that
    copies `warp.config` when the kernel is made and that `wp.set_module_options` of its Python module does not
    reach; a kernel given any other string joins the one module of that name, shared by every kernel naming it
    and reached by `set_module_options(module=name)`. Writing one for the other changes which modules are built
    and which options reach them: what the verdict is about (unique-on-stable, granular modules, no-op options).
    The default module has a string of the same meaning, the file's own module name: `file-module-named`."""

    NAME = "unique-module-through-constant"
    FAMILY = "naming"
    DESCRIPTION = '`wp.kernel(..., module="unique")` reads `module=KERNEL_MODULE`, a module constant `"unique"`.'
    NOTHING_TO_REWRITE = 'no kernel is made with module="unique" in a file where KERNEL_MODULE is free'
    CONSTANT = "KERNEL_MODULE"
    EXAMPLES = (
        Example(
            before=(
                'import warp as wp\n\n\n@wp.kernel(module="unique")\ndef k(a: wp.array(dtype=float)):\n    pass\n\n\n'
                'def make(f):\n    return wp.kernel(f, module="unique", enable_backward=False)\n'
            ),
            after=(
                'import warp as wp\nKERNEL_MODULE = "unique"\n\n\n@wp.kernel(module=KERNEL_MODULE)\n'
                "def k(a: wp.array(dtype=float)):\n    pass\n\n\n"
                "def make(f):\n    return wp.kernel(f, module=KERNEL_MODULE, enable_backward=False)\n"
            ),
        ),
        # a factory's parameter default is the caller's choice, not a kernel's module argument
        Example(
            before='import warp as wp\n\n\ndef make(f, module="unique"):\n    return wp.kernel(f, module=module)\n',
            after='import warp as wp\n\n\ndef make(f, module="unique"):\n    return wp.kernel(f, module=module)\n',
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        if self.CONSTANT in names_in(module.code):
            return None
        transformer = _UniqueThroughConstant(module.code, self.CONSTANT)
        new = module.visit(transformer)
        if not transformer.changed:
            return None
        return after_leading_imports(new, cst.parse_statement(f'{self.CONSTANT} = "unique"\n'))


def _python_module(path: str, fixture: Fixture) -> str | None:
    """The dotted name Python imports a source file by (`pkg/a.py`: `pkg.a`), or None where the file is the
    command's `__main__` or sits in a folder that is not a package (a script's folder imports it by another
    name)."""
    parts = Path(path).with_suffix("").parts
    folders = [Path(*parts[:n]) for n in range(1, len(parts))]
    if any((folder / "__init__.py").as_posix() not in fixture.sources for folder in folders):
        return None
    dotted = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    command = list(fixture.command)
    main = command[command.index("-m") + 1] if "-m" in command else None
    runs_file = any(Path(word).as_posix() == path for word in command)
    if parts[-1] == "__main__" or runs_file or main == dotted:
        return None
    return dotted


class _NameDefaultModule(_WarpKernelTransformer):
    def __init__(self, code: str, name: str) -> None:
        super().__init__(code)
        self.module = cst.Arg(
            keyword=cst.Name("module"),
            value=cst.SimpleString(f'"{name}"'),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )

    def _named(self, call: cst.Call) -> cst.Call:
        if any(a.keyword is not None and a.keyword.value == "module" for a in call.args) or any(
            a.star for a in call.args
        ):
            return call
        args = list(call.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return call.with_changes(args=[*args, self.module])

    def leave_Decorator(self, original_node: cst.Decorator, updated_node: cst.Decorator) -> cst.Decorator:
        if self.is_kernel(updated_node.decorator):
            return updated_node.with_changes(decorator=cst.Call(func=updated_node.decorator, args=[self.module]))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        return self._named(updated_node) if self.is_kernel(original_node.func) else updated_node


class FileModuleNamed(Transformation):
    """A kernel of the default module names that module: `@wp.kernel` in `pkg/a.py` becomes
    `@wp.kernel(module="pkg.a")`. Warp looks the default up by the function's `__module__`, a string by
    `get_module(name)`: the same entry of the same registry, so the same module, the same build, reached by the
    same `wp.set_module_options` of that file. A file run as `__main__` (its kernels are `__main__`'s) or imported
    by a name its path does not give is left alone, as is a project that redirects modules by
    `register_module_constructs`."""

    NAME = "file-module-named"
    FAMILY = "naming"
    DESCRIPTION = '`@wp.kernel` in `pkg/a.py` names its default module: `@wp.kernel(module="pkg.a")`.'
    NOTHING_TO_REWRITE = "no kernel of the default module in a package file the command does not run as __main__"
    EXAMPLES = (
        Example(
            path="pkg/ops.py",
            before=(
                "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    pass\n\n\n"
                "@wp.kernel(enable_backward=False)\ndef j(a: wp.array(dtype=float)):\n    pass\n\n\n"
                "def make(f):\n    return wp.kernel(f)\n"
            ),
            after=(
                'import warp as wp\n\n\n@wp.kernel(module="pkg.ops")\ndef k(a: wp.array(dtype=float)):\n    pass\n\n\n'
                '@wp.kernel(enable_backward=False, module="pkg.ops")\ndef j(a: wp.array(dtype=float)):\n    pass\n\n\n'
                'def make(f):\n    return wp.kernel(f, module="pkg.ops")\n'
            ),
            others=(("pkg/__init__.py", ""),),
        ),
        # a plugin's own `kernel()` method is not Warp's
        Example(
            path="pkg/ops.py",
            before="import warp as wp\n\n\ndef run(plugin):\n    return plugin.kernel()\n",
            after="import warp as wp\n\n\ndef run(plugin):\n    return plugin.kernel()\n",
            others=(("pkg/__init__.py", ""),),
        ),
        # the command's own script: its kernels are in __main__
        Example(
            path="pkg/__main__.py",
            before="import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    pass\n",
            after="import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    pass\n",
            others=(("pkg/__init__.py", ""),),
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        if any("register_module_constructs" in text for text in fixture.sources.values()):
            return Skip("the project redirects modules with register_module_constructs")
        return None

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        name = _python_module(path, fixture)
        return module.visit(_NameDefaultModule(module.code, name)) if name is not None else None
