"""What a kept fix changed, for the person reviewing its commit: the builds that are gone, and the text that
the edit may have made false.

Both are read from what apply already has: the two measured runs, and the files before and after the edit.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter
from collections.abc import Iterator

from warp_fix.apply.git import Git
from warp_fix.apply.ledger import EditNote, GoneBuild, ToCheck
from warp_fix.report import ModuleBuild, Rebuild, Report

STALE_DOCSTRING = "stale-docstring"  # the EditNote kind a codemod reports a docstring with


def gone_builds(before: Report, after: Report) -> list[GoneBuild]:
    """The cold run's rebuilds and the warm run's compiles that the candidate's runs no longer do, per module
    and device, with why they happened where the accepted run recorded it."""
    return [*_gone_rebuilds(before.rebuilds, after.rebuilds), *_gone_warm(before, after)]


def _same_module(name: str) -> str:
    """A module named after one kernel ends in a hash of its content (`_diag_mv_kernel_55845888`): an edit that
    changes the content renames it, and its rebuild under the new name is not gone."""
    return _HASH_SUFFIX.sub("", name)


_HASH_SUFFIX = re.compile(r"_[0-9a-f]{8}$")


def _gone_rebuilds(before: list[Rebuild], after: list[Rebuild]) -> Iterator[GoneBuild]:
    left = Counter((_same_module(r.module), r.device) for r in after)
    for rebuild in before:
        key = (_same_module(rebuild.module), rebuild.device)
        if left[key]:
            left[key] -= 1
            continue
        sites = [str(reason.site) for reason in rebuild.reasons if reason.site]
        why = "; ".join(reason.detail for reason in rebuild.reasons)
        yield GoneBuild(rebuild.module, rebuild.device, rebuild.module_ms, "cold", why, sites[0] if sites else "")


def _gone_warm(before: Report, after: Report) -> Iterator[GoneBuild]:
    left = Counter((_same_module(b.module), b.device) for b in _compiled(after.warm_trace.builds))
    for build in _compiled(before.warm_trace.builds):
        key = (_same_module(build.module), build.device)
        if left[key]:
            left[key] -= 1
            continue
        site = str(build.site) if build.site else ""
        yield GoneBuild(build.module, build.device, build.module_ms, "warm", "", site)


def _compiled(builds: list[ModuleBuild]) -> list[ModuleBuild]:
    return [b for b in builds if b.status == "compiled"]


def docstrings_to_check(git: Git, files: list[str], notes: list[EditNote]) -> list[ToCheck]:
    """Docstrings of the functions whose body the uncommitted edit in `git`'s worktree changed, with their
    line in the edited file. A codemod's "stale-docstring" note on the function says why; else "body changed".
    """
    points = []
    for file in files:
        old = _functions(git.run("show", f"HEAD:{file}", check=False))
        new = _functions((git.cwd / file).read_text(encoding="utf-8"))
        for name, (node, body) in new.items():
            docstring = ast.get_docstring(node, clean=True)
            if not docstring or name not in old or old[name][1] == body:
                continue
            why = _noted(notes, file, node.name) or "the edit changed its body"
            points.append(ToCheck(file, node.body[0].lineno, name, docstring.splitlines()[0], why))
    return points


HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def comments_to_check(git: Git, files: list[str]) -> list[ToCheck]:
    """Comment lines the uncommitted edit left as they were but may have made false: right above a block it
    changed ("# build the kernel on first use"), or anywhere in the file naming a definition whose decorator
    or signature it changed ("tiled_transpose below has a different block_dim and uses its own", over the
    kernels two definitions up)."""
    points = []
    for file in files:
        text = (git.cwd / file).read_text(encoding="utf-8")
        diff = git.run("diff", "-U0", "HEAD", "--", file, check=False)
        hunks = [(int(match[1]), int(match[2] or 1)) for match in HUNK.finditer(diff)]
        functions = _functions(text)
        points += _right_above(file, text.splitlines(), hunks, functions)
        points += _naming_edited(file, text, hunks, functions)
    return list({(p.file, p.line): p for p in points}.values())


def _right_above(file: str, lines: list[str], hunks: list[tuple[int, int]], functions: Functions) -> Iterator[ToCheck]:
    for start, count in hunks:
        above = start - 1 if count else start  # a deletion's hunk names the line before the removed ones
        said = lines[above - 1].strip() if 1 <= above <= len(lines) else ""
        if said.startswith("#") and not said.startswith(("#!", "# noqa", "# type:")):
            yield ToCheck(file, above, _enclosing(functions, above), said.lstrip("#").strip(),
                          "right above the edited lines", kind="comment")


def _naming_edited(file: str, text: str, hunks: list[tuple[int, int]], functions: Functions) -> Iterator[ToCheck]:
    """Comments outside the edit and outside the definitions it changed that name one of those."""
    edited = [node for start, _ in hunks for node in _headed_at(functions, start)]
    names = {node.name for node in edited}
    skipped = {line for start, count in hunks for line in range(start, start + count)}
    skipped |= {line for node in edited for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    for line, comment in _comments(text):
        named = sorted(name for name in names if re.search(rf"\b{re.escape(name)}\b", comment))
        if named and line not in skipped:
            yield ToCheck(file, line, _enclosing(functions, line), comment,
                          f"names {', '.join(named)}, whose definition the edit changed", kind="comment")


def _headed_at(functions: Functions, line: int) -> list[FunctionNode]:
    """The functions whose head (decorators and `def` line) holds `line`."""
    return [
        node
        for node, _ in functions.values()
        if min([node.lineno, *(d.lineno for d in node.decorator_list)]) <= line <= node.lineno
    ]


def _comments(source: str) -> Iterator[tuple[int, str]]:
    """Each comment of `source` with its line, without the `#`; nothing when it does not tokenize."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        return


def _enclosing(functions: dict[str, tuple[FunctionNode, str]], line: int) -> str:
    inside = [name for name, (node, _) in functions.items() if node.lineno <= line <= (node.end_lineno or 0)]
    return max(inside, key=len, default="")


def _noted(notes: list[EditNote], file: str, function: str) -> str:
    """The codemod's own word on the function's docstring, if it gave one (without the name it starts with)."""
    found = (n for n in notes if n.kind == STALE_DOCSTRING and n.file == file and n.function == function)
    return next((n.message.removeprefix(f"{function}(): ") for n in found), "")


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
Functions = dict[str, tuple[FunctionNode, str]]  # by dotted name: the node, and its body's code


def _functions(source: str) -> dict[str, tuple[FunctionNode, str]]:
    """Every function of `source` by dotted name, with its body's code without the docstring; empty when
    the source does not parse (a file the edit created, or one that was never Python)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, tuple[FunctionNode, str]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                statements = child.body[1:] if ast.get_docstring(child) is not None else child.body
                found[name] = (child, "\n".join(ast.dump(s) for s in statements))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(tree, "")
    return found
