"""CS-7: MathDx LTO artifacts whose link cost may not pay off."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, not_applicable, ruled_out
from warp_fix.findings import Finding

SLUG = "mathdx-lto"
TITLE = "MathDx link-time-optimised code that may not pay for its build"


def diagnose(inputs: Inputs) -> Finding:
    if inputs.on_cpu_only:
        return not_applicable(SLUG, TITLE, "CPU run: MathDx LTO is CUDA-only")
    summary = inputs.report.summary
    if summary is None or summary.lto_artifacts == 0:
        return ruled_out(SLUG, TITLE, "no LTO artifact was produced")
    native, module = summary.native_compile_ms.median, summary.cold_module_ms.median
    share = native / module if module else 1.0
    if share >= 0.5:
        return ruled_out(
            SLUG,
            TITLE,
            f"{summary.lto_artifacts} LTO artifacts, but {share:.0%} of module time is "
            "the native compiler: linking does not dominate",
        )
    return fired(
        SLUG,
        TITLE,
        f"{summary.lto_artifacts} LTO artifacts; only {share:.0%} of module time in the native compiler",
        cost_ms=module - native,
        details={"lto_artifacts": summary.lto_artifacts, "native_share": share},
    )
