"""A test suite as the baked command: fixtures/suite_project under `pytest -n 2` (two xdist workers and an
example run in a subprocess), baked, restored and verified for real on the CPU."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from warp_fix.bake import bake
from warp_fix.bake.restore import restore
from warp_fix.bake.verify import verify

pytestmark = pytest.mark.slow

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "suite_project"
COMMAND = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "tests"]
MODULES = {"flock.boids", "flock.grid", "flock.decay", "flock.energy"}


def copy_of_suite(parent: Path) -> Path:
    project = parent / "suite_project"
    shutil.copytree(SUITE, project, ignore=shutil.ignore_patterns("__pycache__"))
    return project


def edit_helper(project: Path) -> None:
    """The same clamp written the other way round: flock.common feeds flock.boids and flock.grid only."""
    common = project / "flock" / "common.py"
    common.write_text(common.read_text().replace("wp.min(wp.max(x, -1.0), 1.0)", "wp.max(wp.min(x, 1.0), -1.0)"))


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return copy_of_suite(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="module")
def baked(suite, tmp_path_factory):
    return bake(COMMAND, suite, str(tmp_path_factory.mktemp("archive")) + "/", [], None)


def test_the_archive_holds_every_module_any_process_built_once(baked):
    """flock.energy is built only by the example's subprocess; each worker builds its test files' modules."""
    names = [m.name for m in baked.manifest.modules]
    assert sorted(names) == sorted(MODULES)


def test_verify_names_the_process_that_compiled_each_module(baked, tmp_path):
    project = copy_of_suite(tmp_path)
    restore(baked.archive, tmp_path / "cache", merge=False)
    edit_helper(project)
    result = verify(COMMAND, project, None, tmp_path / "cache", None)
    assert result.exit_code == 1
    assert {m.module for m in result.misses} == {"flock.boids", "flock.grid"}
    processes = {m.process.split(" (pid")[0] for m in result.misses}
    assert "flock/example.py" in processes  # the subprocess builds flock.boids too
    assert any(p.startswith("pytest-xdist worker gw") for p in processes)
    assert all("a kernel's code (or a function it calls) changed" in m.reasons[0] for m in result.misses)
