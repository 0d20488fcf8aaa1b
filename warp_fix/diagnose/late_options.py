"""CS-3: module options changed after the module's first build force a second full build."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ms, ruled_out, runtime, static
from warp_fix.findings import Finding

SLUG = "late-module-options"
TITLE = "options set after the module's first build"


def diagnose(inputs: Inputs) -> Finding:
    changes = [c for c in inputs.report.trace.option_changes if c.kind != "config"]
    late = [c for c in changes if c.target_loaded and c.target_has_kernels]
    no_ops = [c for c in changes if not c.target_has_kernels]
    rebuilds = [r for r in inputs.rebuilds_because("option") if not _only_config(r)]
    evidence = [runtime(f"{c.target}: {c.values} after its first build", c.site, inputs) for c in late]
    evidence += [
        runtime(f"{c.target}: {c.values} targets a module with no kernels (no effect)", c.site, inputs)
        for c in no_ops
    ]
    calls = []
    for change in late:
        file = inputs.repo_file(change.site.file) if change.site else None
        call = next(
            (o for o in inputs.index.option_calls if o.file == file and o.line == change.site.line), None
        )
        if call is not None:
            evidence.append(
                static(f"options call in {call.function or 'module scope'}", call.file, call.line)
            )
        calls.append(
            {
                "module": change.target,
                "file": file,
                "line": change.site.line if change.site else None,
                "function": call.function if call else None,
                "constant": bool(call and call.is_constant),
                "non_constant_keys": list(call.non_constant_keys) if call else [],
                "kind": change.kind,
                "keys": sorted(change.values),
                "differentiated": any(
                    launch.adjoint and launch.module == change.target for launch in inputs.report.trace.launches
                ),
            }
        )
    noop_details = [
        {
            "module": c.target,
            "file": inputs.repo_file(c.site.file) if c.site else None,
            "line": c.site.line if c.site else None,
            "values": c.values,
        }
        for c in no_ops
    ]
    if not rebuilds and not late:
        reason = "no module's options changed after its first build"
        if no_ops:
            reason += f"; {len(no_ops)} options call(s) target a module with no kernels (a no-op)"
        return ruled_out(SLUG, TITLE, reason, evidence=evidence, details={"no_ops": noop_details})
    cost = sum(r.module_ms for r in rebuilds)
    return fired(
        SLUG,
        TITLE,
        f"{len(rebuilds)} extra build(s) after options changed on loaded modules ({ms(cost)})",
        evidence=evidence,
        cost_ms=cost,
        extra_builds=len(rebuilds),
        details={"calls": calls, "no_ops": noop_details},
    )


def _only_config(rebuild) -> bool:
    return all("wp.config" in reason.detail for reason in rebuild.reasons if reason.kind == "option")
