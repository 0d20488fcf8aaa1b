"""kernels_to_module_scope: move a kernel out of its factory function to module scope (CS-1, CS-9)."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst
from libcst.metadata import FunctionScope, GlobalScope, Scope, ScopeProvider

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    decorator_module,
    find_functions,
    is_string,
    kernel_decorator,
    keyword,
    string_arg,
    with_keyword,
)
from ._partial import Focus
from .specs import KernelsToModuleScopeArgs

_WORD = re.compile(r"\w+")
#: docstring wording of a lazy kernel wrapper ("Built on first use.", "compiled lazily", ...)
_LAZY = re.compile(r"\bfirst (use|call)\b|\blazil?y\b|\bon demand\b|\bwhen first\b", re.IGNORECASE)


class _Nodes(cst.CSTVisitor):
    def __init__(self) -> None:
        self.ids: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.ids.add(id(node))
        return True


def _node_ids(*nodes: cst.CSTNode | None) -> set[int]:
    collector = _Nodes()
    for node in nodes:
        if node is not None:
            node.visit(collector)
    return collector.ids


EROSION_BEFORE = '''\
"""Terrain erosion passes."""

import functools

import numpy as np
import warp

from terrain.grid import Heightfield

TALUS = 0.05


@functools.cache
def thermal_kernel():
    """The thermal weathering kernel, built once."""

    @warp.kernel(module="unique")
    def thermal_step(src: warp.array(dtype=float), dst: warp.array(dtype=float)):
        i = warp.tid()
        dst[i] = warp.min(src[i], TALUS)

    return thermal_step


def erode(field: Heightfield, steps: int = 10) -> np.ndarray:
    """Apply `steps` thermal passes to `field`."""
    for _ in range(steps):
        warp.launch(thermal_kernel(), dim=field.size, inputs=[field.heights, field.scratch])
        field.swap()
    return field.heights.numpy()
'''
EROSION_AFTER = '''\
"""Terrain erosion passes."""

import functools

import numpy as np
import warp

from terrain.grid import Heightfield

TALUS = 0.05


@warp.kernel(module="terrain.erosion")
def thermal_step(src: warp.array(dtype=float), dst: warp.array(dtype=float)):
    i = warp.tid()
    dst[i] = warp.min(src[i], TALUS)


@functools.cache
def thermal_kernel():
    """The thermal weathering kernel, built once."""

    return thermal_step


def erode(field: Heightfield, steps: int = 10) -> np.ndarray:
    """Apply `steps` thermal passes to `field`."""
    for _ in range(steps):
        warp.launch(thermal_kernel(), dim=field.size, inputs=[field.heights, field.scratch])
        field.swap()
    return field.heights.numpy()
'''


class KernelsToModuleScope(WarpCodemod):
    """Moves kernels defined inside a factory function to module scope, so they exist (and join their
    module) at import, before the first load, instead of being added per call after it.

    Each kernel lands right before the top-level statement that holds the factory; the factory
    then returns (or otherwise uses) the module-level kernel. Decorator arguments, docstring,
    comments and the function name are kept. `module="unique"`, or `module=<factory parameter>`,
    becomes `module="<module>"` when `module` is given.

    The kernel def may sit directly in the factory body or inside its if/elif/else, try/except/
    else/finally, with or match blocks (the lazy singleton: `if _k is None: <def k> ; _k = k`); it
    leaves its block (an emptied block gets `pass`) and the factory's uses of the name then read the
    module-level kernel. Its def then runs at import, outside those blocks: unconditionally, and not
    under the `with`'s context or the `try`'s handlers.

    Refuses when a kernel reads a parameter or local of the factory (or of an enclosing function),
    except a factory parameter used only as the decorator's `module=` value when `module` is given;
    when a name the decorator or annotations need at definition time is defined only after the
    factory; when the def is inside a `for`/`while` loop (each iteration may define it with other
    captures); when the kernel's name is bound at module scope (a def, assignment, import, or
    `global` assignment elsewhere), assigned elsewhere in the factory or an enclosing function
    (more than one def of it included), or declared `nonlocal` there; when `module_options` would
    end up without `module="unique"`.
    """

    NAME = "kernels_to_module_scope"
    ARGS_TYPE = KernelsToModuleScopeArgs
    DESCRIPTION = "Move kernels defined in a factory function to module scope; the factory returns them."
    EXAMPLES = (
        Example(
            title="factory that defaults to a unique module",
            args={"file": "sim.py", "factory": "make_integrate", "kernels": ["integrate"], "module": "sim"},
            before=(
                "import warp as wp\n\nDT = 0.1\n\n\n"
                'def make_integrate(module="unique"):\n'
                "    # explicit Euler\n"
                "    @wp.kernel(enable_backward=False, module=module)\n"
                "    def integrate(x: wp.array(dtype=float)):\n"
                '        """x += DT"""\n'
                "        tid = wp.tid()  # one thread per element\n"
                "        x[tid] = x[tid] + DT\n\n"
                "    return integrate\n"
            ),
            after=(
                "import warp as wp\n\nDT = 0.1\n\n\n"
                "# explicit Euler\n"
                '@wp.kernel(enable_backward=False, module="sim")\n'
                "def integrate(x: wp.array(dtype=float)):\n"
                '    """x += DT"""\n'
                "    tid = wp.tid()  # one thread per element\n"
                "    x[tid] = x[tid] + DT\n\n\n"
                'def make_integrate(module="unique"):\n'
                "    return integrate\n"
            ),
            notes=("make_integrate(): parameter `module` is no longer used (kept: callers may still pass it)",),
        ),
        Example(
            title="lazy singleton: the kernel is built on first use",
            args={"file": "erosion.py", "factory": "thermal_kernel", "kernels": ["thermal_step"]},
            before=(
                "import warp as wp\n\n_thermal = None\n\n\n"
                "def thermal_kernel():\n"
                '    """Built on first use."""\n'
                "    global _thermal\n"
                "    if _thermal is None:\n\n"
                "        # one step of thermal weathering\n"
                "        @wp.kernel\n"
                "        def thermal_step(src: wp.array(dtype=float), talus: float, dst: wp.array(dtype=float)):\n"
                "            i = wp.tid()\n"
                "            dst[i] = wp.min(src[i], talus)\n\n"
                "        _thermal = thermal_step\n"
                "    return _thermal\n"
            ),
            after=(
                "import warp as wp\n\n_thermal = None\n\n\n"
                "# one step of thermal weathering\n"
                "@wp.kernel\n"
                "def thermal_step(src: wp.array(dtype=float), talus: float, dst: wp.array(dtype=float)):\n"
                "    i = wp.tid()\n"
                "    dst[i] = wp.min(src[i], talus)\n\n\n"
                "def thermal_kernel():\n"
                '    """Built on first use."""\n'
                "    global _thermal\n"
                "    if _thermal is None:\n"
                "        _thermal = thermal_step\n"
                "    return _thermal\n"
            ),
            notes=("thermal_kernel(): docstring says 'Built on first use.'; its kernels are now defined at import",),
        ),
        Example(
            title="a project's cached factory: its `import warp`, a first-party import",
            args={
                "file": "terrain/erosion.py",
                "factory": "thermal_kernel",
                "kernels": ["thermal_step"],
                "module": "terrain.erosion",
            },
            before=EROSION_BEFORE,
            after=EROSION_AFTER,
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make_all(n):\n    kernels = []\n    for i in range(n):\n\n"
                "        @wp.kernel\n        def k(x: wp.array(dtype=float)):\n            x[0] = 1.0\n\n"
                "        kernels.append(k)\n    return kernels\n"
            ),
            args={"factory": "make_all", "kernels": ["k"]},
            reason="inside a `for` loop",
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make():\n    try:\n\n        @wp.kernel\n"
                "        def k(x: wp.array(dtype=float)):\n            x[0] = 1.0\n\n"
                "    except RuntimeError:\n        k = None\n    return k\n"
            ),
            args={"factory": "make", "kernels": ["k"]},
            reason="also assigns 'k'",
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make(scale):\n    @wp.kernel\n"
                "    def k(x: wp.array(dtype=float)):\n        x[0] = scale\n\n    return k\n"
            ),
            args={"factory": "make", "kernels": ["k"]},
            reason="captures 'scale'",
        ),
        Refusal(
            before=(
                "import warp as wp\n\n\ndef make(module='unique'):\n    @wp.kernel(module=module)\n"
                "    def k(x: wp.array(dtype=float)):\n        x[0] = 1.0\n\n    return k\n"
            ),
            args={"factory": "make", "kernels": ["k"]},
            reason="give `module`",
        ),
    )

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        """Also the module-scope bindings of names the factory uses (see `_ScopeAnalysis`)."""
        return Focus.of(kwargs, bindings=True)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        functions = find_functions(tree)
        factories = [f for f in functions if f.node.name.value == self.args["factory"]]
        if len(factories) != 1:
            raise self.refuse(f"expected one function named {self.args['factory']!r}, found {len(factories)}")
        factory = factories[0]
        if not isinstance(factory.node.body, cst.IndentedBlock):
            raise self.refuse(f"{self.args['factory']}() has no indented body")
        top_level = {s.name.value for s in tree.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}

        found: dict[str, list[tuple[cst.FunctionDef, str | None]]] = {}
        _find_defs(factory.node.body, set(self.args["kernels"]), None, found)
        kernels = [d for name in self.args["kernels"] for d, _ in found.get(name, [])]
        self._scopes = _ScopeAnalysis(self, tree, factory.top, kernels, warp)
        moved: list[cst.FunctionDef] = []
        originals: set[int] = set()
        for name in self.args["kernels"]:
            defs = found.get(name, [])
            if not defs:
                if name in top_level:
                    continue  # already at module scope
                raise self.refuse(f"no kernel def {name!r} in {self.args['factory']}()")
            kernel, loop = defs[0]
            if loop is not None:
                raise self.refuse(
                    f"{name}() is defined inside a `{loop}` loop of {self.args['factory']}(): "
                    "each iteration may define it with other captures"
                )
            if len(defs) > 1:
                raise self.refuse(f"{self.args['factory']}() defines {name!r} {len(defs)} times")
            if name in top_level:
                raise self.refuse(f"module scope already defines {name!r}")
            if kernel_decorator(kernel, warp) is None:
                raise self.refuse(f"{name}() is not decorated with wp.kernel")
            self._check_name_is_free(kernel, factory.node)
            moved.append(self._module_level_kernel(kernel, factory.node, factory.top, warp))
            originals.add(id(kernel))
        if not moved:
            return tree

        new_factory = factory.node.with_changes(body=_without(factory.node.body, originals))
        self._note_leftovers(factory.node, new_factory)

        module_body: list[cst.BaseStatement] = []
        for stmt in tree.body:
            if stmt is factory.top:
                module_body += moved
                stmt = new_factory if stmt is factory.node else stmt
            module_body.append(stmt)
        tree = tree.with_changes(body=module_body)
        if factory.top is not factory.node:
            from ._cst import replace_nodes

            tree = replace_nodes(tree, {factory.node: new_factory})
        return tree

    def _note_leftovers(self, old: cst.FunctionDef, new: cst.FunctionDef) -> None:
        """Reports what the move made stale in the factory: parameters only the kernels used (kept, since
        callers may pass them) and a docstring that still says the kernel is built lazily."""
        old_words = set(_WORD.findall(code(old.body)))
        new_words = set(_WORD.findall(code(new.body)))
        for param in _all_params(new.params):
            name = param.name.value
            if name in old_words and name not in new_words:
                self.note(
                    "unused-parameter",
                    f"{new.name.value}(): parameter `{name}` is no longer used (kept: callers may still pass it)",
                )
        docstring = new.get_docstring()
        if docstring and _LAZY.search(docstring):
            first = docstring.strip().splitlines()[0]
            self.note(
                "stale-docstring",
                f"{new.name.value}(): docstring says {first!r}; its kernels are now defined at import",
                new.name.value,
            )

    def _check_name_is_free(self, kernel: cst.FunctionDef, factory: cst.FunctionDef) -> None:
        """After the move, the factory's uses of the kernel's name must resolve to the module-level
        kernel: nothing else may bind that name in the factory, an enclosing function or at module scope."""
        name = kernel.name.value
        kernel_ids = _node_ids(kernel)
        if _declares_nonlocal(factory, name):
            raise self.refuse(f"{factory.name.value}() (or a function in it) declares {name!r} nonlocal")
        factory_scope = self._scopes.scopes()[factory.body.body[0]]  # type: ignore[index]
        scope: Scope = factory_scope
        while True:
            others = [a for a in scope.assignments[name] if id(a.node) not in kernel_ids]
            if others and isinstance(scope, GlobalScope):
                raise self.refuse(f"module scope already binds {name!r}")
            if others and isinstance(scope, FunctionScope):
                where = f"{factory.name.value}()" if scope is factory_scope else "an enclosing function"
                raise self.refuse(f"{where} also assigns {name!r}; only the kernel def may bind it")
            if isinstance(scope, GlobalScope):
                return
            scope = scope.parent

    def _module_level_kernel(
        self, kernel: cst.FunctionDef, factory: cst.FunctionDef, top: cst.BaseStatement, warp: WarpImports
    ) -> cst.FunctionDef:
        name = kernel.name.value
        decorator = kernel_decorator(kernel, warp)
        assert decorator is not None
        module_value = decorator_module(decorator)
        module_ids = _node_ids(module_value)
        kernel_ids = _node_ids(kernel)
        param_names = {p.name.value for p in _all_params(factory.params)}

        scopes = self._scopes.scopes()
        factory_scope = scopes[factory.body.body[0]]  # type: ignore[index]
        enclosing: list[Scope] = []
        scope: Scope | None = factory_scope
        while isinstance(scope, FunctionScope):
            enclosing.append(scope)
            scope = scope.parent
        for scope in enclosing:
            for assignment in scope.assignments:
                if assignment.name == name:
                    continue
                for access in assignment.references:
                    if id(access.node) not in kernel_ids:
                        continue
                    in_module_arg = id(access.node) in module_ids
                    if in_module_arg and scope is factory_scope and assignment.name in param_names:
                        if self.args["module"] is None:
                            raise self.refuse(
                                f"{name}(): decorator module={assignment.name} is a factory parameter; "
                                "give `module` to name the module"
                            )
                        continue
                    raise self.refuse(
                        f"{name}() captures {assignment.name!r} from {factory.name.value}(); "
                        "it is made per call and cannot move to module scope"
                    )
        self._check_definition_time_names(kernel, decorator, top, scopes)

        new_decorator = decorator
        module = self.args["module"]
        replace = module is not None and (
            is_string(module_value, "unique") or isinstance(module_value, cst.Name)
        )
        if replace:
            assert isinstance(decorator.decorator, cst.Call)
            if keyword(decorator.decorator, "module_options") is not None:
                raise self.refuse(f'{name}(): module_options is only accepted with module="unique"')
            new_decorator = decorator.with_changes(
                decorator=with_keyword(decorator.decorator, "module", string_arg(module))
            )
        decorators = [new_decorator if d is decorator else d for d in kernel.decorators]
        comments = [ln for ln in kernel.leading_lines if ln.comment is not None]
        return kernel.with_changes(decorators=decorators, leading_lines=[cst.EmptyLine()] * 2 + comments)

    def _check_definition_time_names(self, kernel, decorator, top, scopes) -> None:  # noqa: ANN001
        """Decorator, annotations and defaults run at `def` time: their module-level names must exist
        before the factory's position."""
        positions = self._scopes
        limit = positions[top].start.line
        eager = [decorator, *[p.annotation for p in _all_params(kernel.params)]]
        eager += [p.default for p in _all_params(kernel.params)]
        eager_ids = _node_ids(*eager)
        global_scope = next((s for s in scopes.values() if isinstance(s, GlobalScope)), None)
        if global_scope is None:
            return
        for assignment in global_scope.assignments:
            if not isinstance(assignment.node, cst.CSTNode):
                continue
            if not any(id(a.node) in eager_ids for a in assignment.references):
                continue
            defined = [
                positions[a.node].start.line
                for a in global_scope.assignments[assignment.name]
                if isinstance(a.node, cst.CSTNode) and a.node in positions
            ]
            if defined and min(defined) >= limit:
                raise self.refuse(
                    f"{kernel.name.value}() needs {assignment.name!r} at definition time, "
                    f"but it is defined after {code(top.name) if hasattr(top, 'name') else 'the factory'}"
                )


class _ScopeAnalysis:
    """ScopeProvider (and positions) over the part of the file that decides the checks, not all of it.

    The checks look at the scopes of the factory and its enclosing functions (all inside the
    top-level statement holding the factory) and at module-scope bindings of the names the kernels'
    decorators, annotations and defaults read. A top-level statement that cannot bind one of those
    names at module scope changes neither, so the analysis runs on a module of the factory's
    statement plus every statement that might bind such a name: any statement mentioning one,
    except a def/class whose own name is not one of them (its body binds in its own scope) unless
    it has `global`, `:=` or type parameters. Positions are those of the whole file.
    """

    def __init__(
        self,
        command: KernelsToModuleScope,
        tree: cst.Module,
        top: cst.BaseStatement,
        kernels: list[cst.FunctionDef],
        warp: WarpImports,
    ) -> None:
        self.command, self.tree, self.top, self.kernels, self.warp = command, tree, top, kernels, warp
        self._scopes = None
        self._included: list[int] = []

    def _words(self) -> set[str]:
        words: set[str] = set()
        for stmt in self.kernels:
            words.add(stmt.name.value)  # module-scope bindings of the kernel's own name
            params = _all_params(stmt.params)
            eager = [*stmt.decorators, *[p.annotation and p.annotation.annotation for p in params]]
            eager += [p.default for p in params]
            for node in eager:
                if node is not None:
                    words.update(_WORD.findall(code(node)))
        return words

    def scopes(self):  # noqa: ANN201 - libcst mapping type
        if self._scopes is None:
            lines = self.command.lines
            top_index = lines.index_of(self.top)
            words = self._words()
            for i, stmt in enumerate(self.tree.body):
                if i == top_index or _may_bind_at_module_scope(stmt, lines.code(stmt), words):
                    self._included.append(i)
            sub = cst.Module(
                body=[self.tree.body[i] for i in self._included],
                default_indent=self.tree.default_indent,
                default_newline=self.tree.default_newline,
            )
            self._scopes = cst.MetadataWrapper(sub, unsafe_skip_copy=True).resolve(ScopeProvider)
        return self._scopes

    def __getitem__(self, node: cst.CSTNode):  # noqa: ANN204 - CodeRange, as PositionProvider's mapping
        for i in self._included:
            positions = self.command.lines.positions(i)
            if node in positions:
                return positions[node]
        raise KeyError(node)

    def __contains__(self, node: object) -> bool:
        return any(node in self.command.lines.positions(i) for i in self._included)


_LOOPS = {cst.For: "for", cst.While: "while"}
#: a whole word of code (an identifier, keyword or number): names are compared word for word
_WORD = re.compile(r"\w+")


def _find_defs(
    block: cst.BaseSuite,
    names: set[str],
    loop: str | None,
    found: dict[str, list[tuple[cst.FunctionDef, str | None]]],
) -> None:
    """Collects the defs named in `names` in a function body: directly in it or in the blocks of its
    compound statements (if/elif/else, try/except/else/finally, with, match, and loops), not in
    nested defs or classes (their own scopes). `found[name]`: (def, keyword of the outermost loop
    around it, or None)."""
    if not isinstance(block, cst.IndentedBlock):
        return
    for stmt in block.body:
        if isinstance(stmt, cst.FunctionDef):
            if stmt.name.value in names:
                found.setdefault(stmt.name.value, []).append((stmt, loop))
            continue
        if isinstance(stmt, cst.ClassDef):
            continue
        inner = loop if loop is not None else _LOOPS.get(type(stmt))
        for sub in _sub_blocks(stmt):
            _find_defs(sub, names, inner, found)


def _sub_blocks(stmt: cst.BaseStatement) -> list[cst.BaseSuite]:
    """The blocks of a compound statement: body, elif/else, except handlers, finally, match cases."""
    out: list[cst.BaseSuite] = []
    part: cst.CSTNode | None = stmt
    while part is not None:  # if / elif chain
        body = getattr(part, "body", None)
        if isinstance(body, cst.BaseSuite):
            out.append(body)
        for handler in getattr(part, "handlers", ()):
            out.append(handler.body)
        for case in getattr(part, "cases", ()):
            out.append(case.body)
        final = getattr(part, "finalbody", None)
        if final is not None:
            out.append(final.body)
        part = getattr(part, "orelse", None)
    return out


def _without(block: cst.IndentedBlock, removed: set[int]) -> cst.IndentedBlock:
    """`block` without the statements in `removed` (by id), at any depth of its compound statements
    (not inside nested defs or classes); an emptied block gets `pass`, and a new first statement of
    a block loses the blank lines it had after the one removed (comments stay)."""
    body: list[cst.BaseStatement] = []
    for stmt in block.body:
        if id(stmt) in removed:
            continue
        if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            stmt = _without_in(stmt, removed)
        body.append(stmt)
    if not body:
        body = [cst.SimpleStatementLine(body=[cst.Pass()])]
    elif id(block.body[0]) in removed:
        body[0] = body[0].with_changes(leading_lines=[ln for ln in body[0].leading_lines if ln.comment is not None])
    if len(body) == len(block.body) and all(a is b for a, b in zip(body, block.body)):
        return block
    return block.with_changes(body=body)


def _without_in(stmt: cst.BaseStatement, removed: set[int]) -> cst.BaseStatement:
    """`stmt` with `_without` applied to each block of it (the same node when nothing changes)."""
    changes: dict[str, cst.CSTNode] = {}
    body = getattr(stmt, "body", None)
    if isinstance(body, cst.IndentedBlock):
        new = _without(body, removed)
        if new is not body:
            changes["body"] = new
    handlers = getattr(stmt, "handlers", None)
    if handlers:
        new_handlers = [_without_in(h, removed) for h in handlers]
        if any(a is not b for a, b in zip(new_handlers, handlers)):
            changes["handlers"] = new_handlers
    cases = getattr(stmt, "cases", None)
    if cases:
        new_cases = [_without_in(c, removed) for c in cases]
        if any(a is not b for a, b in zip(new_cases, cases)):
            changes["cases"] = new_cases
    for attr in ("orelse", "finalbody"):
        part = getattr(stmt, attr, None)
        if part is not None:
            new_part = _without_in(part, removed)
            if new_part is not part:
                changes[attr] = new_part
    return stmt.with_changes(**changes) if changes else stmt


def _declares_nonlocal(factory: cst.FunctionDef, name: str) -> bool:
    """True when the factory, or a function nested in it, declares `name` nonlocal."""
    finder = _NonlocalFinder(name)
    factory.body.visit(finder)
    return finder.found


class _NonlocalFinder(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name, self.found = name, False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Nonlocal):
            self.found = self.found or any(n.name.value == self.name for n in node.names)
            return False
        if isinstance(node, cst.SimpleStatementLine):
            return any(isinstance(s, cst.Nonlocal) for s in node.body)
        return not isinstance(node, cst.BaseExpression)


def _may_bind_at_module_scope(stmt: cst.BaseStatement, text: str, words: set[str]) -> bool:
    """A binding of a name spells it as a whole word: a substring (`f` in `if`) binds nothing."""
    if words.isdisjoint(_WORD.findall(text)):
        return False
    if (
        isinstance(stmt, (cst.FunctionDef, cst.ClassDef))
        and stmt.type_parameters is None
        and ":=" not in text
        and "global" not in text
    ):
        return stmt.name.value in words
    return True


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


__all__ = ["KernelsToModuleScope"]
