"""One parsed file and the questions every collector asks about its nodes.

Where a node sits (enclosing functions, `if` guards), its source text, its literal
value, and which Warp API a name refers to.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .index import ModuleName, Value
from .names import NameResolver, dotted_name, top_level_names

Reading = TypeVar("Reading")

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_Function = ast.FunctionDef | ast.AsyncFunctionDef
LAUNCH_KINDS = ("launch", "launch_tiled")

# The one vocabulary of a cache clear made on purpose, for a guard, a function name or its docstring: what a
# maintenance path is called ("maint" covers maintain and maintenance). A clear in code named for clearing is left
# alone: a missed fix costs a cold start, a removed maintenance clear breaks the user's tool.
MAINTENANCE_WORDS = re.compile(r"rebuild|maint|clean|clear|reset|purge|wipe|flush|invalidate|fresh", re.IGNORECASE)
# A guard that reads the command line: the clear runs when someone passes a flag for it (`if args.rebuild:`).
COMMAND_LINE = re.compile(r"\bargs\.|\bopts\.|argv", re.IGNORECASE)


@dataclass(frozen=True)
class FileInfo:
    """How items name the file and how its imports are classified."""

    file: str  # repo-relative posix path (absolute for library roots)
    python_module: str
    in_repo: bool
    project_names: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ClassBinding:
    """`name = function` (or `name = staticmethod(function)`: `wrapper`) in the body of `cls`."""

    cls: ast.ClassDef
    name: str
    function: ast.FunctionDef | ast.AsyncFunctionDef
    wrapper: str = ""  # "", "staticmethod" or "classmethod"


@dataclass
class ParsedFile:
    info: FileInfo
    text: str
    tree: ast.Module
    resolver: NameResolver
    nodes: list[ast.AST]  # every node, parents before children
    parents: dict[int, ast.AST]
    line_starts: list[int] = field(default_factory=list)
    _helpers: tuple[dict[str, str], set[int]] | None = field(default=None, repr=False)
    _bound_to_warp: frozenset[str] | None = field(default=None, repr=False)
    _returns: dict[int, list[ast.Return]] | None = field(default=None, repr=False)
    _symbols: dict[int, str | None] = field(default_factory=dict, repr=False)
    _bindings: list[ClassBinding] | None = field(default=None, repr=False)
    _top_names: list[ModuleName] | None = field(default=None, repr=False)
    _name_reads: dict[str, int] | None = field(default=None, repr=False)
    _readings: dict[Callable[..., Any], Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.line_starts = _line_starts(self.text)

    def reading(self, make: Callable[[ParsedFile], Reading]) -> Reading:
        """The file's one `make(self)`: a reading several collectors ask for (`Receivers`) is made once per file."""
        if make not in self._readings:
            self._readings[make] = make(self)
        return self._readings[make]

    # Names ---------------------------------------------------------------------------------------

    def warp_symbol(self, node: ast.AST) -> str | None:
        """Asked of the same call by most collectors: answered once per node (millions of asks on a large tree)."""
        key = id(node)
        if key not in self._symbols:
            self._symbols[key] = self.resolver.warp_symbol(node)
        return self._symbols[key]

    def qualified_names(self, node: ast.AST) -> frozenset[str]:
        return self.resolver.qualified_names(dotted_name(node))

    def names_warp(self, node: ast.AST) -> bool:
        """`node` is a dotted name rooted at a name this file binds by importing Warp (`wp.copy`, `warp.zeros`,
        `copy` after `from warp import copy`): a call of it runs Warp's code, never the project's."""
        dotted = dotted_name(node)
        return dotted is not None and dotted.split(".", 1)[0] in self._warp_names()

    def _warp_names(self) -> frozenset[str]:
        if self._bound_to_warp is None:
            bound = set()
            for node in self.nodes:
                if isinstance(node, ast.Import):
                    bound |= {a.asname or "warp" for a in node.names if a.name == "warp" or (
                        a.asname and a.name.startswith("warp."))}
                    bound |= {"warp" for a in node.names if a.asname is None and a.name.startswith("warp.")}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                    node.module == "warp" or node.module.startswith("warp.")
                ):
                    bound |= {a.asname or a.name for a in node.names}
            self._bound_to_warp = frozenset(bound)
        return self._bound_to_warp

    # Launches ------------------------------------------------------------------------------------

    def launch_kind(self, call: ast.Call) -> str | None:
        """`launch` or `launch_tiled` for a call that launches a kernel with `wp.launch`'s arguments: Warp's own,
        or a module-scope helper of this file that passes every argument on to it unchanged
        (`def _launch(*args, **kwargs): return wp.launch(*args, **kwargs)`); None for the helper's own forwarding
        call, whose kernel is only known at its callers, and for every other call."""
        kind = self.warp_symbol(call.func)
        if kind in LAUNCH_KINDS:
            return None if id(call) in self._launch_helpers()[1] else kind
        if isinstance(call.func, ast.Name):
            return self._launch_helpers()[0].get(call.func.id)
        return None

    def _launch_helpers(self) -> tuple[dict[str, str], set[int]]:
        """The file's pass-through launch helpers (name -> launch kind), and the ids of their forwarding calls."""
        if self._helpers is None:
            helpers: dict[str, str] = {}
            forwarding: set[int] = set()
            for function in self.tree.body:
                if not isinstance(function, _Function) or function.args.vararg is None or function.args.kwarg is None:
                    continue
                for node in ast.walk(function):
                    if isinstance(node, ast.Call) and _passes_on(node, function) and (
                        (kind := self.warp_symbol(node.func)) in LAUNCH_KINDS
                    ):
                        helpers[function.name] = kind
                        forwarding.add(id(node))
            self._helpers = (helpers, forwarding)
        return self._helpers

    # Text and values -----------------------------------------------------------------------------

    def source(self, node: ast.AST) -> str:
        """The node's text as written (what `ast.get_source_segment` gives, without re-splitting the file)."""
        try:
            start = self._offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
            end = self._offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        except (AttributeError, TypeError, IndexError):
            return ast.unparse(node)
        return self.text[start:end].strip()

    def _offset(self, line: int, utf8_column: int) -> int:
        """Character offset of (1-based line, UTF-8 byte column) as `ast` reports positions."""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.text)
        prefix = self.text[start:end].encode("utf-8")[:utf8_column]
        return start + len(prefix.decode("utf-8", errors="ignore"))

    def value(self, node: ast.AST | None) -> Value | None:
        """The expression as written, with its JSON-able literal when it is a constant."""
        if node is None:
            return None
        constant, literal = literal_of(node)
        return Value(source=self.source(node), is_constant=constant, value=literal if constant else None)

    # Places --------------------------------------------------------------------------------------

    def parent_of(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def ancestors(self, node: ast.AST) -> list[ast.AST]:
        return list(self.iter_ancestors(node))

    def iter_ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """Parent, grandparent, ...: lazily, for the questions the nearest enclosing node answers."""
        current = self.parents.get(id(node))
        while current is not None:
            yield current
            current = self.parents.get(id(current))

    def enclosing_definitions(self, node: ast.AST) -> list[_Definition]:
        """Functions and classes around `node`, outermost first (`node` itself excluded)."""
        return [a for a in reversed(self.ancestors(node)) if isinstance(a, _Definition)]

    def function_of(self, node: ast.AST) -> str | None:
        """`__qualname__` of the innermost function around `node`; None at module or class-body scope."""
        definitions = self.enclosing_definitions(node)
        while definitions and not isinstance(definitions[-1], _Function):
            definitions.pop()
        return qualname(definitions) if definitions else None

    def own_method(self, call: ast.Call) -> str | None:
        """`Sim.advance` for `self.advance(...)` in a method of `Sim` when `Sim` itself defines `advance` (this
        file's, qualified): the call runs that method, not every function of the repository named `advance`."""
        return self.own_method_named(call.func, call)

    def own_method_named(self, func: ast.expr, at: ast.AST) -> str | None:
        """`own_method` for the expression `self.advance` read at `at` (called there, or handed on)."""
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return None
        method = self.innermost_function(at)
        owner = self.parent_of(method) if method is not None else None
        if not isinstance(owner, ast.ClassDef) or not any(
            isinstance(item, _Function) and item.name == func.attr for item in owner.body
        ):
            return None
        around = self.function_of(at)
        return f"{around.rsplit('.', 1)[0]}.{func.attr}" if around and "." in around else None

    def class_bindings(self) -> list[ClassBinding]:
        """Module-scope functions of this file that a module-scope class binds in its body by assignment (`step =
        _Tank_step`, `step = staticmethod(_Tank_step)`): the class's method by that name. Found once per file."""
        if self._bindings is None:
            functions = {n.name: n for n in self.tree.body if isinstance(n, _Function)}
            self._bindings = []
            for cls in (n for n in self.tree.body if isinstance(n, ast.ClassDef)):
                for statement in (s for s in cls.body if isinstance(s, ast.Assign)):
                    value, wrapper = statement.value, ""
                    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and len(value.args) == 1
                            and not value.keywords and value.func.id in ("staticmethod", "classmethod")):
                        value, wrapper = value.args[0], value.func.id
                    function = functions.get(value.id) if isinstance(value, ast.Name) else None
                    if function is not None:
                        self._bindings += [ClassBinding(cls, t.id, function, wrapper)
                                           for t in statement.targets if isinstance(t, ast.Name)]
        return self._bindings

    def bound_method(self, function: ast.AST) -> ClassBinding | None:
        """A module-scope function as a method: the one plain binding a class of this file makes of it (`apply =
        _FilterBank_apply`), when the file reads its name nowhere else (a function also called on its own may be
        passed any first argument; a `staticmethod(f)` binding takes no `self`)."""
        if not isinstance(function, _Function) or self.parent_of(function) is not self.tree:
            return None
        if self._name_reads is None:
            self._name_reads = {}
            for node in self.nodes:
                if isinstance(node, ast.Name):
                    self._name_reads[node.id] = self._name_reads.get(node.id, 0) + 1
        bound = [b for b in self.class_bindings() if b.function is function]
        if len(bound) != 1 or self._name_reads.get(function.name) != 1 or bound[0].wrapper:
            return None
        return bound[0]

    def top_level_names(self) -> list[ModuleName]:
        """What the module's top level binds (`names.top_level_names`). Found once per file."""
        if self._top_names is None:
            is_package = self.info.file.endswith("__init__.py")
            self._top_names = top_level_names(self.tree, self.info.python_module, is_package)
        return self._top_names

    def own_returns(self, function: _Function) -> list[ast.Return]:
        """`function`'s own `return` statements in line order, not those of functions nested in it. One pass over
        the file finds every function's: walking each function's body apart cost the scan of a large library
        a fifth of its time."""
        if self._returns is None:
            found: dict[int, list[ast.Return]] = {}
            for node in self.nodes:
                if isinstance(node, ast.Return) and (owner := self.innermost_function(node)) is not None:
                    found.setdefault(id(owner), []).append(node)
            self._returns = {owner: sorted(returns, key=lambda r: r.lineno) for owner, returns in found.items()}
        return self._returns.get(id(function), [])

    def innermost_function(self, node: ast.AST) -> _Function | None:
        return next((a for a in self.iter_ancestors(node) if isinstance(a, _Function)), None)

    def located(self, node: ast.AST, line: int | None = None) -> dict[str, Any]:
        """The common `Located` fields of an item at `node`."""
        return {
            "file": self.info.file,
            "line": line if line is not None else node.lineno,  # type: ignore[attr-defined]
            "function": self.function_of(node),
            "in_repo": self.info.in_repo,
        }

    def guards(self, node: ast.AST) -> list[str]:
        """Tests of the `if`s deciding whether `node` runs, innermost first; else-branches as `not (..)`.

        Stops at the enclosing function: a caller's guards are not visible statically.
        """
        guards: list[str] = []
        child = node
        for parent in self.iter_ancestors(node):
            if isinstance(parent, _Definition):
                break
            if isinstance(parent, ast.If) and child is not parent.test:
                test = self.source(parent.test)
                guards.append(test if _in_block(child, parent.body) else f"not ({test})")
            child = parent
        return guards

    def source_lines(self, first: int, last: int) -> str:
        end = self.line_starts[last] if last < len(self.line_starts) else len(self.text)
        return self.text[self.line_starts[first - 1] : end]


def walk_with_parents(tree: ast.AST) -> tuple[list[ast.AST], dict[int, ast.AST]]:
    """Every node (parents first) and each node's parent, in one pass over the tree. Expression contexts
    (`ast.Load`, `ast.Store`: one shared object each, a third of a large tree's nodes) are read from their
    expression, never walked to."""
    nodes: list[ast.AST] = [tree]
    parents: dict[int, ast.AST] = {}
    append = nodes.append
    for parent in nodes:  # the list grows while it is read: breadth first
        for name in parent._fields:
            if name == "ctx":
                continue
            value = getattr(parent, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        parents[id(item)] = parent
                        append(item)
            elif isinstance(value, ast.AST):
                parents[id(value)] = parent
                append(value)
    return nodes, parents


def qualname(definitions: list[_Definition]) -> str:
    """Python `__qualname__` of the last definition: `Cls.method`, `outer.<locals>.inner`."""
    parts: list[str] = []
    for definition in definitions:
        parts.append(definition.name)
        if isinstance(definition, _Function):
            parts.append("<locals>")
    if parts and parts[-1] == "<locals>":
        parts.pop()
    return ".".join(parts)


def literal_of(node: ast.AST) -> tuple[bool, Any]:
    """(True, value) when `node` is a literal whose value survives a JSON round trip (tuples as lists)."""
    try:
        literal = ast.literal_eval(node)
        return True, json.loads(json.dumps(literal))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False, None


def string_literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def argument(call: ast.Call | None, keyword: str, position: int | None = None) -> ast.expr | None:
    """The expression passed as `keyword=`, or positionally at `position` (before any `*args`)."""
    if call is None:
        return None
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    if position is None:
        return None
    positional = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            break
        positional.append(arg)
    return positional[position] if position < len(positional) else None


def first_docstring_line(function: _Function | None) -> str | None:
    doc = ast.get_docstring(function) if function is not None else None
    return doc.strip().splitlines()[0] if doc and doc.strip() else None


def maintenance_guard(guards: list[str]) -> str | None:
    return next((g for g in guards if says_maintenance(g) or COMMAND_LINE.search(g)), None)


def says_maintenance(text: str | None) -> bool:
    """`rebuild_cache`, "Wipe the kernel cache." or `if clean:`: the text names a maintenance path."""
    return bool(text and MAINTENANCE_WORDS.search(text))


def function_parameters(function: _Function) -> list[ast.arg]:
    args = function.args
    return [
        *args.posonlyargs,
        *args.args,
        *([args.vararg] if args.vararg else []),
        *args.kwonlyargs,
        *([args.kwarg] if args.kwarg else []),
    ]


def parameter_default(function: _Function, name: str) -> ast.expr | None:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    offset = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        if arg.arg == name:
            return args.defaults[index - offset] if index >= offset else None
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if arg.arg == name:
            return default
    return None


def _line_starts(text: str) -> list[int]:
    """Offsets where each line starts, splitting only on the line ends Python's tokenizer uses."""
    starts = [0]
    for match in re.finditer(r"\r\n|\r|\n", text):
        starts.append(match.end())
    if starts[-1] == len(text) and len(starts) > 1:
        starts.pop()
    return starts


def _in_block(child: ast.AST, block: list[ast.stmt]) -> bool:
    return any(child is statement for statement in block)


def _passes_on(call: ast.Call, function: _Function) -> bool:
    """`f(*args, **kwargs)` with exactly the function's own `*args` and `**kwargs`, nothing else."""
    args, kwarg = function.args.vararg, function.args.kwarg
    return (
        len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and args is not None
        and call.args[0].value.id == args.arg
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and kwarg is not None
        and call.keywords[0].value.id == kwarg.arg
    )
