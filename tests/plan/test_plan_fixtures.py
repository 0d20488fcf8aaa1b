"""The planner on the fixture apps: each mechanism found on a real run, and the right fix (or none) chosen."""

from __future__ import annotations

import copy

from tests.conftest import FIXTURES
from warp_fix.mechanisms import SLUGS
from warp_fix.model import CONSENT, SAFE
from warp_fix.plan import make_plan


def status(plan, slug: str) -> str:
    return next(f.status for f in plan.findings if f.slug == slug)


def fixes(plan, slug: str):
    return [f for f in plan.fixes if f.slug == slug]


def test_every_mechanism_ends_with_a_status(plan_of):
    plan = plan_of("late_module_options")
    assert len(plan.findings) == len(SLUGS)
    assert {f.status for f in plan.findings} <= {"fired", "ruled-out", "not-applicable"}


def test_late_options_are_hoisted_out_of_the_setup_function(plan_of):
    plan = plan_of("late_module_options")
    assert status(plan, "late-module-options") == "fired"
    (fix,) = fixes(plan, "late-module-options")
    assert (fix.codemod, fix.safety) == ("hoist_options", SAFE)
    assert fix.args_json() == {"file": "cloth/solver.py", "function": "configure_solver", "line": 91}
    assert "removes 1 build" in fix.expected


def test_block_dim_and_preload_are_not_applicable_on_cpu(plan_of):
    plan = plan_of("late_module_options")
    assert status(plan, "block-dim-spread") == "not-applicable"
    assert status(plan, "serial-builds") == "not-applicable"


def test_option_value_from_runtime_is_not_hoisted(plan_of):
    plan = plan_of("runtime_options")
    assert status(plan, "late-module-options") == "fired"
    assert fixes(plan, "late-module-options") == []
    assert any("runtime values" in n.reason for n in plan.not_proposed if n.slug == "late-module-options")


def test_incidental_clear_is_removed_and_the_maintenance_path_kept(plan_of):
    plan = plan_of("cache_discarded")
    (fix,) = fixes(plan, "cache-discarded")
    assert fix.codemod == "keep_cache"
    assert fix.args_json()["protected_functions"] == ["rebuild_cache"]
    assert fix.lines == ["heatflow/__main__.py:20"]


def test_per_run_temporary_cache_dir_is_found(plan_of):
    plan = plan_of("cache_tempdir")
    assert status(plan, "cache-discarded") == "fired"
    assert fixes(plan, "cache-discarded")[0].args_json()["file"] == "sdfield/runtime.py"


def test_late_kernel_from_a_factory_moves_to_module_scope(plan_of):
    plan = plan_of("kernel_after_load")
    (fix,) = fixes(plan, "kernel-after-load")
    assert fix.codemod == "kernels_to_module_scope"
    assert fix.args_json() == {"file": "particles/sim.py", "factory": "drag_kernel", "kernels": ["apply_drag"]}


def test_config_after_import_needs_consent(plan_of):
    plan = plan_of("config_after_import")
    (fix,) = fixes(plan, "config-after-import")
    assert (fix.codemod, fix.safety, fix.allow_options) == ("config_at_entry", CONSENT, ["enable_backward"])
    assert fix.args_json() == {
        "file": "boids/__main__.py", "name": "enable_backward", "value": False, "line": 6,
        "before_line": 4, "before_statement": "from boids import flock",  # the import the run shows creating it
    }
    assert "above `from boids import flock` at boids/__main__.py:4" in fix.description


def test_granular_modules_are_merged(plan_of):
    plan = plan_of("granular_modules")
    (fix,) = fixes(plan, "granular-modules")
    assert fix.codemod == "merge_modules"
    assert len(fix.args_json()["kernels"]) == 7


def test_late_generic_instances_are_registered_up_front_in_one_fix_per_file(plan_of):
    plan = plan_of("late_overloads")
    (fix,) = fixes(plan, "late-overloads")  # axpy and residual, both of blas.py: one commit
    registered = {place.kernel: place.overloads for place in fix.places}
    assert sorted(registered) == ["axpy", "residual"]
    assert ["wp.float64", "wp.array(dtype=wp.float64)", "wp.array(dtype=wp.float64)"] in registered["axpy"]
    assert fix.title == "Register the axpy and residual overloads used at run time up front"
    assert fix.expected_builds_removed == 5  # six builds of mixedprec.blas become one


def test_stable_factory_kernels_share_a_module_and_plugins_stay_unique(plan_of):
    plan = plan_of("unique_on_stable")
    (fix,) = fixes(plan, "unique-on-stable")
    assert fix.args_json()["names"] == ["make_stage"]
    assert any("threshold" in n.reason and "runtime data" in n.reason for n in plan.not_proposed)


def test_noop_options_call_is_reported_not_applied(plan_of):
    plan = plan_of("noop_options")
    finding = next(f for f in plan.findings if f.slug == "late-module-options")
    assert finding.facts.no_ops
    assert "no kernels" in finding.reason
    assert fixes(plan, "late-module-options") == []


def test_unique_kernels_share_a_module_the_late_options_call_cannot_reach(plan_of):
    """forward_only() sets reducers.ops's options after the first reduction ran: were the three unique kernels
    to join reducers.ops, that call would reach them and rebuild the module between two launches."""
    plan = plan_of("noop_options")
    (fix,) = fixes(plan, "unique-on-stable")
    assert fix.args_json() == {
        "file": "reducers/ops.py", "names": ["sum_kernel", "max_kernel", "sum_squares_kernel"],
        "module": "reducers.ops.stable",
    }  # fmt: skip
    assert "Not reducers.ops: forward_only() (reducers/ops.py:28) sets its options" in fix.description


def test_backward_off_per_module_and_kept_where_a_tape_differentiates(plan_of):
    plan = plan_of("unused_backward")
    (fix,) = fixes(plan, "unused-backward")
    assert (fix.codemod, fix.safety) == ("module_options", SAFE)
    assert fix.args_json() == {"file": "springs/chain.py", "options": {"enable_backward": False}}
    finding = next(f for f in plan.findings if f.slug == "unused-backward")
    assert "springs.calibrate" in finding.facts.differentiated


def test_precompiled_header_off_is_reported(plan_of):
    plan = plan_of("precompiled_header")
    assert status(plan, "precompiled-header") == "fired"


def test_precompiled_header_advice_depends_on_the_cuda_toolkit(measured):
    """On CUDA the knob only matters below toolkit 13; the recorded CPU report is re-labelled to ask both."""
    report = copy.deepcopy(measured("precompiled_header"))
    for build in report.trace.builds:
        build.device = "cuda:0"
    report.trace.cuda_toolkit = "13.0"
    assert status(make_plan(report, FIXTURES / "precompiled_header"), "precompiled-header") == "ruled-out"
    report.trace.cuda_toolkit = "12.8"
    assert status(make_plan(report, FIXTURES / "precompiled_header"), "precompiled-header") == "fired"


def as_mathdx_on_cuda(report, native_ms: float):
    """A recorded CPU report re-labelled as a CUDA run whose springs.chain build linked two MathDx GEMMs."""
    report = copy.deepcopy(report)
    for build in report.trace.builds:
        build.device = "cuda:0"
        if build.module == "springs.chain":
            build.lto_builds, build.lto_kinds = 2, ["dot"]
    report.summary.lto_artifacts = 2
    report.summary.native_compile_ms.median = native_ms
    return report


def test_mathdx_modules_get_a_consent_fix_measured_both_ways(measured):
    report = as_mathdx_on_cuda(measured("unused_backward"), native_ms=1.0)
    plan = make_plan(report, FIXTURES / "unused_backward")
    assert status(plan, "mathdx-lto") == "fired"
    (fix,) = fixes(plan, "mathdx-lto")
    assert (fix.codemod, fix.safety, fix.measure_kernels) == ("module_options", CONSENT, True)
    assert fix.args_json() == {"file": "springs/chain.py", "options": {"enable_mathdx_gemm": False}, "replace": True}
    assert fix.allow_options == ["enable_mathdx_gemm"]


def test_mathdx_is_ruled_out_when_the_native_compiler_dominates(measured):
    report = measured("unused_backward")
    report = as_mathdx_on_cuda(report, native_ms=report.summary.cold_module_ms.median)
    plan = make_plan(report, FIXTURES / "unused_backward")
    assert status(plan, "mathdx-lto") == "ruled-out"


def test_clean_app_gets_no_fix_and_every_mechanism_is_checked(plan_of):
    plan = plan_of("clean")
    assert plan.fixes == []
    assert len(plan.checked) == len(SLUGS)
    assert all(f.status != "fired" for f in plan.findings)


def test_dominant_module_reports_the_preload_ceiling_even_on_cpu(plan_of):
    plan = plan_of("dominant_module")
    finding = next(f for f in plan.findings if f.slug == "serial-builds")
    assert finding.status == "not-applicable"
    assert "ceiling would be" in finding.reason


def test_a_lone_unique_kernel_kept_apart_for_its_block_size_is_left_alone(plan_of):
    plan = plan_of("lone_unique")
    assert fixes(plan, "unique-on-stable") == []
    (reason,) = [n.reason for n in plan.not_proposed if n.slug == "unique-on-stable"]
    assert "would be the only kernel of module spectra.histogram" in reason


def test_plugin_kernels_keep_their_backward_option(plan_of):
    plan = plan_of("plugin_dispatch")
    edited = {place.file for fix in fixes(plan, "unused-backward") for place in fix.places}
    assert "shading/shaders.py" not in edited and "shading/effects.py" not in edited
    reasons = [n.reason for n in plan.not_proposed if n.slug == "unused-backward"]
    assert any("toon (chosen by kind)" in r and "plugin code is left as it is" in r for r in reasons)
    assert any(r.startswith("shading.effects holds optional kernels") for r in reasons)


def test_backward_off_in_several_modules_of_one_file_is_one_fix(plan_of):
    plan = plan_of("plugin_dispatch")
    (fix,) = [f for f in fixes(plan, "unused-backward") if f.files == ["shading/stages.py"]]
    assert [place.kernel for place in fix.places] == ["normalize", "gamma", "posterize"]
    assert fix.title.endswith("(+2 more: gamma(), posterize())")
