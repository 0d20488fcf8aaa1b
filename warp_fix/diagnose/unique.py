"""CS-9: `module="unique"` on stable kernels gives each its own hash-named module and build."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ms, ruled_out, runtime, static
from warp_fix.findings import Finding

SLUG = "unique-on-stable"
TITLE = 'stable kernels each compiled in a module of their own (module="unique")'


def diagnose(inputs: Inputs) -> Finding:
    defs = [d for d in inputs.report.trace.kernel_defs if d.unique]
    if not defs:
        return ruled_out(SLUG, TITLE, 'no kernel with module="unique" was created in the run')
    stable, runtime_made = [], []
    evidence = []
    for kernel_def in _distinct(defs):
        file = inputs.repo_file(kernel_def.site.file) if kernel_def.site else None
        kernel = inputs.index.kernel_named(kernel_def.function, file) if file else None
        if kernel is None or not kernel.in_repo:
            continue
        factory = (
            inputs.index.factory_named(".".join(kernel.enclosing_functions))
            if kernel.enclosing_functions
            else None
        )
        entry = {
            "file": kernel.file,
            "kernel": kernel.name,
            "line": kernel.line,
            "factory": kernel.enclosing_functions[-1] if kernel.enclosing_functions else None,
            "python_module": kernel.python_module,
            "module_kind": kernel.module_kind,
            "captures": list(kernel.captures),
            "factory_params": [p.name for p in factory.parameters] if factory else [],
        }
        runtime_captures = [c for c in kernel.captures if c != "module"]
        entry["called_at_module_scope"] = _created_at_module_scope(defs, kernel_def.function)
        # A factory called only at import time makes a fixed set of kernels before any launch, whatever its
        # kernels capture: they can share one module. One called later (plugins, requests) cannot.
        if runtime_captures and not (entry["factory"] and entry["called_at_module_scope"]):
            runtime_made.append(entry)
            evidence.append(
                static(
                    f"{kernel.name} captures {', '.join(runtime_captures)}: made from runtime "
                    "data, stays unique",
                    kernel.file,
                    kernel.line,
                )
            )
        else:
            stable.append(entry)
            evidence.append(
                static(f"{kernel.name} captures nothing from its factory: stable", kernel.file, kernel.line)
            )
    unique_modules = [b for b in inputs.user_builds() if _is_unique_build(b, {d.key for d in defs})]
    evidence += [
        runtime(f"module {b.module} built for one unique kernel", b.site, inputs) for b in unique_modules
    ]
    if not stable:
        return ruled_out(
            SLUG,
            TITLE,
            "every unique kernel is made from runtime data (plugins, expressions)",
            evidence=evidence,
            details={"runtime_made": runtime_made},
        )
    cost = sum(b.module_ms for b in unique_modules if any(k["kernel"] in " ".join(b.kernels) for k in stable))
    return fired(
        SLUG,
        TITLE,
        f"{len(stable)} stable kernel(s) built in module(s) of their own ({ms(cost)})",
        evidence=evidence,
        cost_ms=cost,
        extra_builds=max(0, len(stable) - 1),
        details={"stable": stable, "runtime_made": runtime_made},
    )


def _created_at_module_scope(defs, function: str) -> bool:
    """Every creation of this kernel came from a factory call at import time (module scope): stable inputs."""
    callers = [d.site.stack[1] for d in defs if d.function == function and d.site and len(d.site.stack) > 1]
    return bool(callers) and all(caller.endswith(":<module>") for caller in callers)


def _distinct(defs):
    seen = set()
    for d in defs:
        key = (d.site.file if d.site else None, d.function)
        if key not in seen:
            seen.add(key)
            yield d


def _is_unique_build(build, unique_keys: set[str]) -> bool:
    return bool(build.kernels) and all(k in unique_keys for k in build.kernels)
