"""Which of the project's names a file reads as values: stored, passed on, returned, put in a container.

A launch whose kernel the scan cannot name (`wp.launch(self.kernel, ...)`, `wp.launch(TABLE[key], ...)`) launches a
kernel object that some code handled as a value before: `self.kernel = integrate`, `TABLE = {2: gather_2d}`, a
factory's `return`. A kernel whose name is only ever the kernel of a launch (`wp.launch(integrate, ...)`,
`wp.launch(kernel=integrate, ...)`) or called never reaches such a launch. The tape walk
(`warp_fix.scan.differentiation`) bounds an unknown launch by these reads:

    TABLE = {2: gather_2d}            # ValueRead `pkg.kernels.gather_2d`
    wp.launch(scatter, dim=n)         # nothing: the kernel of a launch
    self.step_kernel = kernels.step   # ValueRead `pkg.kernels.step` (`kernels` imported from `pkg`)

A name bound in a function other than by an import is a local value (it came from an earlier read), and an
attribute of an object other than a module is one stored there (by an earlier read): neither is recorded.
"""

from __future__ import annotations

import ast

from ..index import ValueRead, absolute_module_name
from ..names import dotted_name
from ..receivers import Receivers
from .base import Collector


class ValueReadCollector(Collector):
    """One `ValueRead` per project name the file reads as a value, at its first such read."""

    NODE_TYPES = (ast.Name, ast.Attribute)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._read: dict[str, ast.AST] = {}
        self._top: dict[str, list[str]] | None = None
        self._importing: frozenset[str] | None = None

    def visit(self, node: ast.AST) -> None:
        assert isinstance(node, ast.Name | ast.Attribute)
        if not isinstance(node.ctx, ast.Load):
            return
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or not self._may_name_the_project(root.id) or not self._as_value(node):
            return
        dotted = dotted_name(node)
        if dotted is None:
            return
        first, _, rest = dotted.partition(".")
        for target in self._targets(first, node):
            read = f"{target}.{rest}" if rest else target
            if read.split(".", 1)[0] in self.parsed.info.project_names:
                self._read.setdefault(read, node)

    def _as_value(self, node: ast.Name | ast.Attribute) -> bool:
        """Read as a value: not called, not the start of a longer name or a subscript, not a launch's kernel."""
        parent = self.parsed.parent_of(node)
        if isinstance(parent, ast.Attribute | ast.Subscript) and parent.value is node:
            return False
        if isinstance(parent, ast.Call):
            if parent.func is node:
                return False
            return not (parent.args and parent.args[0] is node and self.parsed.launch_kind(parent))
        if isinstance(parent, ast.keyword) and parent.arg == "kernel":
            call = self.parsed.parent_of(parent)
            return not (isinstance(call, ast.Call) and self.parsed.launch_kind(call))
        return True

    def _may_name_the_project(self, name: str) -> bool:
        """Only a name an import of the file binds to the project's code (or one a project `*` import may bind, or a
        module-scope definition) can stand for a project name: the other names (locals, `np`, `wp`) are passed
        over before anything else is asked of them."""
        if self._importing is None:
            project = self.parsed.info.project_names
            bound: set[str] = set()
            for statement in self.parsed.nodes:
                if isinstance(statement, ast.Import | ast.ImportFrom):
                    for alias in statement.names:
                        local = alias.asname or alias.name.split(".")[0]
                        if any(target.split(".", 1)[0] in project for target in self._imported(statement, local)):
                            bound.add(local)
            for top, targets in self._top_level().items():
                if any(target.split(".", 1)[0] in project for target in targets):
                    bound.add(top)
            self._importing = frozenset(bound)
        return name in self._importing or "*" in self._importing

    def _targets(self, name: str, at: ast.AST) -> list[str]:
        """What `name` stands for at `at`: the imports that bind it in the nearest function binding it (a local
        value: nothing), else the module's top-level bindings, else `module.name` for each `*` import."""
        receivers = Receivers.of(self.parsed)
        function = self.parsed.innermost_function(at)
        while function is not None:
            bindings = [b for b in receivers.names_bound(function).get(name, [])
                        if self.parsed.innermost_function(b) is function]
            if any(isinstance(b, ast.Global) for b in bindings):
                break
            bindings = [b for b in bindings if not isinstance(b, ast.Nonlocal)]
            if bindings:
                if not all(isinstance(b, ast.Import | ast.ImportFrom) for b in bindings):
                    return []
                return [target for b in bindings for target in self._imported(b, name)]  # type: ignore[arg-type]
            function = self.parsed.innermost_function(function)
        top = self._top_level()
        if name in top:
            return [target for target in top[name] if target]
        return [f"{module}.{name}" for module in top.get("*", [])]

    def _imported(self, statement: ast.Import | ast.ImportFrom, name: str) -> list[str]:
        info = self.parsed.info
        if isinstance(statement, ast.Import):
            return [a.name if a.asname else a.name.split(".")[0] for a in statement.names
                    if (a.asname or a.name.split(".")[0]) == name]
        written = "." * statement.level + (statement.module or "")
        module = absolute_module_name(written, info.python_module, info.file.endswith("__init__.py"))
        return [f"{module}.{a.name}" for a in statement.names if (a.asname or a.name) == name]

    def _top_level(self) -> dict[str, list[str]]:
        if self._top is None:
            self._top = {}
            for bound in self.parsed.top_level_names():
                self._top.setdefault(bound.name, []).append(bound.target)
        return self._top

    def finish(self) -> None:
        for target, node in self._read.items():
            self.found.value_reads.append(ValueRead(**self.parsed.located(node), target=target))

