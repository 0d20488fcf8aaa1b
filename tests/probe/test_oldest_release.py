"""The oldest Warp release pyproject accepts gives a fixture the plan the newest gives, with no tracer error.

CI's second Warp release: the suite itself runs on the newest (the project's environment); this installs the
newest patch of the floor's minor release (`warp-lang~=X.Y.0`) from the package index into a private virtual
environment, with numpy and nothing else, and probes + plans one fixture there and here. About a minute on two
cores once pip's cache holds the wheel. benchmarks/warp_matrix.py does the same for every release.
"""

from __future__ import annotations

import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO
from warp_fix.plan import make_plan
from warp_fix.probe import measure

FIXTURE = "serial_modules"  # five modules built one by one: granular-modules fires, every other rule is checked


def warp_floor() -> str:
    """The X.Y of pyproject's `warp-lang>=X.Y`."""
    text = (REPO / "pyproject.toml").read_text()
    match = re.search(r'"warp-lang>=(\d+\.\d+)"', text)
    assert match, "pyproject.toml names no warp-lang floor"
    return match.group(1)


@pytest.fixture(scope="module")
def oldest_python(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("oldest-warp")
    venv.create(directory, with_pip=True)
    python = directory / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"warp-lang~={warp_floor()}.0", "numpy"],
        capture_output=True, text=True,
    )
    assert install.returncode == 0, f"could not install the oldest release: {install.stderr[-2000:]}"
    return python


def _verdicts(python: Path):
    directory = FIXTURES / FIXTURE
    report = measure([str(python), "-m", "sensors"], directory, samples=1)
    plan = make_plan(report, directory)
    statuses = {f.slug: f.status for f in plan.findings}
    fixes = sorted((f.slug, f.codemod, str(f.to_json()["args"])) for f in plan.fixes)
    return report, statuses, fixes


def test_oldest_release_plans_like_the_newest(oldest_python):
    old_report, old_statuses, old_fixes = _verdicts(oldest_python)
    new_report, new_statuses, new_fixes = _verdicts(Path(sys.executable))
    assert old_report.warp_version.startswith(f"{warp_floor()}."), old_report.warp_version
    assert not [w for w in old_report.warnings if "tracer" in w or "could not be hooked" in w], old_report.warnings
    assert len(old_report.trace.builds) == len(new_report.trace.builds)
    assert old_statuses == new_statuses
    assert old_fixes == new_fixes
