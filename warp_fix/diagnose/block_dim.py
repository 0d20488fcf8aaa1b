"""CS-5: one module built at several CUDA block_dims: a full build per block size."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ms, not_applicable, ruled_out, runtime
from warp_fix.findings import Finding

SLUG = "block-dim-spread"
TITLE = "one module compiled at several CUDA block sizes"


def diagnose(inputs: Inputs) -> Finding:
    if inputs.on_cpu_only:
        return not_applicable(
            SLUG, TITLE, "CPU run: block sizes do not split CPU modules (and splitting measured worse)"
        )
    spread: dict[str, dict[int, list]] = {}
    for build in inputs.user_builds():
        if build.device.startswith("cuda"):
            spread.setdefault(build.module, {}).setdefault(build.block_dim, []).append(build)
    spread = {m: dims for m, dims in spread.items() if len(dims) > 1}
    if not spread:
        return ruled_out(SLUG, TITLE, "every CUDA module was built at a single block size")
    groups, runtime_kernels = {}, []
    for launch in inputs.report.trace.launches:
        if launch.module not in spread:
            continue
        kernel = inputs.index.kernel_named(launch.function)
        if kernel is None or not kernel.in_repo:
            continue
        sites = [s for s in inputs.index.launches_of(kernel.name) if s.block_dim is not None]
        if any(not s.block_dim.is_constant for s in sites):
            runtime_kernels.append(kernel.name)
        groups.setdefault(kernel.file, {}).setdefault(kernel.name, set()).add(launch.block_dim or 256)
    plan = {}
    for file, kernels in groups.items():
        for name, dims in kernels.items():
            if name in runtime_kernels or len(dims) > 1:
                plan.setdefault(file, {})[name] = f"{name}_module"
            else:
                plan.setdefault(file, {})[name] = f"bd{next(iter(dims))}"
    extra = sum(len(d) - 1 for d in spread.values())
    cost = sum(
        min(b.module_ms for b in builds) for dims in spread.values() for builds in list(dims.values())[1:]
    )
    evidence = [runtime(f"{m} built at block_dim {sorted(d)}", None) for m, d in spread.items()]
    return fired(
        SLUG,
        TITLE,
        f"{extra} extra build(s) for extra block sizes ({ms(cost)})",
        evidence=evidence,
        cost_ms=cost,
        extra_builds=extra,
        details={
            "modules": {m: sorted(d) for m, d in spread.items()},
            "groups": plan,
            "runtime_block_dim": sorted(set(runtime_kernels)),
        },
    )
