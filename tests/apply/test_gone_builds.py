"""The "Builds gone" of a commit lists only builds the fixed run no longer does (recorded data, pure function)."""

from __future__ import annotations

from dataclasses import replace

from warp_fix.apply.evidence import gone_builds
from warp_fix.mechanisms import _situation as case
from warp_fix.report import Rebuild, RebuildReason


def rebuild(module: str) -> Rebuild:
    reason = RebuildReason("generic-instance", "new generic instance _diag_mv_kernel[f8] by a launch", None)
    return Rebuild(module, "cpu", "aaaaaaa", "bbbbbbb", 3, 315.0, [reason])


def report_with(*rebuilds: Rebuild):
    return replace(case.run().report, rebuilds=list(rebuilds))


def test_a_rebuild_under_a_renamed_hash_module_is_not_gone():
    """Turning backward off renames Warp's one-kernel modules (their hash moves): warp.sparse's
    `_diag_mv_kernel_55845888` is rebuilt as `_diag_mv_kernel_0c1d2e3f` for the same new instance."""
    before = report_with(rebuild("_diag_mv_kernel_55845888"))
    assert gone_builds(before, report_with(rebuild("_diag_mv_kernel_0c1d2e3f"))) == []


def test_a_rebuild_the_fixed_run_does_not_do_is_gone():
    before = report_with(rebuild("_diag_mv_kernel_55845888"), rebuild("sim"))
    (gone,) = gone_builds(before, report_with(rebuild("_diag_mv_kernel_0c1d2e3f")))
    assert (gone.module, gone.run, gone.why) == ("sim", "cold", "new generic instance _diag_mv_kernel[f8] by a launch")


def test_a_note_on_moved_options_names_six_kernels_and_counts_the_rest():
    """Turning backward off process-wide moves the option of dozens of library kernels (23 in Warp's
    Taylor-Green example): a commit names six, the comparison's option_drift keeps them all."""
    from warp_fix.compare import compare

    names = [f"k{i}" for i in range(8)]

    def run(backward: bool):
        builds = [case.build(f"m{i}", options={"enable_backward": backward}, seq=2 * i) for i in range(8)]
        launches = [replace(case.launch(name, f"m{i}"), seq=2 * i + 1) for i, name in enumerate(names)]
        return case.run(builds=builds, launches=launches).report

    comparison = compare(run(True), run(False), allow_options=frozenset({"enable_backward"}))
    assert len(comparison.option_drift) == 8
    (note,) = [n for n in comparison.notes if n.startswith("effective option")]
    assert note == (
        "effective option enable_backward of 8 kernels (k0, k1, k2, k3, k4, k5 and 2 more): True -> False (allowed)"
    )
