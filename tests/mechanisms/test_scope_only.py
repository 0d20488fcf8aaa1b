"""Mechanisms ask the scope whose code something is; none re-derives it from paths, names or index flags.

The scope (`warp_fix/scope.py`, on `inputs.scope`) is the one answer to "is this the project's code, and may a
fix touch it?"; import-linter forbids mechanisms `warp_fix.ownership` (pyproject.toml), and this test forbids the
other ways a mechanism could decide it on its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import warp_fix.mechanisms

FOLDER = Path(warp_fix.mechanisms.__file__).parent
# _situation builds the examples' data (paths included): it decides nothing
SOURCES = sorted(p for p in FOLDER.glob("*.py") if p.name != "_situation.py")
PATH_MODULES = {"os", "os.path", "pathlib", "warp_fix.ownership"}
ASK = {"in_repo": "in_project", "from_library": "made_by_project"}  # index and report flags the scope interprets
PATH_CALLS = {"realpath", "relpath", "abspath", "isabs", "commonpath", "place_of", "folder_verdict"}


def ownership_decisions(source: str) -> list[str]:
    """Each place in `source` that decides ownership without the scope, as `line: what`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in PATH_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module in PATH_MODULES:
            found.append(f"{node.lineno}: from {node.module} import")
        elif isinstance(node, ast.Attribute) and node.attr in ASK and isinstance(node.ctx, ast.Load):
            found.append(f"{node.lineno}: .{node.attr} (ask inputs.scope.{ASK[node.attr]})")
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in PATH_CALLS:
                found.append(f"{node.lineno}: {name}()")
            warp_prefix = [a for a in node.args if isinstance(a, ast.Constant) and a.value in ("warp", "warp.")]
            if name == "startswith" and warp_prefix:
                found.append(f"{node.lineno}: startswith({warp_prefix[0].value!r}) (ask inputs.scope.module_named)")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_a_mechanism_decides_ownership_only_through_the_scope(path):
    assert ownership_decisions(path.read_text()) == []


def test_the_check_finds_each_way_around_the_scope():
    source = (
        "import os\nfrom pathlib import Path\nfrom warp_fix.ownership import place_of\n"
        "a = kernel.in_repo\nb = os.path.realpath(f)\nc = module.startswith('warp.')\nd = place_of(f, root)\n"
        "e = change.from_library\n"
    )
    assert [line.split(":")[0] for line in ownership_decisions(source)] == ["1", "2", "3", "4", "5", "6", "7", "8"]
