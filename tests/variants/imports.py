"""The imports family: Warp imported under another name, by its functions, inside a setup function, or after the
project's own modules; a package's sub-modules imported by its `__init__`."""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

import libcst as cst

from tests.variants.names import module_level_warp_alias, names_in, warp_bound_elsewhere
from tests.variants.transform import Example, Fixture, Skip, Transformation


class _Rename(cst.CSTTransformer):
    """Every read of the name `old` becomes `new` (attribute names and keywords keep theirs)."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.new) if original_node.value == self.old else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)

    def leave_ImportAlias(self, original_node: cst.ImportAlias, updated_node: cst.ImportAlias) -> cst.ImportAlias:
        bound = original_node.asname.name if original_node.asname else None
        if isinstance(bound, cst.Name) and bound.value == self.old and original_node.name.value == self.new:
            return original_node.with_changes(asname=None)  # `import warp as wp` -> `import warp`
        return original_node


def _is_warp_import(statement: cst.CSTNode, alias: str | None = None) -> bool:
    """`import warp as <alias>` (any alias when None), alone on its line."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    node = statement.body[0]
    if not (isinstance(node, cst.Import) and len(node.names) == 1):
        return False
    name = node.names[0]
    bound = name.asname.name.value if name.asname and isinstance(name.asname.name, cst.Name) else None
    return isinstance(name.name, cst.Name) and name.name.value == "warp" and (alias is None or bound == alias)


class WarpWithoutAlias(Transformation):
    NAME = "import-warp-plain"
    FAMILY = "imports"
    DESCRIPTION = "`import warp as wp` becomes `import warp`, and every `wp.` reads `warp.`."
    NOTHING_TO_REWRITE = "no file imports Warp under an alias it could drop"
    EXAMPLES = (
        Example(
            before="import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n",
            after="import warp\n\n\n@warp.kernel\ndef k(a: warp.array(dtype=float)):\n    a[warp.tid()] = 1.0\n",
        ),
        # a file that already names something `warp` keeps its alias
        Example(
            before="import warp as wp\nimport warp.render\n\nwp.init()\n",
            after="import warp as wp\nimport warp.render\n\nwp.init()\n",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        text = module.code
        alias = module_level_warp_alias(text)
        if alias in (None, "warp") or "warp" in names_in(text) - {alias} or warp_bound_elsewhere(text, alias):
            return None
        return module.visit(_Rename(alias, "warp"))


class _ImportNames(cst.CSTTransformer):
    """`<alias>.<name>` becomes `<name>` for `names`; `from warp import ...` follows the Warp import."""

    def __init__(self, alias: str, names: list[str]) -> None:
        self.alias, self.names = alias, names

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        value = original_node.value
        if isinstance(value, cst.Name) and value.value == self.alias and original_node.attr.value in self.names:
            return cst.Name(original_node.attr.value)
        return updated_node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = list(updated_node.body)
        at = next(i for i, s in enumerate(body) if _is_warp_import(s, self.alias))
        names = ", ".join(self.names)
        body.insert(at + 1, cst.parse_statement(f"from warp import {names}\n"))
        return updated_node.with_changes(body=body)


class FromWarpImport(Transformation):
    NAME = "from-warp-import"
    FAMILY = "imports"
    DESCRIPTION = "`wp.kernel` and `wp.launch` come from `from warp import kernel, launch`."
    NOTHING_TO_REWRITE = "no file calls wp.kernel or wp.launch with the names kernel and launch free"
    EXAMPLES = (
        Example(
            before=(
                "import warp as wp\n\n\n@wp.kernel(enable_backward=False)\ndef k(a: wp.array(dtype=float)):\n"
                "    a[wp.tid()] = 1.0\n\n\nwp.launch(k, dim=1, inputs=[wp.zeros(1)])\n"
            ),
            after=(
                "import warp as wp\nfrom warp import kernel, launch\n\n\n@kernel(enable_backward=False)\n"
                "def k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n\nlaunch(k, dim=1, inputs=[wp.zeros(1)])\n"
            ),
        ),
        # `launch` is already a name of the file: it keeps wp.launch
        Example(
            before="import warp as wp\n\n\ndef launch(k):\n    wp.launch(k, dim=1)\n",
            after="import warp as wp\n\n\ndef launch(k):\n    wp.launch(k, dim=1)\n",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        text = module.code
        alias = module_level_warp_alias(text)
        if alias is None or not any(_is_warp_import(s, alias) for s in module.body):
            return None
        used = {
            node.attr
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == alias
        }
        names = [name for name in ("kernel", "launch") if name in used]
        if not names or names_in(text) & set(names):
            return None
        return module.visit(_ImportNames(alias, names))


class WarpImportedInSetup(Transformation):
    NAME = "import-warp-in-setup"
    FAMILY = "imports"
    DESCRIPTION = "The module-scope `import warp as wp` runs inside a setup function, called where it stood."
    NOTHING_TO_REWRITE = "no file imports Warp at module scope with `_import_warp` free"
    FUNCTION = "_import_warp"
    EXAMPLES = (
        Example(
            before="import numpy as np\nimport warp as wp\n\nwp.init()\n",
            after=(
                "import numpy as np\ndef _import_warp():\n    global wp\n    import warp as wp\n\n\n"
                "_import_warp()\n\nwp.init()\n"
            ),
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        text = module.code
        alias = module_level_warp_alias(text)
        if alias is None or self.FUNCTION in names_in(text):
            return None
        body: list[cst.CSTNode] = []
        for statement in module.body:
            if not _is_warp_import(statement, alias):
                body.append(statement)
                continue
            setup = cst.parse_module(
                f"def {self.FUNCTION}():\n    global {alias}\n    import warp as {alias}\n\n\n{self.FUNCTION}()\n"
            ).body
            body += [setup[0].with_changes(leading_lines=statement.leading_lines), *setup[1:]]
        return module.with_changes(body=body) if len(body) != len(module.body) else None


class ProjectImportedBeforeWarp(Transformation):
    NAME = "project-before-warp"
    FAMILY = "imports"
    DESCRIPTION = (
        "`import warp` moves below the project's own imports of its block, where each of those modules imports "
        "Warp itself (so Warp is first imported at the same moment)."
    )
    NOTHING_TO_REWRITE = "no import block imports Warp before a project module that imports Warp itself"
    EXAMPLES = (
        Example(
            path="pkg/__main__.py",
            before="import numpy as np\nimport warp as wp\n\nfrom pkg.sim import step\n\nstep()\n",
            after="import numpy as np\nfrom pkg.sim import step\nimport warp as wp\n\nstep()\n",
            others=(("pkg/sim.py", "import warp as wp\n\n\ndef step():\n    wp.init()\n"),),
        ),
        # a project module that does not import Warp itself may set what Warp reads when imported: Warp stays first
        Example(
            path="pkg/__main__.py",
            before="import warp as wp\n\nfrom pkg import env\n",
            after="import warp as wp\n\nfrom pkg import env\n",
            others=(("pkg/env.py", "import os\n\nos.environ['WARP_CACHE_PATH'] = '/tmp/c'\n"),),
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        body = list(module.body)
        start = next((i for i, s in enumerate(body) if _is_warp_import(s)), None)
        if start is None:
            return None
        last = start
        for i in range(start + 1, len(body)):
            statement = body[i]
            if not (isinstance(statement, cst.SimpleStatementLine) and _only_imports(statement)):
                break
            targets = _imported_files(statement, path, fixture)
            if targets is None:
                continue
            if not targets or not all(_imports_warp_at_module_scope(fixture.sources[t]) for t in targets):
                break
            last = i
        if last == start:
            return None
        warp = body.pop(start)
        following = body[start]
        body[start] = following.with_changes(leading_lines=warp.leading_lines)
        body.insert(last, warp.with_changes(leading_lines=()))
        return module.with_changes(body=body)


def _only_imports(statement: cst.SimpleStatementLine) -> bool:
    return all(isinstance(node, (cst.Import, cst.ImportFrom)) for node in statement.body)


def _imports_warp_at_module_scope(text: str) -> bool:
    return any(
        isinstance(node, ast.Import) and any(a.name == "warp" for a in node.names) for node in ast.parse(text).body
    )


def _imported_files(statement: cst.SimpleStatementLine, path: str, fixture: Fixture) -> list[str] | None:
    """The project files an import statement runs (None: it imports no project module at all)."""
    tree = ast.parse(cst.Module(body=[statement]).code).body[0]
    if isinstance(tree, ast.Import):
        modules = [a.name for a in tree.names]
    elif isinstance(tree, ast.ImportFrom):
        package = list(PurePosixPath(path).parent.parts)
        base = package[: len(package) - (tree.level - 1)] if tree.level else []
        module = ".".join([*base, *([tree.module] if tree.module else [])])
        submodules = [f"{module}.{a.name}" for a in tree.names if _file_of(f"{module}.{a.name}", fixture)]
        modules = submodules or [module]
    else:
        return None
    if not any(m.split(".")[0] in fixture.packages for m in modules):
        return None
    return [found for m in modules if (found := _file_of(m, fixture))]


def _file_of(module: str, fixture: Fixture) -> str | None:
    stem = module.replace(".", "/")
    return next((p for p in (f"{stem}.py", f"{stem}/__init__.py") if p in fixture.sources), None)


class InitImportsSubmodules(Transformation):
    """`pkg/__init__.py` ends by importing the package's sub-modules (`from . import a, b`), as many packages do
    for convenience, where the program imported each one explicitly: each is then created when the package is
    first imported, before any other of its importers' code runs.

    That moves the creation of those modules (their kernels, their Warp modules) earlier, which changes what the
    program means where something between the two moments reads it. The `__init__` of a package the command's
    module is in is never rewritten: it runs before the entry point's first line, so every module it created would
    be out of reach of a setting at the entry point, which config-after-import and unused-backward rightly
    decline then (`calibration_script` showed it: `beams/__init__` importing `beams.model` turns the consent fix
    `enable_backward = False` in `beams/__main__.py` into "created before the entry point ran"). The fixture is
    skipped when any project
    file writes Warp's config or the environment, or sets another module's options (`set_module_options(...,
    module=...)`): a config set after the package's import but before a sub-module's would now come after
    (config-after-import, dominant_module, composite, cache_discarded and the other fixtures whose `__main__`
    sets `wp.config`). Only sub-modules that the program imports anyway at module scope, from its entry point on,
    are added (an optional plugin imported inside a function stays lazy), and only those whose module-scope code
    does nothing but define and import (no call statement other than its own `set_module_options`)."""

    NAME = "init-imports-submodules"
    FAMILY = "imports"
    DESCRIPTION = (
        "The package `__init__` imports its sub-modules the program imports at module scope anyway, where the "
        "program imported each explicitly."
    )
    NOTHING_TO_REWRITE = (
        "no package __init__ outside the entry point's packages lacks an eagerly imported sub-module of its own"
    )
    EXAMPLES = (
        Example(
            path="pkg/ops/__init__.py",
            before='"""Image operations."""\n',
            after='"""Image operations."""\n\nfrom . import blur, gamma  # noqa: F401\n',
            others=(
                ("pkg/__init__.py", ""),
                ("pkg/__main__.py", "from pkg.ops.blur import run\n\nrun()\n"),
                ("pkg/ops/blur.py", "import warp as wp\n\nfrom pkg.ops import gamma\n\n\ndef run():\n    pass\n"),
                ("pkg/ops/gamma.py", "import warp as wp\n\nwp.set_module_options({'enable_backward': False})\n"),
                ("pkg/ops/plugin.py", "import warp as wp\n"),  # imported by no one at module scope: stays lazy
            ),
        ),
        # the package of the entry point: its `__init__` runs before the entry point's first line
        Example(
            path="pkg/__init__.py",
            before="",
            after="",
            others=(("pkg/__main__.py", "from pkg.sim import step\n\nstep()\n"), ("pkg/sim.py", "import warp\n")),
        ),
        # the entry point sets Warp's config between two imports of the package: the second must still follow it
        Example(
            path="pkg/ops/__init__.py",
            before="",
            after="",
            others=(
                ("pkg/__init__.py", ""),
                (
                    "pkg/__main__.py",
                    "import warp as wp\n\nimport pkg.ops.a\n\nwp.config.mode = 'debug'\nimport pkg.ops.b\n",
                ),
                ("pkg/ops/a.py", "def step():\n    pass\n"),
                ("pkg/ops/b.py", "def step():\n    pass\n"),
            ),
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        for path, text in fixture.sources.items():
            if _writes_config_or_environment(text):
                return Skip(f"{path} writes Warp's config, the environment or another module's options")
        return None

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        parts = PurePosixPath(path).parts
        if parts[-1] != "__init__.py" or len(parts) < 2 or path in _entry_files(fixture):
            return None
        package = "/".join(parts[:-1])
        eager = _eagerly_imported(fixture)
        already = _module_scope_imports(module.code, path, fixture)
        submodules = sorted(
            stem
            for file in eager
            if (stem := _submodule_of(file, package)) is not None
            and file not in already
            and _only_defines(fixture.sources[file])
        )
        if not submodules:
            return None
        statement = cst.parse_statement(f"from . import {', '.join(submodules)}  # noqa: F401\n")
        if module.body:
            statement = statement.with_changes(leading_lines=(cst.EmptyLine(),))
        return module.with_changes(body=[*module.body, statement])


def _submodule_of(file: str, package: str) -> str | None:
    """`x` for `pkg/x.py` or `pkg/x/__init__.py` of the package folder `pkg` (not its `__init__` or `__main__`)."""
    inner = PurePosixPath(file).relative_to(package).parts if file.startswith(f"{package}/") else ()
    if len(inner) == 1 and inner[0] not in ("__init__.py", "__main__.py"):
        return PurePosixPath(inner[0]).stem
    if len(inner) == 2 and inner[1] == "__init__.py":
        return inner[0]
    return None


def _entry_files(fixture: Fixture) -> list[str]:
    """The files the command runs first: its module and the packages above it, or its script."""
    if fixture.command[1] != "-m":
        return [fixture.command[1]] if fixture.command[1] in fixture.sources else []
    dotted = fixture.command[2].split(".")
    found = [f"{'/'.join(dotted[:n])}/__init__.py" for n in range(1, len(dotted) + 1)]
    found.append(f"{'/'.join(dotted)}/__main__.py")
    found.append(f"{'/'.join(dotted)}.py")
    return [path for path in found if path in fixture.sources]


def _eagerly_imported(fixture: Fixture) -> set[str]:
    """The project files imported at module scope from the entry point on (a module-scope import of a file
    imported so, or of the packages above it)."""
    eager: set[str] = set()
    todo = _entry_files(fixture)
    while todo:
        path = todo.pop()
        if path in eager:
            continue
        eager.add(path)
        todo += _module_scope_imports(fixture.sources[path], path, fixture)
    return eager


def _module_scope_imports(text: str, path: str, fixture: Fixture) -> list[str]:
    """The project files a file's top-level import statements run, the packages above each one included."""
    found: list[str] = []
    for statement in cst.parse_module(text).body:
        if isinstance(statement, cst.SimpleStatementLine) and _only_imports(statement):
            for target in _imported_files(statement, path, fixture) or []:
                parts = PurePosixPath(target).parts
                packages = [f"{'/'.join(parts[:n])}/__init__.py" for n in range(1, len(parts))]
                found += [p for p in packages if p in fixture.sources and p != target] + [target]
    return found


def _only_defines(text: str) -> bool:
    """Module-scope code that only imports, defines and assigns (its own `set_module_options` aside): importing
    it earlier does nothing anything else could see."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if not (isinstance(func, ast.Attribute) and func.attr == "set_module_options"):
                return False
        elif (isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant)) or isinstance(
            node, (ast.For, ast.While, ast.With, ast.If, ast.Try)
        ):
            return False
    return True


def _writes_config_or_environment(text: str) -> bool:
    for node in ast.walk(ast.parse(text)):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        for target in targets:
            written = target.value if isinstance(target, (ast.Attribute, ast.Subscript)) else None
            if isinstance(written, ast.Attribute) and written.attr in ("config", "environ"):
                return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("putenv", "setdefault") and isinstance(func, ast.Attribute) and _names_environ(func.value):
                return True
            if name == "set_module_options" and (len(node.args) > 1 or any(k.arg == "module" for k in node.keywords)):
                return True
            if name == "update" and isinstance(func, ast.Attribute) and _names_environ(func.value):
                return True
    return False


def _names_environ(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        or isinstance(node, ast.Name)
        and node.id == "environ"
    )
