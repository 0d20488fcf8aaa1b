"""unused-backward on real runs, one fixture per shape of module: the build's source, where its option came
from, the finding's status and reason, and the fix placed where the value is decided.

Shapes the fixtures do not have as committed (a script with backward on, string-named modules with backward on)
are measured on a copy with the one line that turns backward off removed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import warp

from tests.apply.conftest import fixture_repo, git, init_repo
from tests.conftest import FIXTURES, PYTHON
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.mechanisms._attribution import Location, Provenance
from warp_fix.model import CONSENT, SAFE
from warp_fix.plan import make_plan
from warp_fix.probe import measure


def finding(plan):
    return next(f for f in plan.findings if f.slug == "unused-backward")


def fixes(plan):
    return [f for f in plan.fixes if f.slug == "unused-backward"]


def copy_without(name: str, file: str, line: str, tmp_path: Path) -> Path:
    """The fixture copied to tmp_path, with `line` (exactly as written) taken out of `file`."""
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / file
    text = path.read_text()
    assert line + "\n" in text
    path.write_text(text.replace(line + "\n", "", 1))
    return root


def test_module_differentiated_by_another_script_gets_no_per_module_fix(measured):
    plan = make_plan(measured("calibration_script"), FIXTURES / "calibration_script")
    found = finding(plan)
    assert found.status == "fired"
    assert found.facts.modules == ["beams.model", "beams.report"]
    assert found.facts.differentiated_elsewhere == {"beams.model": "scripts/calibrate.py:30"}
    assert found.facts.provenance["beams.model"].kind == "default"
    per_module, process_wide = fixes(plan)
    assert (per_module.codemod, per_module.safety) == ("module_options", SAFE)
    assert per_module.args_json() == {"file": "beams/report.py", "options": {"enable_backward": False}}
    assert (process_wide.codemod, process_wide.safety) == ("config_at_entry", CONSENT)
    assert process_wide.args_json() == {
        "file": "beams/__main__.py",
        "name": "enable_backward",
        "value": False,
        "before_line": 3,
        "before_statement": "from beams.model import as_array, predict",
    }
    assert "beams.model is differentiated by scripts/calibrate.py:30" in process_wide.description


def test_factory_parameter_is_changed_at_the_call_that_passes_it(measured):
    plan = make_plan(measured("factory_call_site"), FIXTURES / "factory_call_site")
    found = finding(plan)
    assert found.status == "fired" and found.facts.modules == ["smoothing.factory"]
    assert found.facts.provenance["smoothing.factory"] == Provenance(
        "enable_backward",
        "factory-parameter",
        Location("smoothing/factory.py", 10),
        Location("smoothing/filters.py", 5),
        "make_filter",
        "enable_backward",
    )
    (fix,) = fixes(plan)
    assert (fix.codemod, fix.safety) == ("call_site_argument", SAFE)
    assert fix.args_json() == {
        "file": "smoothing/filters.py",
        "line": 5,
        "callee": "make_filter",
        "keyword": "enable_backward",
        "value": False,
    }


def test_factory_module_options_from_a_caller_are_changed_at_that_call_only(measured):
    """ripple: `make_blur(radius, enable_backward)` feeds `module_options={"enable_backward": enable_backward}`;
    display.py passes True for a blur nothing differentiates, fit.py for one its tape does, and the project's test
    tapes a third. Only display.py's call changes: the factory keeps its parameter for every other caller."""
    plan = make_plan(measured("factory_module_options"), FIXTURES / "factory_module_options")
    found = finding(plan)
    assert found.status == "fired" and len(found.facts.modules) == 1
    (module,) = found.facts.modules
    assert found.facts.provenance[module] == Provenance(
        "enable_backward",
        "factory-parameter",
        Location("ripple/stencils.py", 17),
        Location("ripple/display.py", 7),
        "make_blur",
        "enable_backward",
    )
    assert found.facts.differentiated_elsewhere == {}  # the test's tape differentiates another call's kernel
    assert len(found.facts.differentiated) == 2  # fit.py's blur and ripple.fit, from the run's own tape
    (fix,) = fixes(plan)
    assert (fix.codemod, fix.safety, fix.files) == ("call_site_argument", SAFE, ["ripple/display.py"])
    assert fix.args_json()["keyword"] == "enable_backward" and fix.args_json()["value"] is False


@pytest.mark.slow
def test_apply_passes_false_at_the_callers_call_and_leaves_the_factory(tmp_path):
    repo = fixture_repo(tmp_path, "factory_module_options")
    factory, fit = (repo / "ripple" / "stencils.py").read_text(), (repo / "ripple" / "fit.py").read_text()
    request = build_request(
        command=[PYTHON, "-m", "ripple"], cwd=repo, branch="wf/ripple", samples=1, only=["unused-backward"],
        test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = run_apply(request).ledger.entries
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["adjoint_kernels"] == (4, 3)
    assert git(repo, "diff", "--name-only", "main..wf/ripple") == "ripple/display.py"
    git(repo, "checkout", "-q", "wf/ripple")
    assert "SOFTEN = make_blur(2, enable_backward=False)" in (repo / "ripple" / "display.py").read_text()
    assert (repo / "ripple" / "stencils.py").read_text() == factory and (repo / "ripple" / "fit.py").read_text() == fit


def test_library_that_turns_backward_off_per_kernel_is_ruled_out(measured):
    plan = make_plan(measured("per_kernel_backward"), FIXTURES / "per_kernel_backward")
    found = finding(plan)
    assert found.status == "ruled-out"
    assert found.reason.startswith("already off per kernel: no kernel of imgops.color, imgops.edges")
    assert fixes(plan) == []


def test_unique_kernels_made_by_a_renaming_factory_get_module_options_in_their_wp_kernel_call(measured):
    plan = make_plan(measured("factory_qualname"), FIXTURES / "factory_qualname")
    found = finding(plan)
    assert sorted(m[: len("box_size_3_kernel")] for m in found.facts.modules) == [
        "box_size_3_kernel",
        "box_size_7_kernel",
    ]
    (fix,) = fixes(plan)  # one edit of the factory serves both sizes
    assert (fix.codemod, fix.safety) == ("module_options", SAFE)
    assert fix.args_json() == {"file": "filterbank/boxes.py", "options": {"enable_backward": False}, "kernel": "box"}


def test_script_run_as_main_is_attributed_to_the_script(tmp_path):
    root = copy_without(
        "script_main",
        "app.py",
        'wp.set_module_options({"enable_backward": False})  # forward simulation only',
        tmp_path,
    )
    plan = make_plan(measure([PYTHON, "app.py"], root, samples=1), root)
    found = finding(plan)
    assert found.status == "fired" and found.facts.modules == ["__main__"]
    assert found.facts.provenance["__main__"].kind == "default"
    (fix,) = fixes(plan)
    assert (fix.codemod, fix.safety) == ("module_options", SAFE)
    assert fix.args_json() == {"file": "app.py", "options": {"enable_backward": False}}
    assert [n for n in plan.not_proposed if n.slug == "unused-backward"] == []


def test_script_that_already_turns_backward_off_is_not_tripped_by_warp_render(tmp_path):
    """`import warp.render` runs Warp's own set_module_options: the script's own module is what counts."""
    report = measure([PYTHON, "app.py"], FIXTURES / "script_main", samples=1)
    plan = make_plan(report, FIXTURES / "script_main")
    assert finding(plan).status == "ruled-out"
    assert fixes(plan) == []


@pytest.mark.parametrize(
    "module, file", [("solver.prepare", "clothsim/prepare.py"), ("render.encode", "clothsim/encode.py")]
)
def test_string_named_modules_are_set_by_name(module, file, named_without_config):
    plan = named_without_config
    assert finding(plan).facts.provenance[module].kind == "default"
    (fix,) = [f for f in fixes(plan) if f.args_json().get("module") == module]
    assert (fix.codemod, fix.safety) == ("module_options", SAFE)
    assert fix.args_json() == {"file": file, "options": {"enable_backward": False}, "module": module}


@pytest.fixture(scope="module")
def named_without_config(tmp_path_factory):
    root = copy_without(
        "named_modules",
        "clothsim/__main__.py",
        "wp.config.enable_backward = False  # no gradients in this tool",
        tmp_path_factory.mktemp("n"),
    )
    return make_plan(measure([PYTHON, "-m", "clothsim"], root, samples=1), root)


# Warp's own examples run as a user's script (module __main__, no tape), a few frames on the CPU (example_sph.py,
# the same shape with a larger module, gets the same commit; left out of the suite for its two minutes).
WARP_EXAMPLES = {
    "example_wave.py": ["--stage-path", "None", "--num-frames", "2"],
    "example_fluid.py": ["--headless", "--num-frames", "2"],
}


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(WARP_EXAMPLES))
def test_apply_keeps_backward_off_in_warps_own_examples(tmp_path, example):
    """No flags: one kept commit, the option set in the script itself, after its imports, and nothing else."""
    script = Path(warp.__file__).parent / "examples" / "core" / example
    repo = init_repo(tmp_path / "example", {example: script.read_text()})
    command = [PYTHON, example, "--device", "cpu", *WARP_EXAMPLES[example]]
    # Three samples per arm: a structural win that one noisy run contradicts is measured again, not dropped.
    result = run_apply(build_request(command=command, cwd=repo, branch="wf/startup", samples=3))
    (kept,) = result.ledger.of(KEPT)
    assert (kept.slug, kept.title) == ("unused-backward", "Turn off backward code in __main__")
    diff = git(repo, "diff", "main", "wf/startup")
    changed = [line for line in diff.splitlines()[4:] if line.startswith(("+", "-")) and line.strip() not in "+-"]
    assert changed == ['+wp.set_module_options({"enable_backward": False})']  # and a blank line, nothing else
    after = git(repo, "show", f"wf/startup:{example}")
    assert 'import warp.render\n\nwp.set_module_options({"enable_backward": False})\n' in after  # after the imports
