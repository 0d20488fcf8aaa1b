"""unused-backward when a tape elsewhere in the repository calls what the scan cannot follow (fixture
unfollowed_tape): `python -m heatplate` steps a plate (heatplate.solver) and renders frames (heatplate.render),
forward only. scripts/calibrate.py differentiates the solver on a tape the scan follows; scripts/sensitivity.py
records `getattr(plate, method)(steps)` and a launch of a kernel picked from a dict, which it cannot.

The unfollowed tape is a fact about that tape (its calls, and the files whose code they can run), never a claim
about every module: the renderer, which no program holding that tape imports, keeps its safe fix; where the tape
can run a module's code, the plan says so and why."""

from __future__ import annotations

import shutil
from pathlib import Path

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

SENSITIVITY = (
    "the tape at scripts/sensitivity.py:38, whose calls getattr(plate, method)(...) at scripts/sensitivity.py:40, "
    "wp.launch(LOSSES[loss_name], ...) at scripts/sensitivity.py:31 cannot be followed"
)


def unused_backward(plan):
    finding = next(f for f in plan.findings if f.slug == "unused-backward")
    fixes = [f for f in plan.fixes if f.slug == "unused-backward"]
    return finding, fixes, [n.reason for n in plan.not_proposed if n.slug == "unused-backward"]


def test_the_unfollowed_tape_is_reported_as_its_calls_and_the_files_they_can_run():
    found = differentiated_kernels(scan_repository(FIXTURES / "unfollowed_tape"))
    assert found.kernels["diffuse"] == "scripts/calibrate.py:25"  # the followed tape names the solver's kernel
    (tape,) = found.unresolved_tapes
    assert tape.site == "scripts/sensitivity.py:38"
    assert [str(call) for call in tape.calls] == [
        "getattr(plate, method)(...) at scripts/sensitivity.py:40",
        "wp.launch(LOSSES[loss_name], ...) at scripts/sensitivity.py:31",
    ]
    # the caller passes only a method's name and a loss's key: which code runs is decided in the script
    assert [call.deciding_names() for call in tape.calls] == [{"plate"}, {"LOSSES"}]
    assert tape.describe() == SENSITIVITY
    # what getattr() can call is code of a file the script imports: the solver, never the renderer
    assert tape.may_reach(["heatplate/solver.py"]) and not tape.may_reach(["heatplate/render.py"])


def test_the_renderer_no_followed_tape_reaches_keeps_its_safe_fix(plan_of):
    finding, fixes, _ = unused_backward(plan_of("unfollowed_tape"))
    assert finding.status == "fired"
    assert finding.facts.modules == ["heatplate.solver", "heatplate.render"]
    assert finding.facts.differentiated_elsewhere == {"heatplate.solver": "scripts/calibrate.py:25"}
    assert finding.facts.may_be_differentiated == {}
    per_module, process_wide = fixes
    assert (per_module.codemod, per_module.safety) == ("module_options", SAFE)
    assert per_module.args_json() == {"file": "heatplate/render.py", "options": {"enable_backward": False}}
    assert (process_wide.codemod, process_wide.safety) == ("config_at_entry", CONSENT)
    assert process_wide.targets == ["heatplate.solver"]
    assert "heatplate.solver is differentiated by scripts/calibrate.py:25" in process_wide.description
    assert "heatplate.render is" not in process_wide.description  # named only as the statement it goes above:
    # `from heatplate.render import frame` creates heatplate.solver in the run (render imports the solver)
    assert "above `from heatplate.render import frame` at heatplate/__main__.py:3" in process_wide.description
    assert process_wide.args_json()["before_line"] == 3


@pytest.fixture(scope="module")
def sensitivity_renders(tmp_path_factory) -> Path:
    """The fixture with scripts/sensitivity.py also saving a frame of the plate: its getattr() can now run the
    renderer's code too."""
    root = tmp_path_factory.mktemp("renders") / "unfollowed_tape"
    shutil.copytree(FIXTURES / "unfollowed_tape", root, ignore=shutil.ignore_patterns("__pycache__"))
    script = root / "scripts" / "sensitivity.py"
    text = script.read_text()
    imports = "from heatplate.solver import DEVICE, Plate\n"
    script.write_text(text.replace(imports, "from heatplate.render import frame\n" + imports, 1))
    return root


def test_where_the_unfollowed_tape_can_run_a_modules_code_the_plan_says_why(sensitivity_renders):
    report = measure([PYTHON, "-m", "heatplate"], sensitivity_renders, samples=1)
    finding, fixes, not_proposed = unused_backward(make_plan(report, sensitivity_renders))
    rendered = SENSITIVITY.replace(":38", ":39").replace(":40", ":41").replace(":31", ":32")  # one line added above
    assert finding.facts.differentiated_elsewhere == {"heatplate.solver": "scripts/calibrate.py:25"}
    assert finding.facts.may_be_differentiated == {"heatplate.render": rendered}
    assert [f.codemod for f in fixes] == ["config_at_entry"]  # no per-module fix for either module
    (why,) = [reason for reason in not_proposed if reason.startswith("heatplate.render")]
    assert f"no tape the scan follows reaches it, but {rendered}, and they can run its code" in why
    (process_wide,) = fixes
    assert process_wide.safety == CONSENT and process_wide.targets == ["heatplate.solver", "heatplate.render"]
    assert f"heatplate.render may be differentiated by {rendered}" in process_wide.description


@pytest.mark.slow
def test_apply_turns_backward_off_in_the_renderer_only(tmp_path):
    repo = fixture_repo(tmp_path, "unfollowed_tape")
    solver = (repo / "heatplate" / "solver.py").read_text()
    request = build_request(
        command=[PYTHON, "-m", "heatplate"], cwd=repo, branch="wf/heat", samples=1, only=["unused-backward"],
        test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    entries = run_apply(request).ledger.entries
    (kept,) = [e for e in entries if e.outcome == KEPT]
    assert kept.title == "Turn off backward code in heatplate.render"
    assert [e.outcome for e in entries if e is not kept] == [DECLINED]  # the process-wide fix needs consent
    assert git(repo, "diff", "--name-only", "main..wf/heat") == "heatplate/render.py"
    git(repo, "checkout", "-q", "wf/heat")
    assert 'wp.set_module_options({"enable_backward": False})' in (repo / "heatplate" / "render.py").read_text()
    assert (repo / "heatplate" / "solver.py").read_text() == solver
