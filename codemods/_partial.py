"""Large files: hand libcst only the top-level statements a codemod can touch.

libcst parses roughly 4,000 lines a second here, so a 5,000-line file costs more than the whole
1 s budget before any edit. Top-level statements that cannot matter to a codemod (no import, none
of its names, lines or keywords) are swapped, line for line, for placeholders; the codemod runs on
that reduced module and the placeholders are swapped back for the original text. When a placeholder
does not come back exactly once, the caller falls back to the full parse, so the result never
depends on this shortcut.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from typing import Any

PARTIAL_FROM_LINES = int(os.environ.get("WARP_FIX_PARTIAL_PARSE_LINES", "1000"))

# Statements mentioning these may matter to some codemod (options, config, caches, loads, entry code).
KEYWORDS = (
    "config", "options", "get_module", "force_load", "load_module", "clear_kernel_cache", "clear_lto_cache",
    "CUDA_CACHE", "tempfile", "mkdtemp", "TemporaryDirectory", "rmtree", "atexit", "overload", "__name__",
    "global", "nonlocal",
)  # fmt: skip
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Pass, ast.Delete, ast.Return, ast.Raise,
           ast.Assert, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Break, ast.Continue)
_WARP_NAMES = frozenset({"wp", "warp"})
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLACEHOLDER = re.compile(r"^(?:if |\()?(__warp_fix_elided_\d+__)(?::|: pass)?\n$")


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


def reduce_source(source: str, words: set[str], lines: set[int]) -> tuple[str, dict[str, tuple[str, str]]] | None:
    """The source with irrelevant top-level statements elided, and what each placeholder stands for."""
    if source.count("\n") < PARTIAL_FROM_LINES or not source.endswith("\n") or "\r" in source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    text = source.splitlines(keepends=True)
    out: list[str] = []
    originals: dict[str, tuple[str, str]] = {}
    cursor = 1
    for index, (start, end, compound, keep) in enumerate(_groups(tree, text, words, lines)):
        out.extend(text[cursor - 1 : start - 1])  # comments and blank lines between statements stay
        chunk = "".join(text[start - 1 : end])
        if keep:
            out.append(chunk)
        else:
            key = f"__warp_fix_elided_{index}__"
            count = end - start + 1
            out.append(placeholder(key, count, compound))
            originals[key] = (chunk, placeholder(key, count, compound))
        cursor = end + 1
    out.extend(text[cursor - 1 :])
    return ("".join(out), originals) if originals else None


def _groups(tree: ast.Module, text: list[str], words: set[str], lines: set[int]):
    """(start, end, compound, keep) per run of top-level statements sharing lines."""
    groups: list[list[Any]] = []
    for position, node in enumerate(tree.body):
        decorators = getattr(node, "decorator_list", [])
        start = min([node.lineno] + [d.lineno for d in decorators])
        end = node.end_lineno or node.lineno
        compound = not isinstance(node, _SIMPLE)
        essential = isinstance(node, (ast.Import, ast.ImportFrom)) or (position == 0 and _is_docstring(node))
        if groups and start <= groups[-1][1]:
            group = groups[-1]
            group[1], group[2], group[3] = max(group[1], end), group[2] or compound, group[3] or essential
        else:
            groups.append([start, end, compound, essential])
    mentions = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, words))) + r")\b") if words else None
    for start, end, compound, essential in groups:
        chunk = "".join(text[start - 1 : end])
        named = mentions is not None and mentions.search(chunk) is not None
        keep = essential or named or any(start <= line <= end for line in lines)
        yield start, end, compound, keep


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def placeholder(key: str, count: int, compound: bool) -> str:
    """A statement of the same kind (simple or compound) spanning exactly `count` lines, padding inside it."""
    if compound:
        return f"if {key}: pass\n" if count == 1 else f"if {key}:\n" + "    pass\n" * (count - 1)
    return f"{key}\n" if count == 1 else f"({key}\n" + "\n" * (count - 2) + ")\n"


def restore(code: str, originals: dict[str, tuple[str, str]]) -> str | None:
    """Swap each placeholder back for its text; None when one is missing, moved or changed."""
    remaining = dict(originals)
    lines = code.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _PLACEHOLDER.match(lines[i])
        key = match.group(1) if match else None
        if key not in remaining:
            if "__warp_fix_elided_" in lines[i]:
                return None  # a placeholder was moved or rewritten
            out.append(lines[i])
            i += 1
            continue
        chunk, stand_in = remaining.pop(key)
        count = stand_in.count("\n")
        if "".join(lines[i : i + count]) != stand_in:
            return None
        out.append(chunk)
        i += count
    return None if remaining else "".join(out)
