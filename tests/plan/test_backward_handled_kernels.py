"""unused-backward when the repository's tapes launch kernels held as values (fixture handled_kernels): the
solver's tape launches `self._step_kernel`, which the solver's constructor stores from two named kernels; the view's
tape a kernel from a table. The first is followed to those kernels; the second cannot name its kernel, but can only
run one the program handled as a value, and the viewer's kernel never is one: the viewer keeps its safe fix, and
the solver's module is named as differentiated by the solver's tape, as a fact."""

from __future__ import annotations

import pytest

from tests.apply.conftest import fixture_repo, git
from tests.conftest import FIXTURES, PYTHON
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.model import CONSENT, SAFE
from warp_fix.plan import make_plan
from warp_fix.probe import measure
from warp_fix.scan import scan_repository
from warp_fix.scan.differentiation import differentiated_kernels

ROOT = FIXTURES / "handled_kernels"


def test_the_attribute_launch_runs_the_stored_kernels_and_the_table_launch_only_handed_on_ones():
    found = differentiated_kernels(scan_repository(ROOT))
    assert found.kernels == {"_sum": "tests/test_gradients.py:26", "diffuse": "tests/test_gradients.py:26",
                             "diffuse_clamped": "tests/test_gradients.py:26"}
    # the view's `getter(...)` runs the bound methods `_accessors(view)` lists: FieldView.get_values, whose launch
    # takes its kernel from a table of the selection module's kernels
    (view_tape,) = found.unresolved_tapes
    assert [str(c) for c in view_tape.calls] == [
        "wp.launch(_GATHER_KERNELS[field.ndim], ...) at heatgrid/_src/selection.py:31"]
    assert view_tape.files == {"heatgrid/_src/selection.py"}
    assert not found.reaches("heatgrid/_src/viewer.py")


@pytest.fixture(scope="module")
def plan():
    report = measure([PYTHON, "-m", "examples.example_cooling"], ROOT, samples=1)
    return make_plan(report, ROOT)


def test_the_viewer_keeps_its_safe_fix_and_the_solver_is_named_as_differentiated(plan):
    finding = next(f for f in plan.findings if f.slug == "unused-backward")
    assert finding.status == "fired"
    assert sorted(finding.facts.modules) == ["heatgrid._src.kernels", "heatgrid._src.viewer"]
    assert finding.facts.differentiated_elsewhere == {"heatgrid._src.kernels": "tests/test_gradients.py:26"}
    fixes = [f for f in plan.fixes if f.slug == "unused-backward" and f.codemod == "module_options"]
    assert [(f.safety, f.args_json()) for f in fixes] == [
        (SAFE, {"file": "heatgrid/_src/viewer.py", "options": {"enable_backward": False}})]
    (process_wide,) = [f for f in plan.fixes if f.slug == "unused-backward" and f.codemod == "config_at_entry"]
    assert process_wide.safety == CONSENT and process_wide.targets == ["heatgrid._src.kernels"]
    assert "heatgrid._src.kernels is differentiated by tests/test_gradients.py:26" in process_wide.description


@pytest.mark.slow
def test_apply_keeps_backward_off_in_the_viewer_and_the_gradient_tests_still_pass(tmp_path):
    repo = fixture_repo(tmp_path, "handled_kernels")
    request = build_request(
        command=[PYTHON, "-m", "examples.example_cooling"], cwd=repo, branch="wf/handled", samples=1,
        only=["unused-backward"], test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    entries = run_apply(request).ledger.entries
    (kept,) = [e for e in entries if e.outcome == KEPT]
    assert kept.title == "Turn off backward code in heatgrid._src.viewer"
    assert git(repo, "diff", "--name-only", "main..wf/handled") == "heatgrid/_src/viewer.py"
