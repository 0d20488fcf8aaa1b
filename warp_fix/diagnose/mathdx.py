"""CS-7: MathDx link-time-optimised code that may not pay for its build.

Turning MathDx off makes the build cheaper and the kernel slower (an f16 GEMM ran ~2.9x faster with it),
so the finding only names the modules and what their builds cost; apply measures both ways.
"""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, not_applicable, ruled_out
from warp_fix.findings import Finding

SLUG = "mathdx-lto"
TITLE = "MathDx link-time-optimised code that may not pay for its build"

# Warp's MathDx builders (warp._src.build.build_lto_<kind>) and the option that turns each one off.
OPTION_OF_KIND = {"dot": "enable_mathdx_gemm", "solver": "enable_mathdx_solver", "fft": "enable_mathdx_fft"}


def diagnose(inputs: Inputs) -> Finding:
    if inputs.on_cpu_only:
        return not_applicable(SLUG, TITLE, "CPU run: MathDx LTO is CUDA-only")
    summary = inputs.report.summary
    if summary is None or summary.lto_artifacts == 0:
        return ruled_out(SLUG, TITLE, "no LTO artifact was produced")
    modules = _lto_modules(inputs)
    native, module = summary.native_compile_ms.median, summary.cold_module_ms.median
    share = native / module if module else 1.0
    if share >= 0.5:
        return ruled_out(
            SLUG,
            TITLE,
            f"{summary.lto_artifacts} LTO artifacts, but {share:.0%} of module time is "
            "the native compiler: linking does not dominate",
        )
    names = ", ".join(m["module"] for m in modules) or "modules the tracer could not attribute"
    return fired(
        SLUG,
        TITLE,
        f"{summary.lto_artifacts} LTO artifacts ({names}); only {share:.0%} of module time in the native "
        "compiler: measure the build and the steady-state kernel time both ways",
        cost_ms=module - native,
        details={"lto_artifacts": summary.lto_artifacts, "native_share": share, "modules": modules},
    )


def _lto_modules(inputs: Inputs) -> list[dict]:
    """Per module that ran MathDx builders: LTO builds, the options that would turn them off, and its cost."""
    found: dict[str, dict] = {}
    for build in inputs.user_builds():
        if not build.lto_builds:
            continue
        entry = found.setdefault(
            build.module, {"module": build.module, "lto_builds": 0, "module_ms": 0.0, "native_ms": 0.0, "options": []}
        )
        entry["lto_builds"] += build.lto_builds
        entry["module_ms"] += build.module_ms
        entry["native_ms"] += build.native_ms
        for kind in build.lto_kinds:
            option = OPTION_OF_KIND.get(kind)
            if option and option not in entry["options"]:
                entry["options"].append(option)
    return sorted(found.values(), key=lambda m: -m["module_ms"])
