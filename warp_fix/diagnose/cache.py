"""CS-2: the kernel cache is thrown away, so every start is a cold start."""

from __future__ import annotations

import re

from warp_fix.diagnose.common import Inputs, fired, ms, ruled_out, runtime, static
from warp_fix.findings import Finding

SLUG = "cache-discarded"
TITLE = "compiled kernels thrown away, so every start compiles again"
MAINTENANCE_WORDS = re.compile(r"rebuild|maint|clean|purge|reset|invalidate|wipe", re.IGNORECASE)


def is_maintenance(operation) -> bool:
    """A clear that someone asked for (a --rebuild flag, a documented maintenance function)."""
    if operation.maintenance_guard:
        return True
    texts = [operation.function or "", operation.function_doc or ""]
    return any(MAINTENANCE_WORDS.search(text) for text in texts)


def diagnose(inputs: Inputs) -> Finding:
    report = inputs.report
    summary = report.summary
    executed = {}
    evidence = []
    for op in report.trace.cache_ops:
        if op.kind == "kernel_cache_dir" and not _temporary(op.value):
            continue
        evidence.append(runtime(f"{op.kind}({'' if op.value is None else op.value}) ran", op.site, inputs))
        if op.site is not None:
            file = inputs.repo_file(op.site.file)
            if file:
                executed[(file, op.site.line)] = op.kind
    incidental, maintenance = [], []
    for operation in inputs.index.cache_operations:
        if not operation.in_repo:
            continue
        if (operation.file, operation.line) in executed and not is_maintenance(operation):
            incidental.append(operation)
        elif is_maintenance(operation) or (operation.file, operation.line) not in executed:
            maintenance.append(operation)
            evidence.append(
                static(
                    f"{operation.kind} kept: maintenance path, not in the measured run",
                    operation.file,
                    operation.line,
                )
            )
    warm = summary.warm_builds if summary else 0
    if not warm and not incidental:
        return ruled_out(SLUG, TITLE, "the warm run compiled nothing: the cache is reused", evidence=evidence)
    cost = summary.warm_module_ms.median if summary else 0.0
    reason = (
        f"the warm run still compiled {warm} module(s) ({ms(cost)})"
        if warm
        else f"{len(incidental)} cache-destroying statement(s) ran"
    )
    return fired(
        SLUG,
        TITLE,
        reason,
        evidence=evidence,
        cost_ms=cost,
        extra_builds=warm,
        details={
            "sites": [
                {"file": o.file, "line": o.line, "kind": o.kind, "function": o.function} for o in incidental
            ],
            "maintenance": [{"file": o.file, "line": o.line, "function": o.function} for o in maintenance],
        },
    )


def _temporary(path) -> bool:
    return isinstance(path, str) and ("<private>" in path or "/tmp" in path or "Temp" in path)
