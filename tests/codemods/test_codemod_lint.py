"""Every codemod example's output is merge-ready: it adds no lint finding, and import sorters cannot undo it.

An edit that puts `wp.config.enable_backward = False` above an import is right only while it stays there:
`ruff check --fix` or isort moving the import above it would silently turn the fix off. So each example's
`after` is checked with ruff (rules E, F and I) against its `before`, and run through ruff's and isort's
import fixers: the fixed text must still hold the fix (the codemod finds nothing left to do on it), and a
`before` the fixers leave alone must give an `after` they leave alone too.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable

import pytest

from codemods import REGISTRY, Example, transform_source
from tests.codemods.test_codemod_examples import EXAMPLES

RULES = "E,F,I"
# The examples stand for projects with Warp's own line length; ruff's isort rule and isort are configured
# alike (the layout ruff's defaults and isort's black profile share).
LINE_LENGTH = 120

Fixer = Callable[[str, tuple[str, ...]], str]


def first_party(example: Example) -> tuple[str, ...]:
    """The example project's own packages, as its sorter configuration would name them: the package of the
    file it edits (`heatgrid/app.py` -> heatgrid) and those the statement the setting goes above imports."""
    packages = set()
    file, statement = example.args.get("file", ""), example.args.get("before_statement") or ""
    if "/" in file:
        packages.add(file.split("/")[0])
    imported = re.match(r"\s*(?:from\s+(\w+)|import\s+(\w+))", statement)  # its first line may open a parenthesis
    if imported:
        packages.add(imported.group(1) or imported.group(2))
    return tuple(sorted(packages))


def _ruff() -> list[str]:
    found = shutil.which("ruff")
    return [found] if found else [sys.executable, "-m", "ruff"]


def ruff(*args: str, packages: tuple[str, ...]) -> list[str]:
    known = json.dumps(list(packages))
    settings = ["--line-length", str(LINE_LENGTH), "--config", f"lint.isort.known-first-party = {known}"]
    return [*_ruff(), "check", "--isolated", *settings, *args, "--stdin-filename", "x.py", "-"]


def findings(source: str, packages: tuple[str, ...]) -> Counter[str]:
    """Ruff's findings on `source`, counted by rule code."""
    result = subprocess.run(
        ruff("--select", RULES, "--output-format", "json", packages=packages),
        input=source,
        capture_output=True,
        text=True,
    )
    assert result.returncode in (0, 1), result.stderr
    return Counter(finding["code"] for finding in json.loads(result.stdout))


def ruff_fix_imports(source: str, packages: tuple[str, ...]) -> str:
    """`ruff check --fix --select I` on `source`: what ruff's import sorting leaves."""
    result = subprocess.run(
        ruff("--fix-only", "--select", "I", packages=packages),
        input=source,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def isort_fix(source: str, packages: tuple[str, ...]) -> str:
    isort = pytest.importorskip("isort", reason="isort is not installed (pip install -e '.[test]')")
    return isort.code(source, profile="black", line_length=LINE_LENGTH, known_first_party=packages)


def isort_float_to_top(source: str, packages: tuple[str, ...]) -> str:
    """isort configured to gather every import at the top: only a fence keeps an import below a setting."""
    isort = pytest.importorskip("isort", reason="isort is not installed (pip install -e '.[test]')")
    return isort.code(source, profile="black", line_length=LINE_LENGTH, known_first_party=packages, float_to_top=True)


FIXERS = [
    pytest.param(ruff_fix_imports, id="ruff-isort"),
    pytest.param(isort_fix, id="isort"),
    pytest.param(isort_float_to_top, id="isort-float-to-top"),
]


@pytest.mark.parametrize(("name", "example"), EXAMPLES)
def test_example_adds_no_lint_finding(name, example) -> None:
    packages = first_party(example)
    before, after = findings(example.before, packages), findings(example.after, packages)
    assert after - before == Counter(), f"{name}: the edit adds {dict(after - before)}:\n{example.after}"


@pytest.mark.parametrize("fixer", FIXERS)
@pytest.mark.parametrize(("name", "example"), EXAMPLES)
def test_import_fixers_leave_the_fix_in_place(name, example, fixer: Fixer) -> None:
    packages = first_party(example)
    fixed = fixer(example.after, packages)
    if fixer(example.before, packages) == example.before:
        assert fixed == example.after, f"{name}: the edit leaves imports the fixer reorders:\n{fixed}"
    elif fixed != example.after:  # an untidy example: the fixer's changes must leave the fix in place
        assert transform_source(name, fixed, example.args) == fixed, f"{name}: the fixer undid the edit:\n{fixed}"


# Each codemod also shows its edit on a file as a real project writes it (`Example.project_style`): a module
# docstring, stdlib, third-party and first-party imports in isort's sections, the project's own Warp spelling.
PROJECT_STYLE = [param for param in EXAMPLES if param.values[1].project_style]


def test_every_codemod_shows_its_edit_on_a_real_projects_file() -> None:
    missing = sorted(name for name, cls in REGISTRY.items() if not any(e.project_style for e in cls.EXAMPLES))
    assert missing == [], f"codemods without a project_style example: {missing}"
    # the lint checks above run over EXAMPLES: every example of every codemod, these included
    assert len(PROJECT_STYLE) == sum(e.project_style for cls in REGISTRY.values() for e in cls.EXAMPLES)


def _import_sections(source: str, packages: tuple[str, ...]) -> set[str]:
    sections = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            sections.add("first-party")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for top in (str(n).split(".")[0] for n in names):
                if top in packages:
                    sections.add("first-party")
                elif top in sys.stdlib_module_names or top == "__future__":
                    sections.add("stdlib")
                else:
                    sections.add("third-party")
    return sections


@pytest.mark.parametrize(("name", "example"), PROJECT_STYLE)
def test_a_real_projects_file_is_as_tidy_after_the_edit_as_before(name, example) -> None:
    """Its `before` is as the project's tools leave it, so the checks above hold its `after` to the strictest
    standard: no finding at all, and nothing for ruff or isort to move."""
    packages = first_party(example)
    assert ast.get_docstring(ast.parse(example.before)), f"{name}: a project's file starts with its docstring"
    assert _import_sections(example.before, packages) == {"stdlib", "third-party", "first-party"}, name
    for text in (example.before, example.after):
        assert findings(text, packages) == Counter(), f"{name}:\n{text}"
        for fixer in (ruff_fix_imports, isort_fix, isort_float_to_top):
            assert fixer(text, packages) == text, f"{name}: {fixer.__name__} reorders\n{text}"


@pytest.mark.parametrize(
    ("line", "marked"),
    [
        ("import sim\n", "import sim  # noqa: E402\n"),
        ("import sim  # type: ignore\n", "import sim  # type: ignore  # noqa: E402\n"),
        ("import sim  # noqa: F401\n", "import sim  # noqa: F401, E402\n"),
        ("import sim  # noqa\n", "import sim  # noqa\n"),
        ("from sim import (\n    a,\n)\n", "from sim import (  # noqa: E402\n    a,\n)\n"),
    ],
)
def test_an_import_kept_below_a_setting_says_so_in_the_suppression_ruff_reads(line: str, marked: str) -> None:
    import libcst as cst

    from codemods._cst import with_noqa

    (stmt,) = cst.parse_module(line).body
    assert cst.Module(body=[with_noqa(stmt, "E402")]).code == marked


FROM_WARP_FILE = '''\
"""A project module that spells Warp `from warp import ...`."""

import os

import numpy as np
from warp import kernel, launch

from .util import helper


@kernel(module="sim")
def step(x: float):
    pass


def run():
    launch(step, dim=1, inputs=[helper(np.pi, os.sep)])
'''


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("split_by_options", {"kernels": ["step"], "module": "fast", "options": {"fast_math": True}}),
        ("split_by_block_dim", {"groups": {"step": "bd64"}, "options": {"fast_math": True}}),
        ("module_options", {"options": {"enable_backward": False}}),
        ("module_options", {"options": {"enable_backward": False}, "module": "sim"}),
        ("preload", {"modules": ["fast"], "device": "cuda:0", "function": "run"}),
    ],
)
def test_a_new_import_warp_as_wp_joins_the_section_of_the_files_from_warp(name: str, args: dict) -> None:
    """`import warp as wp` goes where isort and ruff put it: among the third-party imports, before
    `from warp import ...`; not after the file's last import (a first-party one), which they would move."""
    after = transform_source(name, FROM_WARP_FILE, args)
    imports = "import numpy as np\nimport warp as wp\nfrom warp import kernel, launch\n\nfrom .util import helper\n"
    assert imports in after
    assert findings(after, ()) == Counter()
