"""CS-13: independent modules built one after another on first use, where a preload could overlap them."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ms, not_applicable, ruled_out
from warp_fix.findings import Finding

SLUG = "serial-builds"
TITLE = "independent modules compiled one at a time"
MIN_CEILING = 1.3


def diagnose(inputs: Inputs) -> Finding:
    device = "cpu" if inputs.on_cpu_only else "cuda"
    builds = [b for b in inputs.user_builds() if b.device.startswith(device) and b.status == "compiled"]
    per_module = {}
    for build in builds:
        per_module.setdefault(build.module, []).append(build)
    once = {m: bs[0] for m, bs in per_module.items() if len(bs) == 1}
    if inputs.on_cpu_only:
        return not_applicable(SLUG, TITLE, "CPU run: concurrent CPU loads are unsafe (see concurrent CPU loads)"
                              + _ceiling_text(once))
    if len(once) < 2:
        return ruled_out(SLUG, TITLE, "fewer than two modules were built exactly once")
    total = sum(b.module_ms for b in once.values())
    largest = max(once.values(), key=lambda b: b.module_ms)
    ceiling = total / largest.module_ms if largest.module_ms else 1.0
    details = {
        "modules": {m: b.block_dim for m, b in once.items()},
        "sum_ms": total,
        "max_ms": largest.module_ms,
        "slowest": largest.module,
        "ceiling": round(ceiling, 2),
        "device": largest.device,
    }
    if ceiling < MIN_CEILING:
        return ruled_out(
            SLUG,
            TITLE,
            f"one module dominates ({largest.module}, {ms(largest.module_ms)} of "
            f"{ms(total)}): preload ceiling only {ceiling:.2f}x",
            details=details,
        )
    return fired(
        SLUG,
        TITLE,
        f"{len(once)} modules built serially: {ms(total)}; ceiling {ceiling:.2f}x "
        f"(slowest {largest.module}, {ms(largest.module_ms)})",
        cost_ms=total - largest.module_ms,
        details=details,
    )


def _ceiling_text(once: dict) -> str:
    """The preload ceiling (sum / max of module times), reported even where preloading does not apply."""
    if len(once) < 2:
        return ""
    total = sum(b.module_ms for b in once.values())
    largest = max(once.values(), key=lambda b: b.module_ms)
    ceiling = total / largest.module_ms if largest.module_ms else 1.0
    return f"; ceiling would be {ceiling:.2f}x (slowest {largest.module}, {ms(largest.module_ms)} of {ms(total)})"
