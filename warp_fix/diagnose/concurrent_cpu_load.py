"""CS-8: concurrent first loads on the CPU can succeed, then fail with "Failed to find module"."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ruled_out, runtime
from warp_fix.findings import Finding

SLUG = "concurrent-cpu-load"
TITLE = "modules loaded concurrently on the CPU"


def diagnose(inputs: Inputs) -> Finding:
    risky = [c for c in inputs.report.trace.load_calls if _parallel(c.max_workers) and _may_be_cpu(c.devices)]
    static_risky = [
        p
        for p in inputs.index.preloads
        if p.in_repo
        and p.max_workers is not None
        and (not p.max_workers.is_constant or _parallel(p.max_workers.value))
    ]
    if not risky:
        return ruled_out(SLUG, TITLE, "no load call used several workers on a device that can be the CPU")
    sites = sorted({(inputs.repo_file(c.site.file), c.site.line) for c in risky if c.site})
    return fired(
        SLUG,
        TITLE,
        f"{len(risky)} load call(s) with max_workers > 1 can target the CPU",
        evidence=[
            runtime(f"{c.function}(max_workers={c.max_workers}, device={c.devices})", c.site, inputs)
            for c in risky
        ],
        details={
            "sites": [{"file": f, "line": line} for f, line in sites if f],
            "static": [{"file": p.file, "line": p.line} for p in static_risky],
        },
    )


def _parallel(workers) -> bool:
    return isinstance(workers, int) and workers > 1


def _may_be_cpu(devices: list[str]) -> bool:
    return any(d in ("None", "cpu") or d.startswith("cpu") for d in devices)
