"""The layout family: where things sit in the repository, the program's code and what it runs unchanged."""

from __future__ import annotations

import ast
import sys
from pathlib import PurePosixPath

import libcst as cst

from tests.variants.transform import Example, Fixture, LineMap, Skip, Transformation, Variant

SITE_PACKAGES = f".venv/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


class InRepoVirtualenv(Transformation):
    """A `.venv` inside the repository with a copy of the project's own package installed in it (as `pip install
    .` leaves one). The command runs the checkout's package (the current directory comes first on sys.path), so
    the copy never runs: it is code of the repository's folder that is not the project's."""

    NAME = "in-repo-venv"
    FAMILY = "layout"
    DESCRIPTION = "A `.venv/` in the repository holds an installed copy of the project's package."
    EXAMPLES = (
        Example(
            path="pkg/sim.py",
            before="import warp as wp\n",
            after="import warp as wp\n",  # the project's files are unchanged; the copy is new
            added=(".venv/pyvenv.cfg", f"{SITE_PACKAGES}/pkg/sim.py"),
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        if fixture.command[1] != "-m":
            return Skip("a script's folder, not the repository's, is first on sys.path: a copy could be imported")
        if (fixture.root / ".venv").exists():
            return Skip("the fixture has a .venv already")
        return None

    def apply(self, fixture: Fixture) -> Variant | Skip:
        skip = self.precondition(fixture)
        if skip is not None:
            return skip
        package = fixture.command[2].split(".")[0]
        copies = {
            f"{SITE_PACKAGES}/{path}": text
            for path, text in fixture.sources.items()
            if PurePosixPath(path).parts[0] == package
        }
        config = f"home = /usr/bin\ninclude-system-site-packages = false\nversion = {sys.version.split()[0]}\n"
        installed = {".venv/pyvenv.cfg": config, **copies}
        files = {**fixture.sources, **installed}
        return Variant(
            fixture,
            self.NAME,
            files,
            origin={path: path for path in fixture.sources},
            line_maps={path: LineMap.between(text, text) for path, text in fixture.sources.items()},
        )


class SrcLayout(Transformation):
    """The package moves under `src/`, as a project laid out for packaging has it; the run finds it on
    PYTHONPATH, where installing the project (editable or not) would put it. Module names do not change."""

    NAME = "src-layout"
    FAMILY = "layout"
    DESCRIPTION = "The package `pkg/` moves to `src/pkg/`; `src` is on the run's PYTHONPATH."
    EXAMPLES = (
        Example(
            path="pkg/__main__.py",
            before="from pkg.sim import step\n\nstep()\n",
            after="from pkg.sim import step\n\nstep()\n",  # the files are the same, in another place
            others=(("pkg/sim.py", "def step():\n    pass\n"),),
            added=("src/pkg/__main__.py", "src/pkg/sim.py"),
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        if fixture.command[1] != "-m":
            return Skip("the command runs a script by its path")
        if any(PurePosixPath(path).parts[0] == "src" for path in fixture.every_python_file):
            return Skip("the fixture has a src/ folder already")
        return None

    def apply(self, fixture: Fixture) -> Variant | Skip:
        skip = self.precondition(fixture)
        if skip is not None:
            return skip
        package = fixture.command[2].split(".")[0]
        moved = {path: f"src/{path}" if PurePosixPath(path).parts[0] == package else path for path in fixture.sources}
        return Variant(
            fixture,
            self.NAME,
            files={moved[path]: text for path, text in fixture.sources.items()},
            origin={new: old for old, new in moved.items()},
            line_maps={moved[path]: LineMap.between(text, text) for path, text in fixture.sources.items()},
            python_path=("src",),
        )


class PrivateSubPackage(Transformation):
    """The package's modules move into a private sub-package, `pkg/x.py` to `pkg/_src/x.py`, and `pkg/x.py`
    re-exports every module-scope name of it (as JAX or Newton lay out their code). The functions, classes and
    kernels are the same objects; their module's name is `pkg._src.x`, which the verdict and the behaviour check
    read back as `pkg.x` (`Variant.names` maps the prefix `pkg._src.`, so a module a fix would add beside them,
    `pkg._src.kernels`, reads `pkg.kernels`).

    A module stays where it is when moving it changes what the program does: it reads `__file__` (a path next to
    it); a string is its name (`set_module_options(module="pkg.x")`, `import_module`); another file assigns one of
    its attributes or reads a name it rebinds with `global` (the re-export holds a copy); it is the command's
    module. Its relative imports become absolute (they would resolve under `_src`)."""

    NAME = "private-sub-package"
    FAMILY = "layout"
    DESCRIPTION = "`pkg/x.py` moves to `pkg/_src/x.py`; `pkg/x.py` re-exports its names."
    NOTHING_TO_REWRITE = "no module of a package can move without changing what it does"
    PRIVATE = "_src"
    EXAMPLES = (
        Example(
            path="pkg/sim.py",
            before="import warp as wp\n\nfrom .kernels import k\n\n\ndef step():\n    wp.launch(k, dim=1)\n",
            after='"""Re-exports pkg._src.sim."""\n\nfrom pkg._src.sim import k, step, wp  # noqa: F401\n',
            others=(("pkg/__init__.py", ""), ("pkg/__main__.py", "from pkg.sim import step\n\nstep()\n")),
            added=("pkg/_src/__init__.py", "pkg/_src/sim.py"),
        ),
        # a module that finds its data next to it stays
        Example(
            path="pkg/data.py",
            before="from pathlib import Path\n\nTABLE = Path(__file__).parent / 'table.csv'\n",
            after="from pathlib import Path\n\nTABLE = Path(__file__).parent / 'table.csv'\n",
            others=(("pkg/__init__.py", ""),),
        ),
    )

    def apply(self, fixture: Fixture) -> Variant | Skip:
        moving = [path for path in fixture.sources if self._movable(path, fixture)]
        if not moving:
            return Skip(self.NOTHING_TO_REWRITE)
        files, origin, line_maps, names = dict(fixture.sources), {}, {}, {}
        for path in fixture.sources:
            origin[path] = path
            line_maps[path] = LineMap.between(fixture.sources[path], fixture.sources[path])
        for path in moving:
            package, stem = PurePosixPath(path).parent, PurePosixPath(path).stem
            moved = f"{package}/{self.PRIVATE}/{stem}.py"
            text = _absolute_imports(fixture.sources[path], package.as_posix())
            public, private = f"{package.as_posix().replace('/', '.')}.{stem}", f"{package}.{self.PRIVATE}.{stem}"
            private = private.replace("/", ".")
            exported = ", ".join(sorted(_module_scope_names(text)))
            files[path] = f'"""Re-exports {private}."""\n\nfrom {private} import {exported}  # noqa: F401\n'
            files[moved] = text
            files.setdefault(f"{package}/{self.PRIVATE}/__init__.py", "")
            origin[moved] = path
            line_maps[path] = LineMap()
            line_maps[moved] = LineMap.between(fixture.sources[path], text)
            names[f"{private.removesuffix(stem)}"] = f"{public.removesuffix(stem)}"  # `pkg._src.` -> `pkg.`
        return Variant(fixture, self.NAME, files, origin, line_maps, names=names)

    def _movable(self, path: str, fixture: Fixture) -> bool:
        parts = PurePosixPath(path).parts
        if (
            len(parts) != 2
            or parts[1] in ("__init__.py", "__main__.py")
            or f"{parts[0]}/__init__.py" not in fixture.sources
        ):
            return False
        if any(PurePosixPath(p).parts[:2] == (parts[0], self.PRIVATE) for p in fixture.every_python_file):
            return False
        module = f"{parts[0]}.{PurePosixPath(path).stem}"
        command = fixture.command[2] if fixture.command[1] == "-m" else ""
        text = fixture.sources[path]
        tree = ast.parse(text)
        if command == module or any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(tree)):
            return False
        rebound = {name for n in ast.walk(tree) if isinstance(n, ast.Global) for name in n.names}
        for other, other_text in fixture.every_python_file.items():
            for node in ast.walk(ast.parse(other_text)):
                if isinstance(node, ast.Constant) and node.value == module:
                    return False
                stem = PurePosixPath(path).stem
                assigned = isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                if assigned and isinstance(node.value, ast.Name) and node.value.id == stem and other != path:
                    return False
                if other != path and (
                    (isinstance(node, ast.Attribute) and node.attr in rebound)
                    or (isinstance(node, ast.alias) and node.name in rebound)
                ):
                    return False
        return True


def _module_scope_names(text: str) -> set[str]:
    """The names a module binds at its top level (dunders aside): what a re-export of it must import."""
    found: set[str] = set()

    def bind(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)  # its body is a scope of its own
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for child in ast.iter_child_nodes(node):
                bind(child)

    bind(ast.parse(text))
    return {name for name in found if not (name.startswith("__") and name.endswith("__"))}


def _absolute_imports(text: str, package: str) -> str:
    """The module's relative imports written absolute, as seen from `package` (its folder)."""
    module = cst.parse_module(text)

    class Absolute(cst.CSTTransformer):
        def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
            if not original_node.relative:
                return updated_node
            parts = package.split("/")
            base = parts[: len(parts) - (len(original_node.relative) - 1)]
            inner = cst.Module(body=[]).code_for_node(original_node.module) if original_node.module else ""
            dotted = ".".join([*base, *([inner] if inner else [])])
            return updated_node.with_changes(relative=(), module=cst.parse_expression(dotted))

    return module.visit(Absolute()).code


class VendoredCopy(Transformation):
    """A `third_party/` folder in the repository holds a copy of the project's package and of the packages it
    uses as installed ones (a vendored snapshot, as projects keep of a dependency or of their own last release).
    Nothing puts `third_party/` on sys.path, so the run never imports the copy; fixes must leave it alone."""

    NAME = "vendored-copy"
    FAMILY = "layout"
    DESCRIPTION = "`third_party/` holds a copy of the project's package and its vendored packages, never imported."
    FOLDER = "third_party"
    EXAMPLES = (
        Example(
            path="pkg/sim.py",
            before="import warp as wp\n",
            after="import warp as wp\n",  # the project's files are unchanged; the copy is new
            added=("third_party/pkg/sim.py",),
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        if any(PurePosixPath(path).parts[0] == self.FOLDER for path in fixture.every_python_file):
            return Skip(f"the fixture has a {self.FOLDER}/ folder already")
        if any("sys.path" in text for text in fixture.every_python_file.values()):
            return Skip("a file changes sys.path: the copy could be imported")
        return None

    def apply(self, fixture: Fixture) -> Variant | Skip:
        skip = self.precondition(fixture)
        if skip is not None:
            return skip
        copied = {
            f"{self.FOLDER}/{path.removeprefix('vendor/')}": text
            for path, text in fixture.every_python_file.items()
            if PurePosixPath(path).parts[0] != "tests" and len(PurePosixPath(path).parts) > 1
        }
        return Variant(
            fixture,
            self.NAME,
            {**fixture.sources, **copied},
            origin={path: path for path in fixture.sources},
            line_maps={path: LineMap.between(text, text) for path, text in fixture.sources.items()},
        )
