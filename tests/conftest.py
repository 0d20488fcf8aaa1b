"""Shared helpers: real Warp programs written to temp dirs, and fixture apps measured once per session."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
# The interpreter that runs the measured apps: set WARP_FIX_TARGET_PYTHON to test against another Warp release.
PYTHON = os.environ.get("WARP_FIX_TARGET_PYTHON", sys.executable)


def write_app(directory: Path, source: str, name: str = "app.py") -> list[str]:
    """Write a small program and return the argv that runs it."""
    (directory / name).write_text(textwrap.dedent(source))
    return [PYTHON, name]


@pytest.fixture(autouse=True)
def private_tmpdir(tmp_path_factory, monkeypatch):
    """Each test gets its own TMPDIR (also for the processes it starts) and must leave no warp-fix files there.

    warp-fix's sandboxes, worktrees and demo copies are `warp-fix-*` directories in TMPDIR; one left
    behind means a cleanup path does not run. The directory itself is removed either way.
    """
    directory = tmp_path_factory.mktemp("tmpdir")
    monkeypatch.setenv("TMPDIR", str(directory))
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    yield directory
    left = sorted(p.name for p in directory.glob("warp-fix-*"))
    shutil.rmtree(directory, ignore_errors=True)
    if left:
        pytest.fail(f"the test left {', '.join(left)} in TMPDIR", pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def private_state_dir(tmp_path_factory):
    """What warp-fix remembers about machines (bake's environment records) stays in the session's temp dir."""
    directory = tmp_path_factory.mktemp("state")
    previous = os.environ.get("WARP_FIX_STATE_DIR")
    os.environ["WARP_FIX_STATE_DIR"] = str(directory)
    yield directory
    if previous is None:
        os.environ.pop("WARP_FIX_STATE_DIR", None)
    else:
        os.environ["WARP_FIX_STATE_DIR"] = previous


# A module built twice: `shift` is defined after `scale` was launched (kernel-after-load).
TWO_STAGE = """
import warp as wp

@wp.kernel
def scale(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 2.0

a = wp.ones(8, dtype=float, device="cpu")
wp.launch(scale, dim=8, inputs=[a], device="cpu")

@wp.kernel
def shift(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0

wp.launch(shift, dim=8, inputs=[a], device="cpu")
print("sum", a.numpy().sum())
"""


@pytest.fixture(scope="session")
def measured():
    """measured(fixture_name, samples=1) -> Report, measured once per session and shared."""
    from warp_fix.probe import measure

    cache: dict[tuple[str, int], object] = {}

    def get(name: str, samples: int = 1):
        key = (name, samples)
        if key not in cache:
            directory = FIXTURES / name
            package = next(p.parent.name for p in directory.glob("*/__main__.py"))
            cache[key] = measure([PYTHON, "-m", package], directory, samples=samples)
        return cache[key]

    return get


# --- The fast tier -------------------------------------------------------------------------------------------
# `pytest -m "not slow"` runs every test that does not start a Warp program. A test is slow when it, or a helper
# of its own module that it calls, starts one: through these names, or through a fixture that measures.
STARTS_A_WARP_RUN = frozenset(
    {"measure", "measure_inline", "run_apply", "run_cli", "run_demo", "run_tests", "subprocess", "main", "Popen"}
)
MEASURING_FIXTURES = frozenset({"measured", "plan_of", "run_warp"})


def _called_names(function) -> set[str]:
    import ast
    import inspect

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


def _module_runners(module) -> set[str]:
    """The module's own functions that start a Warp run, directly or through each other (to a fixpoint)."""
    import inspect

    functions = {
        name: _called_names(value)
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__
    }
    runners: set[str] = set()
    while True:
        found = {name for name, called in functions.items() if called & (STARTS_A_WARP_RUN | runners)}
        if found <= runners:
            return runners
        runners |= found


def _starts_one(function) -> bool:
    import inspect

    called = _called_names(function)
    module = inspect.getmodule(function)
    return bool(called & STARTS_A_WARP_RUN) or (module is not None and bool(called & _module_runners(module)))


def starts_a_warp_run(item: pytest.Item) -> bool:
    """The test function, or a fixture it uses (a module-scoped measurement, say), starts a Warp program."""
    if MEASURING_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    fixtures = [d.func for defs in definitions.values() for d in defs if d.func.__module__.startswith("tests.")]
    function = getattr(item, "function", None)
    return any(_starts_one(f) for f in [*fixtures, *([function] if function else [])])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "slow" not in item.keywords and starts_a_warp_run(item):
            item.add_marker(pytest.mark.slow)
