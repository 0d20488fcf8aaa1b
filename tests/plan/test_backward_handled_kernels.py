"""unused-backward when the repository's tapes launch kernels held as values (fixture handled_kernels): the
solver's tape launches `self._step_kernel`, the view's tape a kernel from a table. Neither launch names its kernel,
but each can only run a kernel the program handled as a value, and the viewer's kernel never is one: the viewer
keeps its safe fix, and the solver's module is withheld with the launch that could not be followed."""

from __future__ import annotations

import pytest

from tests.apply.conftest import fixture_repo, git
from tests.conftest import FIXTURES, PYTHON
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.model import SAFE
from warp_fix.plan import make_plan
from warp_fix.probe import measure
from warp_fix.scan import scan_repository
from warp_fix.scan.differentiation import differentiated_kernels

ROOT = FIXTURES / "handled_kernels"


def test_each_unfollowed_launch_may_reach_only_modules_whose_kernels_are_handed_on():
    found = differentiated_kernels(scan_repository(ROOT))
    solver_tape, view_tape = found.unresolved_tapes
    assert [str(c) for c in solver_tape.calls] == ["wp.launch(self._step_kernel, ...) at heatgrid/_src/solver.py:28"]
    assert solver_tape.may_reach(["heatgrid/_src/kernels.py"])  # `kernels.diffuse` is read into the attribute
    # the view's `getter(...)` runs the bound methods `_accessors(view)` lists: FieldView.get_values, whose launch
    # takes its kernel from a table of the selection module's kernels
    assert [str(c) for c in view_tape.calls] == [
        "wp.launch(_GATHER_KERNELS[field.ndim], ...) at heatgrid/_src/selection.py:31"]
    assert view_tape.files == {"heatgrid/_src/selection.py"}
    assert not any(tape.may_reach(["heatgrid/_src/viewer.py"]) for tape in found.unresolved_tapes)
    assert not found.reaches("heatgrid/_src/viewer.py")


@pytest.fixture(scope="module")
def plan():
    report = measure([PYTHON, "-m", "examples.example_cooling"], ROOT, samples=1)
    return make_plan(report, ROOT)


def test_the_viewer_keeps_its_safe_fix_and_the_solver_is_withheld_with_its_launch(plan):
    finding = next(f for f in plan.findings if f.slug == "unused-backward")
    assert finding.status == "fired"
    assert sorted(finding.facts.modules) == ["heatgrid._src.kernels", "heatgrid._src.viewer"]
    fixes = [f for f in plan.fixes if f.slug == "unused-backward" and f.codemod == "module_options"]
    assert [(f.safety, f.args_json()) for f in fixes] == [
        (SAFE, {"file": "heatgrid/_src/viewer.py", "options": {"enable_backward": False}})]
    said = "\n".join(e.detail for e in finding.evidence)
    assert "wp.launch(self._step_kernel, ...) at heatgrid/_src/solver.py:28" in said


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
