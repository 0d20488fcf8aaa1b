"""config_at_entry: set a process-wide `wp.config.X = V` at the entry point, before library imports."""

from __future__ import annotations

import libcst as cst

from ._base import Arg, Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    config_target,
    header_end,
    imported_module,
    insert_at,
    literal_value,
    parse_stmt,
    py_literal,
    remove_statements,
)


def _imports_warp_module(stmt: cst.BaseStatement) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Import) and any(code(a.name) == "warp" for a in small.names):
            return True
    return False


def _reaches(stmt: cst.BaseStatement, target: str) -> bool:
    """True when the import line imports `target` or a module inside/above it."""
    return any(
        mod == target or mod.startswith(target + ".") or target.startswith(mod + ".")
        for mod in imported_module(stmt)
        if mod != "warp" and not mod.startswith("warp.")
    )


class ConfigAtEntry(WarpCodemod):
    """Puts `wp.config.<name> = <value>` in the entry-point file right after `import warp as wp`,
    so every Warp module created by later imports captures it (options such as `enable_backward`
    are copied from `wp.config` when a module is created; a later assignment is silently ignored).

    A late assignment (given by `line`, possibly inside a function) is moved, not duplicated; an
    assignment already in place is left alone. When `import warp` comes after the first import of
    `before_import`, the `import warp` line moves up to just before that import.

    args:
      file (str): the entry-point file (relative to the repo root).
      name (str): the `wp.config` attribute, e.g. "enable_backward".
      value (JSON value): the value to assign, e.g. false.
      before_import (str, optional): dotted module the setting must reach, e.g. "pkg.sim"; the
        assignment must precede its first top-level import.
      line (int, optional): line of a late `wp.config.<name> = ...` assignment to move.

    Refuses when the late assignment on `line` is missing or assigns another value, when another
    top-level assignment of the same attribute conflicts, or when `import warp` cannot be moved up
    (it shares its line with other imports).
    """

    NAME = "config_at_entry"
    DESCRIPTION = "Set wp.config.<name> right after `import warp` in the entry point, before library imports."
    ARGS = (
        Arg("name", "str", "wp.config attribute, e.g. enable_backward", required=True),
        Arg("value", "json", "value to assign, e.g. false", required=True),
        Arg("before_import", "str", "dotted module the setting must reach, e.g. pkg.sim"),
        Arg("line", "int", "line of a late wp.config.<name> assignment to move"),
    )
    EXAMPLES = (
        Example(
            title="move a late assignment from main() to the top",
            args={"file": "app.py", "name": "enable_backward", "value": False, "line": 7},
            before=(
                "import warp as wp\n\nfrom pkg import sim\n\n\ndef main():\n"
                "    wp.config.enable_backward = False\n    sim.run()\n"
            ),
            after=(
                "import warp as wp\nwp.config.enable_backward = False\n\nfrom pkg import sim\n\n\n"
                "def main():\n    sim.run()\n"
            ),
        ),
        Example(
            title="import warp comes after the library import: it moves up",
            args={"file": "app.py", "name": "enable_backward", "value": False, "before_import": "mysim"},
            before="import mysim\nimport warp as wp\n\nmysim.run()\n",
            after="import warp as wp\nwp.config.enable_backward = False\nimport mysim\n\nmysim.run()\n",
        ),
        Example(
            title="already in place: no change",
            args={"file": "app.py", "name": "max_unroll", "value": 8},
            before="import warp\nwarp.config.max_unroll = 8\nimport lib\n",
            after="import warp\nwarp.config.max_unroll = 8\nimport lib\n",
        ),
    )
    REFUSALS = (
        Refusal(
            before="import warp as wp\n\nwp.config.enable_backward = True\n",
            args={"name": "enable_backward", "value": False, "line": 3},
            reason="assigns True, not False",
        ),
        Refusal(
            before="import warp as wp\nimport os\n",
            args={"name": "enable_backward", "value": False, "line": 2},
            reason="no wp.config.enable_backward assignment on line 2",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        warp = WarpImports.of(tree)
        name, value = self.args["name"], self.args["value"]
        alias = warp.alias or "wp"
        wanted = parse_stmt(f"{alias}.config.{name} = {py_literal(value)}")

        self._tops: list[cst.CSTNode] = []
        doomed = self._late_assignments(tree, warp)
        tree = remove_statements(tree, doomed, within=self._tops)

        body = list(tree.body)
        warp_index = next((i for i, s in enumerate(body) if _imports_warp_module(s)), None)
        target = self.args["before_import"]
        target_index = next((i for i, s in enumerate(body) if target and _reaches(s, target)), None)
        limit = target_index if target_index is not None else len(body)

        if warp_index is not None and warp_index < limit:
            for stmt in body[warp_index + 1 : limit]:
                if config_target(stmt, warp) == name:
                    return tree  # already in place (value checked by _late_assignments)
            return tree.with_changes(body=insert_at(body, warp_index + 1, [wanted]))

        if warp_index is None:
            index = target_index if target_index is not None else header_end(tree, warp)
            new_import = parse_stmt(f"import warp as {alias}" if alias != "warp" else "import warp")
            return tree.with_changes(body=insert_at(body, index, [new_import, wanted]))

        # `import warp` comes after the import the setting must reach: move it up.
        warp_line = body[warp_index]
        assert isinstance(warp_line, cst.SimpleStatementLine) and target_index is not None
        if len(warp_line.body) != 1 or len(warp_line.body[0].names) != 1:  # type: ignore[attr-defined]
            raise self.refuse(f"`{code(warp_line).strip()}` imports more than warp; cannot move it up")
        del body[warp_index]
        moved = warp_line.with_changes(leading_lines=body[target_index].leading_lines)
        body[target_index] = body[target_index].with_changes(leading_lines=[])
        return tree.with_changes(body=insert_at(body, target_index, [moved, wanted]))

    def _late_assignments(self, tree: cst.Module, warp: WarpImports) -> list[cst.BaseSmallStatement]:
        """Assignments to remove: the one on `line`, and conflicting-position top-level duplicates."""
        name, value = self.args["name"], self.args["value"]
        line = self.args["line"]
        doomed: list[cst.BaseSmallStatement] = []
        if line is not None:
            by_line = self.lines.small_statements_by_line(line)
            hits = [
                s
                for s in by_line.get(line, [])
                if config_target(cst.SimpleStatementLine(body=[s]), warp) == name
            ]
            if not hits:
                if self._top_level_values(tree, warp):
                    return []  # moved already: nothing left on that line
                raise self.refuse(f"no wp.config.{name} assignment on line {line}")
            doomed += hits
            index = self.lines.index_at_line(line)
            assert index is not None
            self._tops.append(tree.body[index])
        in_place = self._in_place(tree, warp)
        for stmt, found in self._top_level_values(tree, warp):
            if found != value:
                raise self.refuse(f"`{code(stmt).strip()}` assigns {found!r}, not {value!r}")
            if stmt.body[0] not in doomed and stmt is not in_place:
                doomed.append(stmt.body[0])
                self._tops.append(stmt)
        for small in doomed:
            assert isinstance(small, cst.Assign)
            ok, found = literal_value(small.value)
            if not ok or found != value:
                raise self.refuse(f"`{code(small)}` assigns {code(small.value)}, not {py_literal(value)}")
        return doomed

    def _top_level_values(
        self, tree: cst.Module, warp: WarpImports
    ) -> list[tuple[cst.SimpleStatementLine, object]]:
        out = []
        for stmt in tree.body:
            if config_target(stmt, warp) == self.args["name"]:
                assert isinstance(stmt, cst.SimpleStatementLine)
                small = stmt.body[0]
                assert isinstance(small, cst.Assign)
                ok, found = literal_value(small.value)
                out.append((stmt, found if ok else code(small.value)))
        return out

    def _in_place(self, tree: cst.Module, warp: WarpImports) -> cst.BaseStatement | None:
        """The top-level assignment already between `import warp` and the target import, if any."""
        body = list(tree.body)
        target = self.args["before_import"]
        seen_warp = False
        for stmt in body:
            if target and _reaches(stmt, target):
                return None
            if _imports_warp_module(stmt):
                seen_warp = True
            elif seen_warp and config_target(stmt, warp) == self.args["name"]:
                return stmt
        return None


__all__ = ["ConfigAtEntry"]
