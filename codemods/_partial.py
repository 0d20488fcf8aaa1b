"""Large files: hand libcst only the parts of a file a codemod can touch.

libcst parses roughly 4,000 lines a second here, so a 5,000-line file costs more than the whole
1 s budget before any edit. Top-level statements that cannot matter to a codemod (no import, none
of its names, lines or keywords) are swapped, line for line, for placeholders; so are the parts of
the defs it keeps that it does not read (bodies, signatures). The codemod runs on that
reduced module and the placeholders are swapped back for the original text. When a placeholder does
not come back exactly once, the caller falls back to the full parse, so the result never depends on
this shortcut.
"""

from __future__ import annotations

import ast
import enum
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

PARTIAL_FROM_LINES = int(os.environ.get("WARP_FIX_PARTIAL_PARSE_LINES", "1000"))

# Statements mentioning these (as whole words) may matter to some codemod (options, config, caches, loads, ...).
KEYWORDS = (
    "config", "options", "set_module_options", "get_module", "force_load", "load_module", "clear_kernel_cache",
    "clear_lto_cache", "CUDA_CACHE_DISABLE", "tempfile", "mkdtemp", "TemporaryDirectory", "rmtree", "atexit",
    "overload", "__name__", "global", "nonlocal",
)  # fmt: skip
# A body holding one of these binds, imports or defines something a codemod may look for: it stays.
_BODY_KEEPERS = frozenset({"import", "def", "class", "global", "nonlocal"})
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Pass, ast.Delete, ast.Return, ast.Raise,
           ast.Assert, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Break, ast.Continue)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_WARP_NAMES = frozenset({"wp", "warp"})
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: a whole word of code; `\bname\b` matches a text exactly when one of its words is `name`
_WORD = re.compile(r"\w+")
_MARKER = "__warp_fix_elided_"
_KEY = re.compile(_MARKER + r"\d+__")


def wanted(kwargs: dict[str, Any]) -> tuple[set[str], set[int]]:
    """Names (every string in the arguments, and their dotted parts) and lines a codemod is aimed at."""
    words: set[str] = set(KEYWORDS)
    lines: set[int] = set()

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, str):
            # Warp's own name is in every kernel: it singles nothing out (type expressions use it).
            words.update(p for p in value.split(".") if _IDENTIFIER.match(p) and p not in _WARP_NAMES)
        elif isinstance(value, bool):
            return
        elif isinstance(value, int) and "line" in key:
            lines.add(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k, key)
                walk(v, key or str(k))
        elif isinstance(value, Iterable):
            for item in value:
                walk(item, key)

    for key, value in kwargs.items():
        walk(value, key)
    return words, lines


class DefReading(enum.Enum):
    """How much of a kept top-level def a codemod reads."""

    WHOLE = "whole"
    SIGNATURE = "signature"  # decorators and signature: the body may be elided
    DECORATORS = "decorators"  # decorators and name: the parameters and body may be elided


@dataclass(frozen=True)
class Focus:
    """What a codemod reads of a large file: the top-level statements it keeps (the rest is elided).

    A statement is kept when it imports, is the module docstring, mentions one of `words` (or a word
    starting with one of `prefixes`) or spans one of `lines`. With `bindings`, so is any statement
    that may bind, at module scope, a name that a statement kept for the codemod uses (for codemods
    that resolve names). Of a kept top-level def, what `defs` says the codemod does not read is
    elided too, when it mentions none of that and its body neither imports, defines nor declares
    anything.
    """

    words: frozenset[str]
    lines: frozenset[int] = frozenset()
    prefixes: tuple[str, ...] = ()
    bindings: bool = False
    defs: DefReading = DefReading.WHOLE

    @classmethod
    def of(cls, kwargs: dict[str, Any], **options: Any) -> Focus:
        words, lines = wanted(kwargs)
        return cls(frozenset(words), frozenset(lines), **options)

    def names(self, words: set[str]) -> bool:
        """Whether code with these words mentions what the codemod is aimed at."""
        if not self.words.isdisjoint(words):
            return True
        return bool(self.prefixes) and any(word.startswith(self.prefixes) for word in words)

    def spans(self, start: int, end: int) -> bool:
        return any(start <= line <= end for line in self.lines)


@dataclass
class Reduced:
    """The reduced source, and the original text each of its placeholders stands for."""

    text: str
    originals: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (original, placeholder)

    @property
    def elided_text(self) -> str:
        """All the text left out, for checks that count words over the whole file."""
        return "".join(original for original, _ in self.originals.values())

    def restore(self, code: str) -> str | None:
        """Swap each placeholder back for its text; None when one is missing, moved or changed."""
        remaining = dict(self.originals)
        lines = code.splitlines(keepends=True)
        out: list[str] = []
        i = 0
        while i < len(lines):
            match = _KEY.search(lines[i])
            if match is None:
                out.append(lines[i])
                i += 1
                continue
            if match.group() not in remaining:
                return None  # a placeholder was duplicated or rewritten
            original, stand_in = remaining.pop(match.group())
            count = stand_in.count("\n")
            if "".join(lines[i : i + count]) != stand_in:
                return None
            out.append(original)
            i += count
        return None if remaining else "".join(out)


@dataclass
class _Group:
    """A run of top-level statements sharing lines (one statement, but for `a = 1; b = 2` and the like)."""

    start: int
    end: int
    nodes: list[ast.stmt]
    words: set[str] = field(default_factory=set)
    keep: bool = False

    @property
    def compound(self) -> bool:
        return any(not isinstance(node, _SIMPLE) for node in self.nodes)

    @property
    def scope(self) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
        """The def or class this group is, when it is just one."""
        node = self.nodes[0]
        return node if len(self.nodes) == 1 and isinstance(node, _SCOPES) else None

    def may_bind(self, names: set[str], text: str) -> bool:
        """Whether it may bind one of `names` at module scope: a def or class binds only its own name,
        unless it declares a global, assigns with `:=` or has type parameters."""
        if names.isdisjoint(self.words):
            return False
        scope = self.scope
        if scope is None or "global" in self.words or ":=" in text or getattr(scope, "type_params", None):
            return True
        return scope.name in names


def reduce_source(source: str, focus: Focus) -> Reduced | None:
    """The source with what `focus` does not need elided; None when nothing is, or it cannot be."""
    if source.count("\n") < PARTIAL_FROM_LINES or not source.endswith("\n") or "\r" in source:
        return None
    if _MARKER in source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    text = source.splitlines(keepends=True)
    groups = list(_groups(tree))
    for group in groups:
        group.words = set(_WORD.findall("".join(text[group.start - 1 : group.end])))
    focus = _with_import_aliases(focus, groups)
    _mark_kept(groups, focus, text)
    reduced = Reduced("")
    out: list[str] = []
    cursor = 1
    for group in groups:
        out.extend(text[cursor - 1 : group.start - 1])  # comments and blank lines between statements stay
        if group.keep:
            out.extend(_kept(group, focus, text, reduced))
        else:
            elided = text[group.start - 1 : group.end]
            out.append(_elide(reduced, elided, compound="if {key}: " if group.compound else None))
        cursor = group.end + 1
    out.extend(text[cursor - 1 :])
    reduced.text = "".join(out)
    return reduced if reduced.originals else None


def _groups(tree: ast.Module) -> Iterator[_Group]:
    group: _Group | None = None
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        end = node.end_lineno or node.lineno
        if group is not None and start <= group.end:
            group.end = max(group.end, end)
            group.nodes.append(node)
            continue
        if group is not None:
            yield group
        group = _Group(start, end, [node])
    if group is not None:
        yield group


def _mark_kept(groups: list[_Group], focus: Focus, text: list[str]) -> None:
    """Sets `keep` on the groups the codemod can touch or read."""
    used: set[str] = set()
    for position, group in enumerate(groups):
        essential = "import" in group.words or (position == 0 and _is_docstring(group.nodes[0]))
        aimed_at = focus.names(group.words) or focus.spans(group.start, group.end)
        group.keep = essential or aimed_at
        if aimed_at:
            used |= group.words
    if focus.bindings:
        for group in groups:
            group.keep = group.keep or group.may_bind(used, "".join(text[group.start - 1 : group.end]))


def _with_import_aliases(focus: Focus, groups: list[_Group]) -> Focus:
    """`focus` plus the local names of imports of a name it wants (`from warp import force_load as fl`)."""
    aliases: set[str] = set()
    for group in groups:
        if "import" not in group.words:
            continue
        for node in group.nodes:
            for imported in (n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))):
                source = set(_WORD.findall(getattr(imported, "module", None) or ""))
                for alias in imported.names:
                    if focus.names(source | set(_WORD.findall(alias.name))):
                        aliases.add(alias.asname or alias.name.split(".")[0])
    if aliases <= focus.words:
        return focus
    return replace(focus, words=focus.words | aliases)


def _kept(group: _Group, focus: Focus, text: list[str], reduced: Reduced) -> list[str]:
    """The lines of a kept group: as they are, or with what `focus.defs` does not read of its def elided."""
    lines = text[group.start - 1 : group.end]
    scope = group.scope
    if focus.defs is DefReading.WHOLE or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return lines
    first = scope.body[0]
    line = text[first.lineno - 1]
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    if not indent or len(indent) != first.col_offset:
        return lines  # the body starts on the def's own line
    body = text[first.lineno - 1 : group.end]
    words = set(_WORD.findall("".join(body)))
    if focus.names(words) or focus.spans(first.lineno, group.end) or not _BODY_KEEPERS.isdisjoint(words):
        return lines
    head = text[group.start - 1 : scope.lineno - 1]  # decorators
    signature = text[scope.lineno - 1 : first.lineno - 1]
    name = re.match(r"(?:async[ \t]+)?def[ \t]+" + re.escape(scope.name) + r"\b", signature[0])
    if focus.defs is DefReading.SIGNATURE or name is None:
        return [*head, *signature, _elide(reduced, body, indent)]
    rest = set(_WORD.findall("".join(signature)[name.end() :]))
    if focus.names(rest) or focus.spans(scope.lineno, first.lineno - 1):
        return [*head, *signature, _elide(reduced, body, indent)]
    return [*head, _elide(reduced, signature + body, "", f"{name.group()}({{key}}): ")]


def _elide(reduced: Reduced, lines: list[str], indent: str = "", compound: str | None = None) -> str:
    """The stand-in for `lines`, recorded in `reduced`: the placeholder's name as an expression statement
    indented by `indent` or, with `compound`, that header (`{key}` in it is the name) over a one-line suite.
    Extra lines go inside a string (one token: cheap to parse), never a docstring."""
    key = f"{_MARKER}{len(reduced.originals)}__"
    count = len(lines)
    padding = "" if count == 1 else ', """' + "\n" * (count - 1) + '"""'
    if compound is None:
        stand_in = f"{indent}{key}{padding}\n"
    else:
        stand_in = compound.format(key=key) + ("pass" if count == 1 else "None") + padding + "\n"
    reduced.originals[key] = ("".join(lines), stand_in)
    return stand_in


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
