"""libcst helpers shared by the codemods: resolving Warp names, literals, statements, insertion points."""

from __future__ import annotations

import ast
import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider

_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def squash(text: str) -> str:
    """Code with all whitespace removed: compares statements regardless of formatting."""
    return "".join(text.split())


# --------------------------------------------------------------------------- Warp name resolution


@dataclass
class WarpImports:
    """How a file refers to Warp: `import warp`, `import warp as wp`, `from warp import kernel as k`."""

    module_aliases: list[str] = field(default_factory=list)
    from_names: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: cst.Module) -> WarpImports:
        found = cls()
        for stmt in _all_imports(tree):
            if isinstance(stmt, cst.Import):
                for alias in stmt.names:
                    full = code(alias.name)
                    if full == "warp" or full.startswith("warp."):
                        if alias.asname is not None and full == "warp":
                            found.module_aliases.append(code(alias.asname.name))
                        elif alias.asname is None:
                            found.module_aliases.append("warp")
            elif stmt.module is not None and not stmt.relative and code(stmt.module) == "warp":
                if isinstance(stmt.names, cst.ImportStar):
                    continue
                for alias in stmt.names:
                    local = code(alias.asname.name) if alias.asname else code(alias.name)
                    found.from_names[local] = code(alias.name)
        return found

    @property
    def alias(self) -> str | None:
        """The name to write new Warp calls with (`wp`, `warp`, ...), or None when warp is not imported."""
        for preferred in ("wp", "warp"):
            if preferred in self.module_aliases:
                return preferred
        return self.module_aliases[0] if self.module_aliases else None

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """`wp.config.x` -> "warp.config.x"; None when the expression is not rooted in Warp."""
        if isinstance(node, cst.Name):
            if node.value in self.module_aliases:
                return "warp"
            if node.value in self.from_names:
                return "warp." + self.from_names[node.value]
            return None
        if isinstance(node, cst.Attribute):
            base = self.qualify(node.value)
            return None if base is None else f"{base}.{node.attr.value}"
        return None

    def is_call_to(self, node: cst.CSTNode, *names: str) -> bool:
        return isinstance(node, cst.Call) and self.qualify(node.func) in {"warp." + n for n in names}


def _all_imports(tree: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    return [
        small
        for stmt, _parents, _top in iter_statements(tree)
        if isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body
        if isinstance(small, (cst.Import, cst.ImportFrom))
    ]


def _blocks(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The statement blocks directly inside a compound statement (body, else, handlers, finally)."""
    out: list[cst.CSTNode] = []
    for attr in ("body", "orelse", "finalbody"):
        part = getattr(stmt, attr, None)
        if part is None:
            continue
        if isinstance(part, (cst.If, cst.Else, cst.Finally)):
            out.append(part)
        elif isinstance(part, cst.IndentedBlock):
            out.extend(part.body)
    out.extend(getattr(stmt, "handlers", ()))
    return out


def iter_statements(tree: cst.Module):  # noqa: ANN201 - generator of (stmt, parents, top)
    """Every statement of the file, without visiting expressions (fast on large files): yields
    (statement, enclosing FunctionDef/ClassDef nodes outermost first, top-level statement)."""
    stack: list[tuple[cst.CSTNode, list[cst.CSTNode], cst.BaseStatement]] = [
        (stmt, [], stmt) for stmt in reversed(tree.body)
    ]
    while stack:
        node, parents, top = stack.pop()
        if isinstance(node, cst.BaseStatement):
            yield node, parents, top
        inner = parents + [node] if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else parents
        for child in reversed(_blocks(node)):
            stack.append((child, inner, top))


def imported_module(stmt: cst.BaseStatement) -> list[str]:
    """Dotted modules an import statement line imports (`from a.b import c` -> ["a.b", "a.b.c"])."""
    out: list[str] = []
    if not isinstance(stmt, cst.SimpleStatementLine):
        return out
    for small in stmt.body:
        if isinstance(small, cst.Import):
            out += [code(a.name) for a in small.names]
        elif isinstance(small, cst.ImportFrom) and small.module is not None:
            base = code(small.module)
            out.append(base)
            if not isinstance(small.names, cst.ImportStar):
                out += [f"{base}.{code(a.name)}" for a in small.names]
    return out


# --------------------------------------------------------------------------- literals


def literal_value(node: cst.BaseExpression) -> tuple[bool, Any]:
    """(True, value) when `node` is a literal of constants (what ast.literal_eval accepts)."""
    try:
        return True, ast.literal_eval(code(node).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def py_literal(value: Any) -> str:
    """JSON-able value -> Python source (double-quoted strings, True/False/None)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON-able literal: {value!r}")


#: the quote the file being transformed writes its strings with (set per module by WarpCodemod)
FILE_QUOTE: ContextVar[str] = ContextVar("FILE_QUOTE", default='"')


def string_arg(value: str) -> cst.SimpleString:
    """A string literal in the file's own quotes (a name such as a module's: no quote or backslash inside)."""
    quote = FILE_QUOTE.get()
    if quote == "'" and not set(value) & {"'", '"', "\\"}:
        return cst.SimpleString(f"'{value}'")
    return cst.SimpleString(json.dumps(value))


def preferred_quote(tree: cst.Module) -> str:
    """The quote most of the file's one-line string literals use (docstrings and f-strings aside); `"` on a tie."""
    counts = {"'": 0, '"': 0}

    class Count(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            body = node.value.lstrip("rRbBuU")
            if body[:3] not in ("\"\"\"", "'''") and body[:1] in counts:
                counts[body[0]] += 1

    tree.visit(Count())
    return "'" if counts["'"] > counts['"'] else '"'



# --------------------------------------------------------------------------- statements


def parse_stmt(text: str) -> cst.SimpleStatementLine:
    stmt = cst.parse_statement(text)
    assert isinstance(stmt, cst.SimpleStatementLine)
    return stmt


def single_call(stmt: cst.CSTNode) -> cst.Call | None:
    """The call of an expression statement line `f(...)`, else None."""
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.Call)
    ):
        return stmt.body[0].value
    return None


def is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def _is_guarded_import(stmt: cst.CSTNode) -> bool:
    """`try: import x / except ImportError: ...` or `if TYPE_CHECKING: import x` count as imports."""
    if isinstance(stmt, (cst.Try, cst.If)) and isinstance(stmt.body, cst.IndentedBlock):
        return bool(stmt.body.body) and all(is_import_line(s) for s in stmt.body.body)
    return False


def header_end(tree: cst.Module, warp: WarpImports) -> int:
    """Index in `tree.body` where module-scope setup goes: after the import header.

    The import header is the run of docstring, imports (plain or try/if-guarded) and simple statements
    before the first def/class/compound statement; the anchor is right after its last import, then
    after any `wp.config.X = ...` assignments that directly follow it (so a Module created by
    `wp.get_module` there already sees them). Before any kernel definition, hence before any launch.
    """
    last_import = -1
    for i, stmt in enumerate(tree.body):
        if is_import_line(stmt) or _is_guarded_import(stmt):
            last_import = i
        elif not isinstance(stmt, cst.SimpleStatementLine):
            break
    index = last_import + 1
    if last_import < 0 and tree.body and is_docstring(tree.body[0]):
        index = 1
    while index < len(tree.body) and is_config_assignment(tree.body[index], warp):
        index += 1
    return index


def is_config_assignment(stmt: cst.CSTNode, warp: WarpImports, attr: str | None = None) -> bool:
    target = config_target(stmt, warp)
    return target is not None and (attr is None or target == attr)


def config_target(stmt: cst.CSTNode, warp: WarpImports) -> str | None:
    """`wp.config.X = ...` -> "X"."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            q = warp.qualify(small.targets[0].target)
            if q and q.startswith("warp.config.") and q.count(".") == 2:
                return q.rsplit(".", 1)[1]
    return None


def insert_at(body: Sequence[cst.BaseStatement], index: int, new: Iterable[cst.BaseStatement]) -> list:
    items = list(body)
    return items[:index] + list(new) + items[index:]


def with_blank_line_before(stmt: cst.BaseStatement, count: int = 1) -> cst.BaseStatement:
    comments = [line for line in stmt.leading_lines if line.comment is not None]
    return stmt.with_changes(leading_lines=[cst.EmptyLine()] * count + comments)


def without_leading_blank_lines(stmt: cst.BaseStatement) -> cst.BaseStatement:
    return stmt.with_changes(leading_lines=[line for line in stmt.leading_lines if line.comment is not None])


# isort's action comment, which ruff honours too: no import moves across it, even with `float_to_top`.
IMPORT_SORT_FENCE = "# isort: split"
_NOQA = re.compile(r"#\s*noqa(?P<codes>:[\s\w,]*)?", re.IGNORECASE)


def with_noqa(stmt: cst.SimpleStatementLine, rule: str) -> cst.SimpleStatementLine:
    """`stmt` with `# noqa: <rule>` on its first line, where ruff reads it; merged into a noqa already there.

    A parenthesized `from x import (` carries it after the parenthesis; another comment on the line stays.
    """
    small = stmt.body[0] if len(stmt.body) == 1 else None
    if isinstance(small, cst.ImportFrom) and small.lpar is not None:
        after = small.lpar.whitespace_after
        if isinstance(after, cst.ParenthesizedWhitespace):
            first = after.first_line
            lpar = small.lpar.with_changes(
                whitespace_after=after.with_changes(first_line=_trailing_with_noqa(first, rule))
            )
            return stmt.with_changes(body=[small.with_changes(lpar=lpar)])
    return stmt.with_changes(trailing_whitespace=_trailing_with_noqa(stmt.trailing_whitespace, rule))


def _trailing_with_noqa(trailing: cst.TrailingWhitespace, rule: str) -> cst.TrailingWhitespace:
    comment = trailing.comment.value if trailing.comment else ""
    found = _NOQA.search(comment)
    if found is None:
        text = f"{comment}  # noqa: {rule}" if comment else f"# noqa: {rule}"
    elif found["codes"] is None or rule in found["codes"]:
        return trailing  # a bare noqa directive silences every rule already
    else:
        text = comment[: found.end()].rstrip() + f", {rule}" + comment[found.end() :]
    return trailing.with_changes(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(text))


def fenced_above_imports(
    body: Sequence[cst.BaseStatement], index: int, why: str
) -> list[cst.BaseStatement]:
    """`body` with statement `index` kept above the imports that directly follow it, whatever tool runs next.

    A statement that must run before an import (a `wp.config` setting the imported modules read) is
    headed by a comment `# <why>`, and followed by the import sorter's fence; each import after it, up to
    the next other statement, says `# noqa: E402` (ruff's "import not at top of file", which it is on
    purpose). Without a following import, nothing changes.
    """
    items = list(body)
    end = index + 1
    while end < len(items) and is_import_line(items[end]):
        items[end] = with_noqa(items[end], "E402")  # type: ignore[arg-type]
        end += 1
    if end == index + 1:
        return items
    stmt = items[index]
    comment = cst.EmptyLine(comment=cst.Comment(f"# {why}"))
    if all(line.comment is None or line.comment.value != comment.comment.value for line in stmt.leading_lines):
        items[index] = stmt.with_changes(leading_lines=[*stmt.leading_lines, comment])
    follower = items[index + 1]
    fence = cst.EmptyLine(comment=cst.Comment(IMPORT_SORT_FENCE))
    if all(line.comment is None or line.comment.value != IMPORT_SORT_FENCE for line in follower.leading_lines):
        items[index + 1] = follower.with_changes(leading_lines=[fence, *follower.leading_lines])
    return items


def module_has_statement(tree: cst.Module, text: str) -> bool:
    """True when a top-level statement reads exactly `text` (whitespace ignored)."""
    wanted = squash(text)
    return any(squash(code(s)) == wanted for s in tree.body if isinstance(s, cst.SimpleStatementLine))


class StatementRemover(cst.CSTTransformer):
    """Removes the given small statements (by identity in the original tree); an emptied block gets
    `pass`; blank lines that separated a removed line from what precedes it go to the next statement."""

    def __init__(self, doomed: Iterable[cst.BaseSmallStatement], on_path: set[int]) -> None:
        self.doomed = {id(s) for s in doomed}
        self.on_path = on_path
        self.emptied: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.on_path

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        kept = [u for o, u in zip(original_node.body, updated_node.body) if id(o) not in self.doomed]
        if len(kept) == len(updated_node.body):
            return updated_node
        if not kept:  # a placeholder, dropped by its block (libcst itself drops empty lines silently)
            placeholder = updated_node.with_changes(body=[cst.Pass()])
            self.emptied.add(id(placeholder))
            return placeholder
        kept[-1] = kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(body=kept)

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        kept = [u for o, u in zip(original_node.body, updated_node.body) if id(o) not in self.doomed]
        if len(kept) == len(updated_node.body):
            return updated_node
        if not kept:
            kept = [cst.Pass()]
        kept[-1] = kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(body=kept)

    def _drop_empty(self, body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for stmt in body:
            if id(stmt) in self.emptied:
                carried = carried or [ln for ln in stmt.leading_lines if ln.comment is None]
                continue
            if carried and not any(ln.comment is None for ln in stmt.leading_lines[:1]):
                stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
            carried = []
            out.append(stmt)
        return out

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        body = self._drop_empty(updated_node.body)
        if not body:
            body = [cst.SimpleStatementLine(body=[cst.Pass()])]
        return updated_node.with_changes(body=body)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._drop_empty(updated_node.body))


def _paths(
    tree: cst.Module, targets: set[int], into_expressions: bool, within: Iterable[cst.CSTNode] | None
) -> set[int]:
    """Ids of the nodes on a path from `tree` to a target; `within`: top-level statements known to
    hold every target (the rest of the file is not walked)."""
    paths = _PathsTo(targets, into_expressions)
    if within is None:
        tree.visit(paths)
        return paths.on_path
    for top in within:
        paths.stack = [id(tree)]
        top.visit(paths)
    return paths.on_path


def remove_statements(
    tree: cst.Module, doomed: Iterable[cst.BaseSmallStatement], within: Iterable[cst.CSTNode] | None = None
) -> cst.Module:
    doomed = list(doomed)
    if not doomed:
        return tree
    on_path = _paths(tree, {id(d) for d in doomed}, False, within)
    return tree.visit(StatementRemover(doomed, on_path))


class _PathsTo(cst.CSTVisitor):
    """Collects the ids of every node on a path from the root to one of the targets."""

    def __init__(self, targets: set[int], into_expressions: bool) -> None:
        self.targets = targets
        self.into_expressions = into_expressions
        self.stack: list[int] = []
        self.on_path: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(id(node))
        if id(node) in self.targets:
            self.on_path.update(self.stack)
            return False
        return self.into_expressions or not isinstance(node, (cst.BaseExpression, cst.BaseSmallStatement))

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


class NodeReplacer(cst.CSTTransformer):
    """Replaces nodes (by identity in the original tree), descending only where a target lies."""

    def __init__(self, replacements: dict[int, cst.CSTNode], on_path: set[int]) -> None:
        self.replacements = replacements
        self.on_path = on_path

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.on_path and id(node) not in self.replacements

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        return self.replacements.get(id(original_node), updated_node)


def _replaced_in_headers(tree: cst.Module, targets: dict[int, cst.CSTNode]) -> cst.Module | None:
    """`tree` with the targets replaced when all are decorators or parameters of top-level defs and
    classes (kernel decorators, factory defaults): rebuilt directly, without walking the file."""
    body = list(tree.body)
    found = 0
    for i, stmt in enumerate(body):
        if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        changes: dict[str, Any] = {}
        decorators = [targets.get(id(d), d) for d in stmt.decorators]
        hits = sum(id(d) in targets for d in stmt.decorators)
        if hits:
            changes["decorators"] = decorators
        if isinstance(stmt, cst.FunctionDef):
            params, param_hits = _replaced_params(stmt.params, targets)
            if param_hits:
                changes["params"] = params
                hits += param_hits
        if hits:
            body[i] = stmt.with_changes(**changes)
            found += hits
    return tree.with_changes(body=body) if found == len(targets) else None


def _replaced_params(params: cst.Parameters, targets: dict[int, cst.CSTNode]) -> tuple[cst.Parameters, int]:
    changes: dict[str, Any] = {}
    hits = 0
    for attr in ("params", "posonly_params", "kwonly_params"):
        group = getattr(params, attr)
        count = sum(id(p) in targets for p in group)
        if count:
            changes[attr] = [targets.get(id(p), p) for p in group]
            hits += count
    return (params.with_changes(**changes), hits) if hits else (params, 0)


def replace_nodes(
    tree: cst.Module,
    replacements: dict[cst.CSTNode, cst.CSTNode],
    within: Iterable[cst.CSTNode] | None = None,
) -> cst.Module:
    """Replaces nodes by identity; `within`: top-level statements known to hold every target."""
    if not replacements:
        return tree
    targets = {id(k): v for k, v in replacements.items()}
    in_headers = _replaced_in_headers(tree, targets)
    if in_headers is not None:
        return in_headers
    into_expressions = any(isinstance(k, cst.BaseExpression) for k in replacements)
    on_path = _paths(tree, set(targets), into_expressions, within)
    return tree.visit(NodeReplacer(targets, on_path))


# --------------------------------------------------------------------------- finding things


@dataclass
class FoundFunction:
    node: cst.FunctionDef
    parents: list[cst.CSTNode]  # enclosing FunctionDef/ClassDef nodes, outermost first
    top: cst.BaseStatement  # the top-level statement that contains it (itself when top-level)


def find_functions(tree: cst.Module) -> list[FoundFunction]:
    return [
        FoundFunction(stmt, list(parents), top)
        for stmt, parents, top in iter_statements(tree)
        if isinstance(stmt, cst.FunctionDef)
    ]


def is_kernel(func: cst.FunctionDef, warp: WarpImports) -> bool:
    return kernel_decorator(func, warp) is not None


def kernel_decorator(func: cst.FunctionDef, warp: WarpImports) -> cst.Decorator | None:
    for dec in func.decorators:
        target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        if warp.qualify(target) == "warp.kernel":
            return dec
    return None


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def with_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """Sets keyword argument `name=value` on `call`, replacing it or appending it."""
    existing = keyword(call, name)
    if existing is not None:
        return call.with_changes(
            args=[a.with_changes(value=value) if a is existing else a for a in call.args]
        )
    new_arg = cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )
    args = list(call.args)
    if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, new_arg])


def decorator_with_module(dec: cst.Decorator, module: str) -> cst.Decorator:
    """`@wp.kernel` / `@wp.kernel(...)` -> the same decorator with `module="<module>"`."""
    value = string_arg(module)
    if isinstance(dec.decorator, cst.Call):
        return dec.with_changes(decorator=with_keyword(dec.decorator, "module", value))
    return dec.with_changes(decorator=with_keyword(cst.Call(func=dec.decorator), "module", value))


def decorator_without_module(dec: cst.Decorator) -> cst.Decorator:
    """`@wp.kernel(module="unique", enable_backward=False)` -> `@wp.kernel(enable_backward=False)`, and
    `@wp.kernel(module="unique")` -> `@wp.kernel`: the kernel joins its file's own module."""
    assert isinstance(dec.decorator, cst.Call)
    args = [a for a in dec.decorator.args if not (a.keyword is not None and a.keyword.value == "module")]
    if not args:
        return dec.with_changes(decorator=dec.decorator.func)
    args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return dec.with_changes(decorator=dec.decorator.with_changes(args=args))


def decorator_module(dec: cst.Decorator) -> cst.BaseExpression | None:
    if isinstance(dec.decorator, cst.Call):
        arg = keyword(dec.decorator, "module")
        return None if arg is None else arg.value
    return None


def is_string(node: cst.BaseExpression | None, value: str | None = None) -> bool:
    if not isinstance(node, cst.SimpleString):
        return False
    return value is None or node.evaluated_value == value


# --------------------------------------------------------------------------- positions


class _SmallStatementIndex(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[tuple[int, int, cst.BaseSmallStatement, cst.CSTNode]] = []
        self._lines: list[cst.CSTNode] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._lines.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._lines.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._lines.append(node)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self._lines.pop()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseSmallStatement):
            pos = self.get_metadata(PositionProvider, node)
            self.spans.append((pos.start.line, pos.end.line, node, self._lines[-1]))
            return False
        if isinstance(node, cst.BaseExpression):
            return False
        return super().on_visit(node)


def small_statements_by_line(wrapper: cst.MetadataWrapper) -> dict[int, list[cst.BaseSmallStatement]]:
    """line -> small statements whose source spans that line (from the wrapper's module)."""
    index = _SmallStatementIndex()
    wrapper.visit(index)
    out: dict[int, list[cst.BaseSmallStatement]] = {}
    for start, end, node, _line in index.spans:
        for line in range(start, end + 1):
            out.setdefault(line, []).append(node)
    return out


def statement_lines(wrapper: cst.MetadataWrapper) -> dict[int, cst.BaseStatement]:
    """line -> innermost statement (simple line or compound header) starting on that line."""
    visitor = _StatementStarts()
    wrapper.visit(visitor)
    return visitor.starts


# --------------------------------------------------------------------------- per-statement code and lines

#: how libcst's PositionProvider splits lines
_NEWLINE = re.compile(r"\r\n?|\n")


def _line_count(text: str) -> int:
    return len(_NEWLINE.split(text)) - 1


class SourceLines:
    """The code and first line of every top-level statement of `tree`, computed once per statement.

    A module's code is its header, each top-level statement's code and its footer, concatenated;
    so statement `i` occupies the lines [start(i), start(i + 1)) and positions inside it are those
    of a module holding just that statement, shifted. This replaces libcst's whole-file
    PositionProvider (the most expensive metadata) with one over the statement a line falls in,
    and lets `module_code` reuse the code of the statements an edit left untouched.
    """

    def __init__(self, tree: cst.Module) -> None:
        self.tree = tree
        self._codes: dict[int, tuple[cst.CSTNode, str]] = {}
        self._starts: list[int] | None = None
        self._index = {id(stmt): i for i, stmt in enumerate(tree.body)}
        self._positions: dict[int, ShiftedPositions] = {}

    def code(self, stmt: cst.CSTNode) -> str:
        """Code of a top-level statement as it appears in the module."""
        hit = self._codes.get(id(stmt))
        if hit is None:
            hit = (stmt, self.tree.code_for_node(stmt))  # keeps `stmt` alive: the id stays valid
            self._codes[id(stmt)] = hit
        return hit[1]

    def starts(self) -> list[int]:
        """1-based first line of each top-level statement (its leading blank/comment lines included)."""
        if self._starts is None:
            line = 1 + sum(_line_count(self.tree.code_for_node(h)) for h in self.tree.header)
            starts = []
            for stmt in self.tree.body:
                starts.append(line)
                line += _line_count(self.code(stmt))
            self._starts = starts
        return self._starts

    def index_of(self, top: cst.CSTNode) -> int:
        return self._index[id(top)]

    def index_at_line(self, line: int) -> int | None:
        """Index of the top-level statement whose lines include `line` (None before the first one)."""
        i = bisect_right(self.starts(), line) - 1
        return i if i >= 0 else None

    def wrapper(self, index: int) -> cst.MetadataWrapper:
        """Metadata wrapper over a module holding only top-level statement `index` (same node objects)."""
        sub = cst.Module(
            body=[self.tree.body[index]],
            header=(),
            footer=(),
            default_indent=self.tree.default_indent,
            default_newline=self.tree.default_newline,
            has_trailing_newline=True,
        )
        return cst.MetadataWrapper(sub, unsafe_skip_copy=True)

    def positions(self, index: int) -> ShiftedPositions:
        """Positions, as in the whole file, of every node inside top-level statement `index`."""
        found = self._positions.get(index)
        if found is None:
            found = ShiftedPositions(self.wrapper(index).resolve(PositionProvider), self.starts()[index] - 1)
            self._positions[index] = found
        return found

    def small_statements_by_line(self, line: int) -> dict[int, list[cst.BaseSmallStatement]]:
        """Like `small_statements_by_line(whole-file wrapper)`, for the statement holding `line` only
        (enough for a look-up of `line`)."""
        index = self.index_at_line(line)
        if index is None:
            return {}
        shift = self.starts()[index] - 1
        return {k + shift: v for k, v in small_statements_by_line(self.wrapper(index)).items()}

    def statement_at_line(self, line: int) -> cst.BaseStatement | None:
        """Like `statement_lines(whole-file wrapper).get(line)`."""
        index = self.index_at_line(line)
        if index is None:
            return None
        shift = self.starts()[index] - 1
        return statement_lines(self.wrapper(index)).get(line - shift)


class ShiftedPositions:
    """PositionProvider results of a one-statement module, moved down to the statement's real lines."""

    def __init__(self, positions: Any, shift: int) -> None:
        self._positions = positions
        self._shift = shift

    def __contains__(self, node: object) -> bool:
        return node in self._positions

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        pos = self._positions[node]
        if not self._shift:
            return pos
        return CodeRange((pos.start.line + self._shift, pos.start.column), (pos.end.line + self._shift, pos.end.column))


def module_code(tree: cst.Module, lines: SourceLines | None) -> str:
    """`tree.code`, reusing the code of top-level statements already rendered by `lines`."""
    if (
        lines is None
        or not tree.has_trailing_newline
        or not tree.body
        or tree.default_indent != lines.tree.default_indent
        or tree.default_newline != lines.tree.default_newline
    ):
        return tree.code
    parts = [tree.code_for_node(h) for h in tree.header]
    parts += [lines.code(stmt) for stmt in tree.body]
    parts += [tree.code_for_node(f) for f in tree.footer]
    return "".join(parts)


class _StatementStarts(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.starts: dict[int, cst.BaseStatement] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseStatement):
            pos = self.get_metadata(PositionProvider, node)
            for line in range(pos.start.line, pos.end.line + 1):
                self.starts[line] = node  # inner statements overwrite outer ones
            return not isinstance(node, cst.SimpleStatementLine)
        return not isinstance(node, cst.BaseExpression)


class _InsertBefore(cst.CSTTransformer):
    def __init__(
        self, target: cst.CSTNode, new: list[cst.BaseStatement], after: bool, on_path: set[int] | None = None
    ) -> None:
        self.target, self.new, self.after = target, new, after
        self.on_path = on_path

    def on_visit(self, node: cst.CSTNode) -> bool:
        return self.on_path is None or id(node) in self.on_path

    def _splice(
        self, original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]
    ) -> list[cst.BaseStatement] | None:
        for i, stmt in enumerate(original):
            if stmt is self.target:
                return insert_at(updated, i + 1 if self.after else i, self.new)
        return None

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        spliced = self._splice(original_node.body, updated_node.body)
        return updated_node if spliced is None else updated_node.with_changes(body=spliced)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        spliced = self._splice(original_node.body, updated_node.body)
        return updated_node if spliced is None else updated_node.with_changes(body=spliced)


def insert_next_to(
    tree: cst.Module,
    target: cst.BaseStatement,
    new: list[cst.BaseStatement],
    after: bool = False,
    within: Iterable[cst.CSTNode] | None = None,
) -> cst.Module:
    """Inserts statements before (or after) `target` in whichever block holds it (only the blocks on
    the way to it are visited; `within`: the top-level statement known to hold it)."""
    on_path = _paths(tree, {id(target)}, False, within)
    return tree.visit(_InsertBefore(target, new, after, on_path))


def body_start(block: cst.BaseSuite) -> int:
    """Index of the first statement after a docstring in an indented block."""
    if isinstance(block, cst.IndentedBlock) and block.body and is_docstring(block.body[0]):
        return 1
    return 0


def ensure_warp_alias(command: Any, warp: WarpImports) -> str:
    """The alias to write Warp calls with; schedules `import warp as wp` when the file has none: in the
    import section of the file's `from warp import ...` where it has one (see `with_warp_import`), else
    where libcst adds imports."""
    if warp.alias is not None:
        return warp.alias
    if getattr(command, "lines", None) is not None and from_warp_index(command.lines.tree) is not None:
        command.needs_warp_import = True
    else:
        command.add_needed_import("warp", asname="wp")
    return "wp"


def from_warp_index(tree: cst.Module) -> int | None:
    """Index in `tree.body` of the first top-level `from warp import ...` line, if any."""
    for i, stmt in enumerate(tree.body):
        if is_import_line(stmt) and any(
            isinstance(s, cst.ImportFrom) and not s.relative and s.module is not None and code(s.module) == "warp"
            for s in stmt.body  # type: ignore[attr-defined]
        ):
            return i
    return None


def with_warp_import(tree: cst.Module) -> cst.Module:
    """`tree` with `import warp as wp` where isort and ruff would put it: in the section (the run of imports
    without a blank line) of its `from warp import ...`, after the plain imports that sort before it and
    before the `from` imports (libcst would append it after the file's last import, first-party ones too)."""
    at = from_warp_index(tree)
    if at is None:
        return tree
    body = list(tree.body)
    start = at
    while start > 0 and is_import_line(body[start - 1]) and not _blank_line_above(body[start]):
        start -= 1
    i = start
    while i < at and _plain_import_sorting_before(body[i], "warp"):
        i += 1
    follower = body[i]
    body[i] = follower.with_changes(leading_lines=[])
    body.insert(i, parse_stmt("import warp as wp").with_changes(leading_lines=follower.leading_lines))
    return tree.with_changes(body=body)


def _blank_line_above(stmt: cst.BaseStatement) -> bool:
    return any(line.comment is None for line in stmt.leading_lines)


def _plain_import_sorting_before(stmt: cst.BaseStatement, module: str) -> bool:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return False
    small = stmt.body[0]
    return isinstance(small, cst.Import) and code(small.names[0].name).lower() < module


def functions_named(tree: cst.Module, name: str) -> list[FoundFunction]:
    return [f for f in find_functions(tree) if f.node.name.value == name]


# --------------------------------------------------------------------------- functions an edit emptied


def is_shell(func: cst.FunctionDef) -> bool:
    """The function does nothing: its body holds at most a docstring and `pass`."""
    if not isinstance(func.body, cst.IndentedBlock):
        return False
    return all(is_docstring(s) or _is_pass(s) for s in func.body.body)


def _is_pass(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in stmt.body)


def shell_names(tree: cst.Module) -> set[str]:
    return {f.node.name.value for f in find_functions(tree) if is_shell(f.node)}


@dataclass(frozen=True)
class Shell:
    """A function an edit left without statements, and what became of it."""

    name: str
    removed: bool  # removed with its calls (private, only called here); else kept, saying where its work went
    docstring: bool  # it kept a docstring, which described the work that left


def clear_shells(tree: cst.Module, names: set[str], text: str, where: str) -> tuple[cst.Module, list[Shell]]:
    """Functions named in `names` that are shells now: a private one (`_name`) that the file only calls as
    a bare statement `_name()` is removed with those calls, and so in turn is a private caller left empty;
    any other keeps its docstring and gains the comment `# <where>` (the place its work went) in place of
    `pass`. `text`: the whole file's new source, to count the uses of a name (a word match, which errs on
    the side of keeping)."""
    done: list[Shell] = []
    pending = set(names)
    while pending:
        name = min(pending)  # in name order: the notes read the same on every run
        pending.remove(name)
        funcs = [f for f in find_functions(tree) if f.node.name.value == name and is_shell(f.node)]
        if not funcs:
            continue
        docstring = any(f.node.get_docstring() is not None for f in funcs)
        before = shell_names(tree)
        removed = _without_private_shell(tree, funcs, text)
        if removed is not None:
            tree = removed
            pending |= shell_names(tree) - before
            done.append(Shell(name, True, docstring))
            continue
        tree = replace_nodes(tree, {f.node: _with_comment(f.node, where) for f in funcs})
        done.append(Shell(name, False, docstring))
    return tree, done


def shell_notes(shells: list[Shell], work: str) -> list[tuple[str, str, str]]:
    """(kind, message, function) of the notes that say what became of each shell; `work`: what it no longer
    does."""
    notes = []
    for shell in shells:
        name = shell.name
        if shell.removed:
            notes.append(("removed-helper", f"{name}() was left empty and only called: removed, with its calls", name))
            continue
        notes.append(("emptied-function", f"{name}() was left empty: kept for its callers, with a comment", name))
        if shell.docstring:
            notes.append(("stale-docstring", f"{name}(): its docstring describes {work}, no longer done", name))
    return notes


def _without_private_shell(tree: cst.Module, funcs: list[FoundFunction], text: str) -> cst.Module | None:
    """`tree` without the private top-level shell and its bare calls; None when it is public, nested, or
    used otherwise than by a bare call."""
    name = funcs[0].node.name.value
    if not name.startswith("_") or name.startswith("__") or len(funcs) != 1 or funcs[0].parents:
        return None
    calls = [
        small
        for stmt, _parents, _top in iter_statements(tree)
        if isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body
        if _is_bare_call_to(small, name)
    ]
    uses = len(re.findall(rf"\b{re.escape(name)}\b", text))
    if uses != 1 + len(calls):  # the def, and the calls: nothing else mentions it
        return None
    tree = remove_statements(tree, calls)
    return tree.with_changes(body=[stmt for stmt in tree.body if stmt is not funcs[0].node])


def _is_bare_call_to(small: cst.BaseSmallStatement, name: str) -> bool:
    return (
        isinstance(small, cst.Expr)
        and isinstance(small.value, cst.Call)
        and isinstance(small.value.func, cst.Name)
        and small.value.func.value == name
        and not small.value.args
    )


def _with_comment(func: cst.FunctionDef, where: str) -> cst.FunctionDef:
    """The shell with its docstring and a comment saying where its work went, in place of `pass`."""
    assert isinstance(func.body, cst.IndentedBlock)
    comment = cst.Comment(f"# {where}")
    docstrings = [s for s in func.body.body if is_docstring(s)]
    if not docstrings:
        placeholder = cst.SimpleStatementLine(
            body=[cst.Pass()], trailing_whitespace=cst.TrailingWhitespace(cst.SimpleWhitespace("  "), comment)
        )
        return func.with_changes(body=func.body.with_changes(body=[placeholder]))
    footer = [cst.EmptyLine(indent=True, comment=comment), *func.body.footer]
    return func.with_changes(body=func.body.with_changes(body=docstrings[:1], footer=footer))
