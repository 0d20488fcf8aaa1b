"""CS-1: kernels defined after their module loaded add a full rebuild of the module."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ms, ruled_out, runtime, static
from warp_fix.findings import Finding

SLUG = "kernel-after-load"
TITLE = "kernels defined after their module's first build"


def diagnose(inputs: Inputs) -> Finding:
    rebuilds = inputs.rebuilds_because("kernel-added")
    if not rebuilds:
        return ruled_out(SLUG, TITLE, "no module was rebuilt because a kernel appeared after its first build")
    evidence, late = [], []
    for rebuild in rebuilds:
        for reason in rebuild.reasons:
            if reason.kind != "kernel-added":
                continue
            evidence.append(runtime(f"{rebuild.module}: {reason.detail}", reason.site, inputs))
            if reason.site is not None:
                late.append(
                    {
                        "module": rebuild.module,
                        "file": inputs.repo_file(reason.site.file),
                        "line": reason.site.line,
                        "function": reason.site.function,
                    }
                )
    for item in late:
        kernel = inputs.index.kernel_named(item["function"], item["file"]) if item["file"] else None
        if kernel is not None:
            item["factory"] = kernel.enclosing_functions[-1] if kernel.enclosing_functions else None
            item["captures"] = list(kernel.captures)
            item["module_kind"] = kernel.module_kind
            evidence.append(
                static(
                    f"kernel {kernel.name} defined "
                    + (f"inside {item['factory']}" if item["factory"] else "at module scope"),
                    kernel.file,
                    kernel.line,
                )
            )
    cost = sum(r.module_ms for r in rebuilds)
    return fired(
        SLUG,
        TITLE,
        f"{len(rebuilds)} extra build(s) because kernels joined a module after it loaded ({ms(cost)})",
        evidence=evidence,
        cost_ms=cost,
        extra_builds=len(rebuilds),
        details={"late_kernels": late},
    )
