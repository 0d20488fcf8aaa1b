"""config_at_entry: set a process-wide `wp.config.X = V` at the entry point, before library imports."""

from __future__ import annotations

import sys

import libcst as cst

from ._base import Example, Refusal, WarpCodemod
from ._cst import (
    WarpImports,
    code,
    config_target,
    fenced_above_imports,
    header_end,
    imported_module,
    insert_at,
    is_import_line,
    literal_value,
    parse_stmt,
    py_literal,
    remove_statements,
)
from .specs import ConfigAtEntryArgs


def _imports_warp_module(stmt: cst.BaseStatement) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Import) and any(code(a.name) == "warp" for a in small.names):
            return True
    return False


def _is_relative_import(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, cst.ImportFrom) and s.relative for s in stmt.body
    )


def _first_relative_import(body: list[cst.BaseStatement]) -> int | None:
    """With no statement from the run to go above: the first relative import (a project import, which may create
    Warp modules), else None."""
    return next((i for i, s in enumerate(body) if _is_relative_import(s)), None)


def _is_project_import(stmt: cst.BaseStatement, packages: set[str]) -> bool:
    """A relative import, or an import of one of the anchor's top-level packages (isort's first-party section)."""
    if not is_import_line(stmt):
        return False
    return _is_relative_import(stmt) or any(m.split(".")[0] in packages for m in imported_module(stmt))


def _bare(line: str) -> str:
    """A source line without its indentation and trailing comment (a `# noqa` an earlier edit added)."""
    return line.split("#", 1)[0].strip()


def _holds(statement_code: str, text: str) -> bool:
    """The statement has a line that reads `text` (comments aside)."""
    wanted = _bare(text)
    return bool(wanted) and any(_bare(line) == wanted for line in statement_code.splitlines())


def _is_third_party_import(stmt: cst.BaseStatement) -> bool:
    """An absolute import of a package outside the standard library (isort's third-party section)."""
    modules = imported_module(stmt)
    return (
        is_import_line(stmt)
        and not _is_relative_import(stmt)
        and bool(modules)
        and all(m.split(".")[0] not in sys.stdlib_module_names for m in modules)
    )


def _with_blank_line(stmt: cst.BaseStatement) -> cst.BaseStatement:
    """`stmt` separated from what precedes it by a blank line (isort's section break), comments kept."""
    if any(line.comment is None for line in stmt.leading_lines):
        return stmt
    return stmt.with_changes(leading_lines=[cst.EmptyLine(), *stmt.leading_lines])


# Why the setting stays above the imports after it: the comment that heads it in the edited file.
WHY_ABOVE_IMPORTS = "Before the imports below: a Warp module reads {alias}.config when it is created."


def _placed(
    tree: cst.Module, body: list[cst.BaseStatement], at: int, new: list[cst.BaseStatement], alias: str
) -> cst.Module:
    """`new` (ending with the setting) inserted at `at`, fenced so that no linter or sorter moves it."""
    setting = at + len(new) - 1
    why = WHY_ABOVE_IMPORTS.format(alias=alias)
    return tree.with_changes(body=fenced_above_imports(insert_at(body, at, new), setting, why))


# A script as a project writes it (its license header, `import warp` without an alias, single quotes): the
# setting moves above the project's imports, which keep their layout.
DRAPE_BEFORE = """\
# SPDX-License-Identifier: Apache-2.0
\"\"\"Drape a cloth over a sphere and write the frames to USD.\"\"\"

from __future__ import annotations

import argparse
import os.path

import numpy as np
import warp
import warp.render

from cloth.integrators import (
    SemiImplicitIntegrator,
    XPBDIntegrator,
)
from cloth.model import build_grid


def main() -> None:
    \"\"\"Drape the cloth with each integrator in turn.\"\"\"
    parser = argparse.ArgumentParser()
    parser.add_argument('--out', default=os.path.join('out', 'cloth.usd'))
    args = parser.parse_args()
    model = build_grid(np.zeros(3))
    warp.config.enable_backward = False
    renderer = warp.render.UsdRenderer(args.out)
    for integrator in (SemiImplicitIntegrator(model), XPBDIntegrator(model)):
        integrator.run(renderer)


if __name__ == '__main__':
    main()
"""
DRAPE_AFTER = """\
# SPDX-License-Identifier: Apache-2.0
\"\"\"Drape a cloth over a sphere and write the frames to USD.\"\"\"

from __future__ import annotations

import argparse
import os.path

import numpy as np
import warp
import warp.render

# Before the imports below: a Warp module reads warp.config when it is created.
warp.config.enable_backward = False
# isort: split

from cloth.integrators import (  # noqa: E402
    SemiImplicitIntegrator,
    XPBDIntegrator,
)
from cloth.model import build_grid  # noqa: E402


def main() -> None:
    \"\"\"Drape the cloth with each integrator in turn.\"\"\"
    parser = argparse.ArgumentParser()
    parser.add_argument('--out', default=os.path.join('out', 'cloth.usd'))
    args = parser.parse_args()
    model = build_grid(np.zeros(3))
    renderer = warp.render.UsdRenderer(args.out)
    for integrator in (SemiImplicitIntegrator(model), XPBDIntegrator(model)):
        integrator.run(renderer)


if __name__ == '__main__':
    main()
"""


# An entry script whose setup call imports the library (a runner configuring its solver package): the
# modules exist once the call returns, so the setting goes above the call, not above the import after it.
SETUP_BEFORE = """\
\"\"\"Run the benchmark suite.\"\"\"

import sys

import warp as wp

from bench.setup import setup_environment

setup_environment(sys.argv[1:])

from bench import report  # noqa: E402

report.run()
"""
SETUP_AFTER = """\
\"\"\"Run the benchmark suite.\"\"\"

import sys

import warp as wp

from bench.setup import setup_environment

wp.config.enable_backward = False

setup_environment(sys.argv[1:])

from bench import report  # noqa: E402

report.run()
"""


class ConfigAtEntry(WarpCodemod):
    """Puts `wp.config.<name> = <value>` in the entry-point file above the top-level statement that created the
    target modules, so they capture it (options such as `enable_backward` are copied from `wp.config` when a module
    is created; a later assignment is silently ignored).

    That statement is the one the run showed creating them (`before_line`, with `before_statement`, its source
    line as the run read it): an import (`import pkg`, `import pkg as p`, `from pkg import solver`) or a call that
    imports the library (`setup()`). It is the top-level statement holding `before_line` when that statement reads
    `before_statement`, else the one statement that does (an earlier edit moved it); none, or several, is refused:
    the setting is never placed by a guess.

    Placement, in one edit, as isort/ruff would leave the imports: the setting goes right after
    `import warp as wp` (a blank line between them), and both come before that statement; more precisely before
    the run of project imports holding it (relative imports and imports of its top-level packages), which then
    starts after a blank line. A new (or moved-up) `import warp as wp` joins a third-party import block right
    before it, or gets a blank line after stdlib imports. After an `import warp` followed only by third-party
    imports, the setting goes after the last of them; after one further up, right after it. Without a statement
    from the run (the targets were created inside a function the entry point calls), the setting goes right after
    `import warp`, before the first relative import (or, with no `import warp`, both go after the import header).

    The imports after the setting must stay after it, whatever tool runs next: the setting is headed by
    a comment saying why, followed by isort's `# isort: split` fence (which ruff honours too), and each
    import after it, up to the next other statement, carries `# noqa: E402` (merged into a noqa already
    there).

    A late assignment (given by `line`, possibly inside a function) is moved, not duplicated; an
    assignment already in place is left alone. When `import warp` comes after the statement, the
    `import warp` line moves up.

    Refuses when the statement the run named matches no top-level statement (or several), when the late
    assignment on `line` is missing or assigns another value, when another top-level assignment of the same
    attribute conflicts, or when `import warp` cannot be moved up (it shares its line with other imports).
    """

    NAME = "config_at_entry"
    ARGS_TYPE = ConfigAtEntryArgs
    DESCRIPTION = "Set wp.config.<name> in the entry point, above the statement the run showed creating its targets."
    EXAMPLES = (
        Example(
            title="move a late assignment from main() to the top",
            args={
                "file": "app.py", "name": "enable_backward", "value": False, "line": 7,
                "before_line": 3, "before_statement": "from pkg import sim",
            },
            before=(
                "import warp as wp\n\nfrom pkg import sim\n\n\ndef main():\n"
                "    wp.config.enable_backward = False\n    sim.run()\n"
            ),
            after=(
                "import warp as wp\n\n"
                "# Before the imports below: a Warp module reads wp.config when it is created.\n"
                "wp.config.enable_backward = False\n# isort: split\n\n"
                "from pkg import sim  # noqa: E402\n\n\ndef main():\n    sim.run()\n"
            ),
        ),
        Example(
            title="import warp comes after the library import: it moves up",
            args={
                "file": "app.py", "name": "enable_backward", "value": False,
                "before_line": 1, "before_statement": "import mysim",
            },
            before="import mysim\nimport warp as wp\n\nmysim.run()\n",
            after=(
                "import warp as wp\n\n"
                "# Before the imports below: a Warp module reads wp.config when it is created.\n"
                "wp.config.enable_backward = False\n# isort: split\n\n"
                "import mysim  # noqa: E402\n\nmysim.run()\n"
            ),
        ),
        Example(
            title="a package's __main__.py: before its first relative import, in isort's sections",
            args={
                "file": "pkg/__main__.py", "name": "enable_backward", "value": False,
                "before_line": 5, "before_statement": "from .sim import simulate",
            },
            before=(
                '"""python -m pkg"""\n\nimport argparse\n\nfrom .sim import simulate\n\n\n'
                "def main():\n    simulate(argparse.ArgumentParser().parse_args())\n"
            ),
            after=(
                '"""python -m pkg"""\n\nimport argparse\n\nimport warp as wp\n\n'
                "# Before the imports below: a Warp module reads wp.config when it is created.\n"
                "wp.config.enable_backward = False\n# isort: split\n\n"
                "from .sim import simulate  # noqa: E402\n\n\n"
                "def main():\n    simulate(argparse.ArgumentParser().parse_args())\n"
            ),
        ),
        Example(
            title="a script: warp joins the third-party imports, the project's import comes after the setting",
            args={
                "file": "run.py", "name": "enable_backward", "value": False,
                "before_line": 5, "before_statement": "import mypkg",
            },
            before=(
                "import os\n\nimport numpy as np\n\nimport mypkg\nfrom mypkg import io\n\n"
                "mypkg.run(np.zeros(3), io, os.getcwd())\n"
            ),
            after=(
                "import os\n\nimport numpy as np\nimport warp as wp\n\n"
                "# Before the imports below: a Warp module reads wp.config when it is created.\n"
                "wp.config.enable_backward = False\n# isort: split\n\n"
                "import mypkg  # noqa: E402\nfrom mypkg import io  # noqa: E402\n\n"
                "mypkg.run(np.zeros(3), io, os.getcwd())\n"
            ),
        ),
        Example(
            title="a project's script: its `import warp`, its quotes, a parenthesized import",
            args={
                "file": "examples/drape.py",
                "name": "enable_backward",
                "value": False,
                "before_line": 13,
                "before_statement": "from cloth.integrators import (",
                "line": 26,
            },
            before=DRAPE_BEFORE,
            after=DRAPE_AFTER,
            project_style=True,
        ),
        Example(
            title="a setup call at module scope imports the library: the setting goes above the call",
            args={
                "file": "run.py", "name": "enable_backward", "value": False,
                "before_line": 9, "before_statement": "setup_environment(sys.argv[1:])",
            },
            before=SETUP_BEFORE,
            after=SETUP_AFTER,
        ),
        Example(
            title="an aliased import created the modules",
            args={
                "file": "run.py", "name": "enable_backward", "value": False,
                "before_line": 4, "before_statement": "import fluids as fl",
            },
            before="import numpy as np\nimport warp as wp\n\nimport fluids as fl\n\nfl.run(np.zeros(3))\n",
            after=(
                "import numpy as np\nimport warp as wp\n\n"
                "# Before the imports below: a Warp module reads wp.config when it is created.\n"
                "wp.config.enable_backward = False\n# isort: split\n\n"
                "import fluids as fl  # noqa: E402\n\nfl.run(np.zeros(3))\n"
            ),
        ),
        Example(
            title="the statement moved since the run (an edit above it): found by its text",
            args={
                "file": "run.py", "name": "enable_backward", "value": False,
                "before_line": 2, "before_statement": "import fluids",
            },
            before='"""Pour."""\n\nimport warp as wp\n\nimport fluids\n\nfluids.run()\n',
            after=(
                '"""Pour."""\n\nimport warp as wp\n\n'
                "# Before the imports below: a Warp module reads wp.config when it is created.\n"
                "wp.config.enable_backward = False\n# isort: split\n\n"
                "import fluids  # noqa: E402\n\nfluids.run()\n"
            ),
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
            before="import warp as wp\nimport fluids\n\nfluids.run()\n",
            args={"name": "enable_backward", "value": False, "before_line": 2, "before_statement": "import fluids.sim"},
            reason="`import fluids.sim` (line 2) matches no top-level statement",
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
        # code after an import block starts after a blank line, as ruff's isort rule leaves it
        wanted = _with_blank_line(parse_stmt(f"{alias}.config.{name} = {py_literal(value)}"))

        anchor = self._anchor(tree)
        self._tops: list[cst.CSTNode] = []
        doomed = self._late_assignments(tree, warp)
        tree = remove_statements(tree, doomed, within=self._tops)

        body = list(tree.body)
        warp_index = next((i for i, s in enumerate(body) if _imports_warp_module(s)), None)
        target_index = self._anchor_index(body, anchor)
        if target_index is None:
            at = len(body) if warp_index is not None else header_end(tree, warp)
        else:  # before the whole block of project imports that holds the statement (isort's first-party section)
            at = target_index
            packages = {m.split(".")[0] for m in imported_module(body[target_index])}
            while at > 0 and _is_project_import(body[at - 1], packages):
                at -= 1

        between = body[warp_index + 1 : at] if warp_index is not None and warp_index < at else []
        if warp_index is not None and warp_index < at:
            for stmt in between:
                if config_target(stmt, warp) == name:
                    return tree  # already in place (value checked by _late_assignments)
        if warp_index is not None and warp_index < at:
            # after the third-party imports that follow `import warp`, so the setting splits no isort section
            rest_third_party = target_index is not None and all(_is_third_party_import(s) for s in between)
            setting_at = at if rest_third_party else warp_index + 1
            if setting_at == at and target_index is not None:
                body[at] = _with_blank_line(body[at])
            return _placed(tree, body, setting_at, [wanted], alias)

        if warp_index is None:
            warp_line: cst.BaseStatement = parse_stmt(f"import warp as {alias}" if alias != "warp" else "import warp")
        else:  # move `import warp` up, right before the project's imports
            warp_line = body[warp_index]
            assert isinstance(warp_line, cst.SimpleStatementLine)
            if len(warp_line.body) != 1 or len(warp_line.body[0].names) != 1:  # type: ignore[attr-defined]
                raise self.refuse(f"`{code(warp_line).strip()}` imports more than warp; cannot move it")
            if warp_index + 1 < len(body):
                follower = body[warp_index + 1]
                body[warp_index + 1] = follower.with_changes(
                    leading_lines=[*warp_line.leading_lines, *follower.leading_lines]
                )
            del body[warp_index]
            if warp_index < at:
                at -= 1
        if target_index is None:
            return _placed(tree, body, at, [warp_line, wanted], alias)
        # isort's sections: the warp import joins a third-party block right before it, else a blank line
        # separates it; the project imports after the setting start a section of their own.
        joins = at == 0 or _is_third_party_import(body[at - 1])
        warp_line = warp_line.with_changes(leading_lines=[] if joins else [cst.EmptyLine()])
        body[at] = _with_blank_line(body[at])
        return _placed(tree, body, at, [warp_line, wanted], alias)

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

    def _anchor(self, tree: cst.Module) -> cst.BaseStatement | None:
        """The top-level statement the run showed creating the targets, or None when the run named none."""
        line, text = self.args["before_line"], self.args["before_statement"] or ""
        if line is None:
            return None
        index = self.lines.index_at_line(line)
        if index is not None and (not text or _holds(self.lines.code(tree.body[index]), text)):
            return tree.body[index]
        found = [stmt for stmt in tree.body if _holds(self.lines.code(stmt), text)]
        if len(found) != 1:
            raise self.refuse(f"`{text}` (line {line}) matches no top-level statement, so nothing says where the "
                              "setting must go")
        return found[0]

    def _anchor_index(self, body: list[cst.BaseStatement], anchor: cst.BaseStatement | None) -> int | None:
        """Where the anchor is in `body` (after the late assignment's removal), else the first relative import."""
        if anchor is None:
            return _first_relative_import(body)
        index = next((i for i, stmt in enumerate(body) if stmt is anchor), None)
        if index is None:
            raise self.refuse(f"the statement at line {self.args['before_line']} holds the late assignment itself")
        return index

    def _in_place(self, tree: cst.Module, warp: WarpImports) -> cst.BaseStatement | None:
        """The top-level assignment already between `import warp` and the anchor, if any."""
        body = list(tree.body)
        limit = self._anchor_index(body, self._anchor(tree))
        seen_warp = False
        for stmt in body[:limit]:
            if _imports_warp_module(stmt):
                seen_warp = True
            elif seen_warp and config_target(stmt, warp) == self.args["name"]:
                return stmt
        return None


__all__ = ["ConfigAtEntry"]
