"""CS-11 and CS-12: the unroll budget and the precompiled header, reported with their evidence."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ruled_out, runtime
from warp_fix.findings import Finding

UNROLL = "unroll-budget"
UNROLL_TITLE = "large generated source from loop unrolling"
LARGE_SOURCE = 1_000_000

PCH = "precompiled-header"
PCH_TITLE = "precompiled headers turned off"


def diagnose_unroll(inputs: Inputs) -> Finding:
    summary = inputs.report.summary
    size = summary.generated_source_bytes if summary else 0
    unrolls = sorted({b.options.get("max_unroll") for b in inputs.user_builds()} - {None})
    if size < LARGE_SOURCE:
        return ruled_out(UNROLL, UNROLL_TITLE, f"generated source is {size:,} bytes (< {LARGE_SOURCE:,})")
    return fired(
        UNROLL,
        UNROLL_TITLE,
        f"{size:,} bytes of generated source at max_unroll {unrolls}: cutting it "
        "cut source 39% but gave no measured cold-start gain in a study; report only",
        details={"bytes": size, "max_unroll": unrolls},
    )


def diagnose_precompiled_header(inputs: Inputs) -> Finding:
    """CPU builds always use the precompiled header; CUDA builds only below toolkit 13 (13 ignores the knob)."""
    off = [b for b in inputs.user_builds() if b.options.get("use_precompiled_headers") is False]
    if not off:
        return ruled_out(PCH, PCH_TITLE, "precompiled headers are on (the default)")
    toolkit = inputs.report.trace.cuda_toolkit
    if all(b.device.startswith("cuda") for b in off) and toolkit_at_least(toolkit, 13):
        return ruled_out(
            PCH,
            PCH_TITLE,
            f"{len(off)} CUDA build(s) ran without precompiled headers, but CUDA toolkit {toolkit} "
            "ignores the setting: nothing to gain",
        )
    settings = [
        c
        for c in inputs.report.trace.option_changes
        if c.kind == "config" and "use_precompiled_headers" in c.values
    ]
    static = [a for a in inputs.index.config_assignments_for("use_precompiled_headers") if a.in_repo]
    return fired(
        PCH,
        PCH_TITLE,
        f"{len(off)} build(s) ran without precompiled headers",
        evidence=[runtime("wp.config.use_precompiled_headers = False", c.site, inputs) for c in settings],
        details={"assignments": [{"file": a.file, "line": a.line, "function": a.function} for a in static]},
    )


def toolkit_at_least(version: str, major: int) -> bool:
    """True when a "major.minor" toolkit version is known and at least `major`."""
    head = version.split(".", 1)[0]
    return head.isdigit() and int(head) >= major
