"""keep_cache: remove incidental statements that destroy Warp's (or CUDA's) compile cache (CS-2)."""

from __future__ import annotations

import re

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    find_functions,
    iter_statements,
    literal_value,
    remove_statements,
    shell_names,
)
from .specs import KeepCacheArgs

# The comment a function left empty keeps: its work is not elsewhere, it is gone on purpose.
WHY_EMPTY = "It cleared or discarded the kernel cache, which is now kept between runs."



def _call_name(call: cst.Call) -> str:
    return code(call.func).replace(" ", "")


def _is_temp_dir_call(node: cst.BaseExpression) -> bool:
    """`tempfile.mkdtemp(...)`, `mkdtemp(...)`, `tempfile.TemporaryDirectory(...).name`."""
    if isinstance(node, cst.Attribute) and node.attr.value == "name":
        node = node.value
    return isinstance(node, cst.Call) and _call_name(node).rsplit(".", 1)[-1] in {
        "mkdtemp",
        "TemporaryDirectory",
    }


def _import_bindings(tree: cst.Module) -> set[str]:
    """Names bound by the file's top-level import lines."""
    names: set[str] = set()
    for stmt in tree.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                names |= {code(a.asname.name) if a.asname else code(a.name).split(".")[0] for a in small.names}
    return names


def _top_level_def(tree: cst.Module, name: str) -> cst.FunctionDef | None:
    found = [s for s in tree.body if isinstance(s, cst.FunctionDef) and s.name.value == name]
    return found[0] if len(found) == 1 else None


def _makes_temp_dir(func: cst.FunctionDef) -> bool:
    """The function body creates a temporary directory (and, being a helper, hands it out)."""
    finder = _TempNames()
    func.body.visit(finder)
    return bool(finder.names) or finder.returns_temp


class _TempNames(cst.CSTVisitor):
    """Names bound to a per-run temporary directory: `d = tempfile.mkdtemp()`, `with ... as d`."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.returns_temp = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        # statements (hence Assign and WithItem) never sit inside an expression: skip expressions
        super().on_visit(node)
        return not isinstance(node, cst.BaseExpression)

    def visit_Assign(self, node: cst.Assign) -> None:
        if _is_temp_dir_call(node.value):
            self.names.update(code(t.target) for t in node.targets)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if _is_temp_dir_call(node.item) and node.asname is not None:
            self.names.add(code(node.asname.name))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and _is_temp_dir_call(node.value):
            self.returns_temp = True


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def _root_names(node: cst.CSTNode) -> set[str]:
    collector = _Names()
    node.visit(collector)
    return collector.names


def remove_unused_imports(tree: cst.Module, candidates: set[str], text: str | None = None) -> cst.Module:
    """Drops top-level `import x` / `from m import x` bindings among `candidates` that the file no
    longer mentions (a word match on the new source: cheap, and errs on the side of keeping).
    `text`: all the file's new source when the caller has it (`tree` may be a reduced module)."""
    if not candidates:
        return tree
    if text is None:
        text = tree.code
    body: list[cst.BaseStatement] = []
    for stmt in tree.body:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
            statement_text = code(stmt)
            kept = []
            for alias in small.names:
                bound = code(alias.asname.name) if alias.asname else code(alias.name).split(".")[0]
                pattern = rf"\b{re.escape(bound)}\b"
                if bound in candidates and len(re.findall(pattern, text)) <= len(
                    re.findall(pattern, statement_text)
                ):
                    continue
                kept.append(alias)
            if not kept:
                continue
            if len(kept) != len(small.names):
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                stmt = stmt.with_changes(body=[small.with_changes(names=kept)])
        body.append(stmt)
    return (
        tree
        if len(body) == len(tree.body) and all(a is b for a, b in zip(body, tree.body))
        else (tree.with_changes(body=body))
    )

HEATGRID_BEFORE = '''\
"""Heat diffusion on a grid."""

import warp as wp

from heatgrid import kernels


def _fresh_start():
    """Start every run from an empty kernel cache."""
    wp.clear_kernel_cache()


def reset_caches():
    """Clear Warp's caches so the next run rebuilds everything."""
    wp.clear_kernel_cache()
    wp.clear_lto_cache()


def main():
    _fresh_start()
    reset_caches()
    kernels.run()
'''
HEATGRID_AFTER = '''\
"""Heat diffusion on a grid."""

from heatgrid import kernels


def reset_caches():
    """Clear Warp's caches so the next run rebuilds everything."""
    # It cleared or discarded the kernel cache, which is now kept between runs.


def main():
    reset_caches()
    kernels.run()
'''


SWEEP_BEFORE = '''\
"""Benchmark entry point: time the solver over a sweep of grid sizes."""

import argparse
import atexit
import os
import shutil
import tempfile

import numpy as np
import warp as wp

from benchsuite.solver import solve


def main(argv: list[str] | None = None) -> None:
    """Run the sweep and print the median time of each size."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--out", default=os.path.join("results", "sweep.txt"))
    args = parser.parse_args(argv)
    wp.config.kernel_cache_dir = tempfile.mkdtemp(prefix="bench-")
    atexit.register(shutil.rmtree, wp.config.kernel_cache_dir)
    os.environ["CUDA_CACHE_DISABLE"] = "1"
    wp.init()
    with open(args.out, "w") as out:
        for size in args.sizes:
            times = [solve(size) for _ in range(5)]
            print(size, np.median(times), file=out)


if __name__ == "__main__":
    main()
'''
SWEEP_AFTER = '''\
"""Benchmark entry point: time the solver over a sweep of grid sizes."""

import argparse
import os

import numpy as np
import warp as wp

from benchsuite.solver import solve


def main(argv: list[str] | None = None) -> None:
    """Run the sweep and print the median time of each size."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--out", default=os.path.join("results", "sweep.txt"))
    args = parser.parse_args(argv)
    wp.init()
    with open(args.out, "w") as out:
        for size in args.sizes:
            times = [solve(size) for _ in range(5)]
            print(size, np.median(times), file=out)


if __name__ == "__main__":
    main()
'''


class KeepCache(WarpCodemod):
    """Removes statements, by exact site, that make every run a cold start: the kernel cache cleared
    or disabled, a per-run temporary `kernel_cache_dir` (and its removal at exit), or the CUDA driver
    cache disabled. Give all the sites of one program in one call: they are one fix. Maintenance code
    (e.g. a `--rebuild` path) is protected by name and keeps clearing.

    Recognised statements: `wp.clear_kernel_cache()`, `wp.clear_lto_cache()`,
    `wp.config.cache_kernels = False`, `wp.config.kernel_cache_dir = <temporary dir>` (a
    `tempfile.mkdtemp()`/`TemporaryDirectory()` call, a name bound to one, or a call `helper()` of a
    per-run helper), `shutil.rmtree(<that dir>)` and `atexit.register(shutil.rmtree, <that dir>)`,
    `os.environ["CUDA_CACHE_DISABLE"] = ...` and `os.environ.setdefault("CUDA_CACHE_DISABLE", ...)`.
    Imports left unused are removed; an emptied block gets `pass`. A function left without statements
    is no empty shell: a private one only called as a bare statement goes with its calls (note
    "removed-helper"); any other keeps its docstring (note "stale-docstring") and a comment saying why
    it is empty (note "emptied-function"). A comment on or right above a removed line goes with it (note
    "removed-comment"). A name bound to the temporary directory (`d = tempfile.mkdtemp()`) that nothing
    else reads once the assignment is gone goes too (note "removed-binding").

    A per-run helper is a top-level def of this file whose body makes a temporary directory, or a
    function named in `helpers` (defined in another file: the run proved its directory per-run).
    Once the assignment is gone, a helper defined here that nothing else uses is removed, with the
    cleanup it registers (note "removed-helper"); one still used elsewhere is kept whole, cleanup
    included (note "kept-helper"); an imported one is left to its file (note "kept-helper").

    A line that holds no statement of a recognised kind is taken as already fixed (idempotence),
    and left alone. Refuses when a site is inside a protected function, when a recognised kind has
    the wrong target (`kernel_cache_dir` set to a fixed path or by a function that is not a per-run
    helper, `rmtree` of another directory, `cache_kernels = True`).
    """

    NAME = "keep_cache"
    ARGS_TYPE = KeepCacheArgs
    DESCRIPTION = "Remove given cache-destroying statements (clear_kernel_cache, temp cache dirs, ...)."
    EXAMPLES = (
        Example(
            title="per-run temporary cache and a clear at start",
            args={"file": "app.py", "lines": [7, 8, 9], "protected_functions": ["rebuild"]},
            before=(
                "import atexit\nimport shutil\nimport tempfile\n\nimport warp as wp\n\n"
                "wp.config.kernel_cache_dir = tempfile.mkdtemp()\n"
                "atexit.register(shutil.rmtree, wp.config.kernel_cache_dir)\n"
                "wp.clear_kernel_cache()\n\n\ndef rebuild():\n    wp.clear_kernel_cache()\n"
            ),
            after="import warp as wp\n\n\ndef rebuild():\n    wp.clear_kernel_cache()\n",
            notes=("imports left unused removed: atexit, shutil, tempfile",),
        ),
        Example(
            title="CUDA driver cache disabled inside main()",
            args={"file": "app.py", "lines": [6]},
            before=(
                "import os\nimport warp as wp\n\n\ndef main():\n"
                '    os.environ["CUDA_CACHE_DISABLE"] = "1"\n    wp.init()\n'
            ),
            after="import warp as wp\n\n\ndef main():\n    wp.init()\n",
            notes=("imports left unused removed: os",),
        ),
        Example(
            title="a helper makes the per-run directory: it goes, with every other cache-destroying statement",
            args={"file": "app.py", "lines": [16, 17, 18, 19], "protected_functions": ["rebuild_caches"]},
            before=(
                "import atexit\nimport os\nimport shutil\nimport tempfile\n\nimport warp as wp\n\n\n"
                "def _fresh_cache_dir():\n    path = tempfile.mkdtemp(prefix=\"wp-\")\n"
                "    atexit.register(shutil.rmtree, path, ignore_errors=True)\n    return path\n\n\n"
                "def main():\n    wp.config.kernel_cache_dir = _fresh_cache_dir()\n"
                "    wp.config.cache_kernels = False\n    os.environ[\"CUDA_CACHE_DISABLE\"] = \"1\"\n"
                "    wp.clear_kernel_cache()\n    wp.init()\n\n\n"
                "def rebuild_caches():\n    wp.clear_kernel_cache()\n"
            ),
            after=(
                "import warp as wp\n\n\n"
                "def main():\n    wp.init()\n\n\n"
                "def rebuild_caches():\n    wp.clear_kernel_cache()\n"
            ),
            notes=(
                "_fresh_cache_dir() made the per-run kernel cache directory and nothing else used it: removed "
                "(its cleanup at exit with it)",
                "imports left unused removed: atexit, os, shutil, tempfile",
            ),
        ),
        Example(
            title="a helper used for something else too stays, cleanup included",
            args={"file": "app.py", "lines": [12]},
            before=(
                "import tempfile\n\nimport warp as wp\n\n\n"
                "def scratch_dir():\n    return tempfile.mkdtemp()\n\n\n"
                "def main():\n    out = scratch_dir()\n"
                "    wp.config.kernel_cache_dir = scratch_dir()\n    wp.init()\n    return out\n"
            ),
            after=(
                "import tempfile\n\nimport warp as wp\n\n\n"
                "def scratch_dir():\n    return tempfile.mkdtemp()\n\n\n"
                "def main():\n    out = scratch_dir()\n    wp.init()\n    return out\n"
            ),
            notes=(
                "scratch_dir() no longer sets the kernel cache directory but is used elsewhere: kept, "
                "with its cleanup",
            ),
        ),
        Example(
            title="a name bound to the temporary directory goes when nothing else reads it",
            args={"file": "app.py", "lines": [9, 11]},
            before=(
                "import shutil\nimport tempfile\n\nimport warp as wp\n\n\ndef main():\n"
                "    cache = tempfile.mkdtemp()\n    wp.config.kernel_cache_dir = cache\n    wp.init()\n"
                "    shutil.rmtree(cache)\n"
            ),
            after="import warp as wp\n\n\ndef main():\n    wp.init()\n",
            notes=(
                "`cache` held the per-run kernel cache directory and nothing else used it: removed",
                "imports left unused removed: shutil, tempfile",
            ),
        ),
        Example(
            title="a comment that explained the removed line goes with it, and the note says so",
            args={"file": "app.py", "lines": [6]},
            before=(
                "import warp as wp\n\n\ndef main():\n"
                "    # Start from a clean cache so timings are comparable.\n"
                "    wp.clear_kernel_cache()\n    wp.init()\n"
            ),
            after="import warp as wp\n\n\ndef main():\n    wp.init()\n",
            notes=("line 6: its comment went with it: # Start from a clean cache so timings are comparable.",),
        ),
        Example(
            title="a project's functions left empty: the private one goes with its call, the public one says why",
            args={"file": "heatgrid/app.py", "lines": [10, 15, 16]},
            before=HEATGRID_BEFORE,
            after=HEATGRID_AFTER,
            notes=(
                "_fresh_start() was left empty and only called: removed, with its calls",
                "reset_caches() was left empty: kept for its callers, with a comment",
                "reset_caches(): its docstring describes the cache work, no longer done",
                "imports left unused removed: wp",
            ),
        ),
        Example(
            title="a project's benchmark entry point: the per-run cache goes, the imports it used with it",
            args={"file": "benchsuite/sweep.py", "lines": [21, 22, 23]},
            before=SWEEP_BEFORE,
            after=SWEEP_AFTER,
            notes=(
                "imports left unused removed: atexit, shutil, tempfile",
            ),
            project_style=True,
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\n\n\ndef rebuild():\n    wp.clear_kernel_cache()\n",
            args={"lines": [5], "protected_functions": ["rebuild"]},
            reason="protected",
        ),
        Refusal(
            before="import warp as wp\n\nwp.config.kernel_cache_dir = '/data/cache'\n",
            args={"lines": [3]},
            reason="not a per-run temporary directory",
        ),
        Refusal(
            before="import warp as wp\nfrom .paths import cache_dir\n\nwp.config.kernel_cache_dir = cache_dir()\n",
            args={"lines": [4]},
            reason="cache_dir() is not a per-run temporary directory",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        self._tree = tree
        self._helpers: set[str] = set()
        protected_names = set(self.args["protected_functions"] or [])
        temp = _LazyTempNames(tree)
        cache_dirs = _LazyCacheDirs(warp, temp)

        doomed: list[cst.BaseSmallStatement] = []
        tops: list[cst.CSTNode] = []
        for line in self.args["lines"] or []:
            # only the top-level statement holding the line is looked at (positions included)
            index = self.lines.index_at_line(int(line))
            if index is None:
                continue
            by_line = self.lines.small_statements_by_line(int(line))
            positions = self.lines.positions(index)
            protected = None
            for small in by_line.get(int(line), []):
                if positions[small].start.line != int(line):
                    continue
                if not self._destroys_cache(small, warp, temp, cache_dirs):
                    continue
                if protected is None:  # a protected def spanning the line lies in the same statement
                    protected = [
                        (f.node.name.value, positions[f.node].start.line, positions[f.node].end.line)
                        for f in find_functions(cst.Module(body=[tree.body[index]]))
                        if f.node.name.value in protected_names
                    ]
                for fname, start, end in protected:
                    if start <= line <= end:
                        raise self.refuse(f"line {line} is in {fname}(), a protected maintenance function")
                doomed.append(small)
                tops.append(tree.body[index])
                self._note_comment(int(line))
        shells_before = shell_names(tree) if doomed else set()
        tree = remove_statements(tree, doomed, within=tops)
        candidates = {n for small in doomed for n in _root_names(small)}
        tree, unbound = self._drop_unused_temp_dirs(tree, doomed, temp)
        candidates |= unbound
        if doomed:
            tree = self.clear_emptied_functions(tree, shell_names(tree) - shells_before, WHY_EMPTY, "the cache work")
        if self._helpers:
            tree, helper_names = self._clean_helpers(tree)
            candidates |= helper_names
        text = self.code_of(tree) + self.elided_text if candidates else None
        cleaned = remove_unused_imports(tree, candidates, text)
        removed = _import_bindings(tree) - _import_bindings(cleaned)
        if removed:
            self.note("removed-import", f"imports left unused removed: {', '.join(sorted(removed))}")
        return cleaned

    def _drop_unused_temp_dirs(
        self, tree: cst.Module, doomed: list[cst.BaseSmallStatement], temp: _LazyTempNames
    ) -> tuple[cst.Module, set[str]]:
        """`d = tempfile.mkdtemp()` whose `d` only the removed `kernel_cache_dir = d` (and its cleanup) used:
        left, it would still make a directory every run, in a variable nothing reads (ruff's F841). Returns
        the tree and the names the removed bindings used (candidates for unused imports)."""
        names = {
            code(small.value)
            for small in doomed
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and code(small.value) in temp
        }
        if not names:
            return tree, set()
        text = self.code_of(tree) + self.elided_text
        unbound: set[str] = set()
        for name in sorted(names):
            bindings = [
                small
                for stmt, _parents, _top in iter_statements(tree)
                if isinstance(stmt, cst.SimpleStatementLine)
                for small in stmt.body
                if isinstance(small, cst.Assign)
                and [code(t.target) for t in small.targets] == [name]
                and _is_temp_dir_call(small.value)
            ]
            if not bindings or len(re.findall(rf"\b{re.escape(name)}\b", text)) != len(bindings):
                continue  # used for something else too: kept
            tree = remove_statements(tree, bindings)
            unbound |= {n for small in bindings for n in _root_names(small.value)}
            self.note(
                "removed-binding",
                f"`{name}` held the per-run kernel cache directory and nothing else used it: removed",
            )
        return tree, unbound

    def _note_comment(self, line: int) -> None:
        """The comment lines that explained a removed line go with it: the note keeps them for the body."""
        stmt = self.lines.statement_at_line(line)
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return
        comments = [ln.comment.value for ln in stmt.leading_lines if ln.comment is not None]
        if stmt.trailing_whitespace.comment is not None:
            comments.append(stmt.trailing_whitespace.comment.value)
        if comments:
            self.note("removed-comment", f"line {line}: its comment went with it: {' '.join(comments)}")

    def _destroys_cache(
        self, small: cst.BaseSmallStatement, warp: WarpImports, temp: _LazyTempNames, cache_dirs: _LazyCacheDirs
    ) -> bool:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            if warp.is_call_to(call, "clear_kernel_cache", "clear_lto_cache"):
                return True
            name = _call_name(call)
            if name.rsplit(".", 1)[-1] == "rmtree" and call.args:
                return self._removes_cache_dir(call.args[0].value, cache_dirs, code(small))
            is_register = name.endswith("atexit.register") or name == "register"
            first = code(call.args[0].value) if call.args else ""
            if is_register and len(call.args) >= 2 and first.rsplit(".", 1)[-1] == "rmtree":
                return self._removes_cache_dir(call.args[1].value, cache_dirs, code(small))
            if name.endswith("environ.setdefault") and call.args:
                ok, key = literal_value(call.args[0].value)
                return ok and key == "CUDA_CACHE_DISABLE"
            return False
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            qualified = warp.qualify(target)
            if qualified == "warp.config.cache_kernels":
                ok, value = literal_value(small.value)
                if ok and value is False:
                    return True
                raise self.refuse(f"`{code(small)}` does not disable the cache")
            if qualified == "warp.config.kernel_cache_dir":
                if _is_temp_dir_call(small.value) or code(small.value) in temp:
                    return True
                helper = self._per_run_helper(small.value)
                if helper is not None:
                    self._helpers.add(helper)
                    return True
                raise self.refuse(
                    f"`{code(small)}`: {code(small.value)} is not a per-run temporary directory "
                    "(a helper that makes one is named in `helpers` or defined in this file)"
                )
            if isinstance(target, cst.Subscript) and code(target.value).endswith("environ"):
                ok, key = literal_value(target.slice[0].slice.value) if target.slice else (False, None)
                return ok and key == "CUDA_CACHE_DISABLE"
        return False

    def _per_run_helper(self, value: cst.BaseExpression) -> str | None:
        """`helper()` where `helper` is a top-level def of this file that makes a temporary directory,
        or a function named in `helpers` (the run proved the directory per-run)."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return None
        name = value.func.value
        if name in (self.args["helpers"] or []):
            return name
        found = _top_level_def(self._tree, name)
        if found is not None and _makes_temp_dir(found):
            return name
        return None

    def _clean_helpers(self, tree: cst.Module) -> tuple[cst.Module, set[str]]:
        """Removes the helpers (defined here) that nothing uses any more; notes the others. Returns the
        tree and the names the removed defs used (candidates for unused imports)."""
        names: set[str] = set()
        for helper in sorted(self._helpers):
            text = self.code_of(tree) + self.elided_text
            uses = len(re.findall(rf"\b{re.escape(helper)}\b", text))
            found = _top_level_def(tree, helper)
            if found is None:
                if uses:
                    self.note("kept-helper", f"{helper}() is defined in another file; it may be unused now")
                continue
            own = len(re.findall(rf"\b{re.escape(helper)}\b", code(found)))
            if uses > own:
                self.note(
                    "kept-helper",
                    f"{helper}() no longer sets the kernel cache directory but is used elsewhere: kept, "
                    "with its cleanup",
                )
                continue
            tree = tree.with_changes(body=[stmt for stmt in tree.body if stmt is not found])
            names |= _root_names(found) - {helper}
            self.note(
                "removed-helper",
                f"{helper}() made the per-run kernel cache directory and nothing else used it: removed "
                "(its cleanup at exit with it)",
            )
        return tree, names

    def _removes_cache_dir(self, arg: cst.BaseExpression, cache_dirs: _LazyCacheDirs, text: str) -> bool:
        if code(arg).replace(" ", "") in cache_dirs:
            return True
        raise self.refuse(f"`{text}` removes {code(arg)}, not the kernel cache directory")


class _LazyTempNames:
    """The names bound to a temporary directory anywhere in the file, collected on first use only."""

    def __init__(self, tree: cst.Module) -> None:
        self._tree = tree
        self._names: set[str] | None = None

    def __contains__(self, name: object) -> bool:
        if self._names is None:
            visitor = _TempNames()
            self._tree.visit(visitor)
            self._names = visitor.names
        return name in self._names


class _LazyCacheDirs:
    """Expressions naming the kernel cache directory: `<alias>.config.kernel_cache_dir` or a temp name."""

    def __init__(self, warp: WarpImports, temp: _LazyTempNames) -> None:
        self._exprs = {f"{alias}.config.kernel_cache_dir" for alias in warp.module_aliases}
        self._temp = temp

    def __contains__(self, expr: object) -> bool:
        return expr in self._exprs or expr in self._temp


__all__ = ["KeepCache"]
