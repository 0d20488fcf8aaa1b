"""unused-backward when the tape's calls are followed through the receiver's class (fixture typed_receivers):
`self.solver.step(...)` under a tape runs the `step` of the class `__init__` stores in `self.solver`, not the
viewer's `step`, so the viewer keeps its safe fix and the solver is named as differentiated, as a fact."""

from __future__ import annotations

import pytest

from tests.apply.conftest import fixture_repo, git
from tests.conftest import FIXTURES, PYTHON
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import DECLINED, KEPT
from warp_fix.model import CONSENT, SAFE
from warp_fix.plan import make_plan
from warp_fix.probe import measure
from warp_fix.scan import scan_repository
from warp_fix.scan.differentiation import differentiated_kernels

ROOT = FIXTURES / "typed_receivers"


def test_the_tape_reaches_the_solver_through_the_class_it_stores_and_never_the_viewer():
    found = differentiated_kernels(scan_repository(ROOT))
    assert found.kernels == {"height_loss": "examples/example_diffsim.py:27",
                             "integrate": "examples/example_diffsim.py:27"}
    assert found.by_name == {}  # every call on the way names one class's method: no condition to state
    assert not found.reaches("sandbox/_src/viewer.py")


@pytest.fixture(scope="module")
def plan():
    report = measure([PYTHON, "-m", "examples.example_ball"], ROOT, samples=1)
    return make_plan(report, ROOT)


def test_the_viewer_keeps_its_safe_fix_and_the_solver_is_named_as_differentiated(plan):
    finding = next(f for f in plan.findings if f.slug == "unused-backward")
    assert finding.status == "fired"
    assert sorted(finding.facts.modules) == ["sandbox._src.solver", "sandbox._src.viewer"]
    assert finding.facts.differentiated_elsewhere == {"sandbox._src.solver": "examples/example_diffsim.py:27"}
    fixes = [f for f in plan.fixes if f.slug == "unused-backward"]
    per_module = [f for f in fixes if f.codemod == "module_options"]
    assert [(f.safety, f.args_json()) for f in per_module] == [
        (SAFE, {"file": "sandbox/_src/viewer.py", "options": {"enable_backward": False}})]
    (process_wide,) = [f for f in fixes if f.codemod == "config_at_entry"]
    assert process_wide.safety == CONSENT and process_wide.targets == ["sandbox._src.solver"]
    assert "sandbox._src.solver is differentiated by examples/example_diffsim.py:27" in process_wide.description


@pytest.mark.slow
def test_apply_keeps_backward_off_in_the_viewer_and_the_gradient_test_still_passes(tmp_path):
    """The project's own test differentiates the solver: turning backward off anywhere the tape runs would fail it."""
    repo = fixture_repo(tmp_path, "typed_receivers")
    request = build_request(
        command=[PYTHON, "-m", "examples.example_ball"], cwd=repo, branch="wf/typed", samples=1,
        only=["unused-backward"], test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    entries = run_apply(request).ledger.entries
    (kept,) = [e for e in entries if e.outcome == KEPT]
    assert kept.title == "Turn off backward code in sandbox._src.viewer"
    assert [e.outcome for e in entries if e is not kept] == [DECLINED]  # the process-wide fix needs consent
    assert git(repo, "diff", "--name-only", "main..wf/typed") == "sandbox/_src/viewer.py"
