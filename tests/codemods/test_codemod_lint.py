"""Every codemod example's output is merge-ready: it adds no lint finding, and import sorters cannot undo it.

An edit that puts `wp.config.enable_backward = False` above an import is right only while it stays there:
`ruff check --fix` or isort moving the import above it would silently turn the fix off. So each example's
`after` is checked with ruff (rules E, F and I) against its `before`, and run through ruff's and isort's
import fixers: the fixed text must still hold the fix (the codemod finds nothing left to do on it), and a
`before` the fixers leave alone must give an `after` they leave alone too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable

import pytest

from codemods import Example, transform_source
from tests.codemods.test_codemod_examples import EXAMPLES

RULES = "E,F,I"
# The examples stand for projects with Warp's own line length; ruff's isort rule and isort are configured
# alike (the layout ruff's defaults and isort's black profile share).
LINE_LENGTH = 120

Fixer = Callable[[str, tuple[str, ...]], str]


def first_party(example: Example) -> tuple[str, ...]:
    """The example project's own packages, as its sorter configuration would name them."""
    target = example.args.get("before_import")
    return (target.split(".")[0],) if target else ()


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
