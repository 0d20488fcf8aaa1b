"""CUDA-only mechanisms on the GPU fixtures; skipped (with the reason) on a machine without CUDA.

Run on a GPU machine with `python -m pytest -q tests/gpu`.
"""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, PYTHON


def _cuda_available() -> bool:
    try:
        import warp as wp

        wp.config.quiet = True
        return wp.is_cuda_available()
    except Exception:
        return False


pytestmark = pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device (GPU fixtures)")


@pytest.fixture(scope="module")
def gpu():
    from warp_fix.plan import make_plan
    from warp_fix.probe import measure

    done = {}

    def get(name: str, package: str):
        if name not in done:
            report = measure([PYTHON, "-m", package], FIXTURES / name, samples=1)
            done[name] = (report, make_plan(report, FIXTURES / name))
        return done[name]

    return get


def fired(plan, slug):
    return next(f for f in plan.findings if f.slug == slug)


def test_block_dims_are_recorded_and_split_planned(gpu):
    report, plan = gpu("gpu_block_dims", "raster")
    dims = sorted({b.block_dim for b in report.trace.builds if b.module == "raster.kernels"})
    assert dims == [64, 128, 256] or (len(dims) == 4 and dims[:3] == [64, 128, 256])
    assert all(b.native_ms > 0 for b in report.trace.builds if b.status == "compiled")
    finding = fired(plan, "block-dim-spread")
    assert finding.status == "fired"
    assert "row_sums" in finding.facts.runtime_block_dim
    (fix,) = [f for f in plan.fixes if f.slug == "block-dim-spread"]
    groups = fix.args_json()["groups"]
    assert len({groups["clear_grid"], groups["splat_points"], groups["shade"], groups["row_sums"]}) == 4


def test_late_overloads_on_cuda(gpu):
    report, plan = gpu("gpu_overloads", "blend")
    assert fired(plan, "late-overloads").status == "fired"


def test_tile_modules_link_lto_and_backward_is_turned_off_per_module(gpu):
    report, plan = gpu("gpu_tile_backward", "mlp")
    assert report.summary.lto_artifacts > 0
    assert [op.kind for op in report.trace.cache_ops] == ["clear_lto_cache"]
    files = sorted(place.file for f in plan.fixes if f.slug == "unused-backward" for place in f.places)
    assert files == ["mlp/decoder.py", "mlp/encoder.py"]
    linked = [b for b in report.trace.builds if b.lto_builds]
    assert linked and all("dot" in b.lto_kinds for b in linked)
    assert report.trace.cuda_toolkit


def test_mathdx_module_is_timed_in_steady_state_and_planned_as_a_measured_consent_fix():
    from warp_fix.plan import make_plan
    from warp_fix.probe import measure

    report = measure([PYTHON, "-m", "spectra"], FIXTURES / "gpu_mathdx", samples=1, kernel_timing=True)
    (timed,) = [t for t in report.warm_trace.kernel_times if t.module == "spectra.gemm"]
    assert timed.launches == 20 and timed.ms > 0
    (build,) = [b for b in report.trace.builds if b.module == "spectra.gemm"]
    assert build.lto_builds > 0 and build.lto_kinds == ["dot"]
    plan = make_plan(report, FIXTURES / "gpu_mathdx")
    finding = fired(plan, "mathdx-lto")
    assert finding.status == "fired", finding.reason
    (fix,) = [f for f in plan.fixes if f.slug == "mathdx-lto"]
    assert fix.args_json() == {"file": "spectra/gemm.py", "options": {"enable_mathdx_gemm": False}, "replace": True}
    assert fix.safety == "consent" and fix.measure_kernels


def test_serial_modules_offer_a_preload_with_the_ceiling(gpu):
    report, plan = gpu("gpu_serial", "stages")
    finding = fired(plan, "serial-builds")
    assert finding.status == "fired" and finding.facts.ceiling > 2
    (fix,) = [f for f in plan.fixes if f.slug == "serial-builds"]
    assert fix.safety == "consent"
    assert set(fix.args_json()["block_dims"].values()) == {128}


def test_one_dominant_module_rules_serial_builds_out(gpu):
    report, plan = gpu("gpu_dominant", "solver")
    finding = fired(plan, "serial-builds")
    assert finding.status == "ruled-out"
    assert "ceiling" in finding.reason
