"""CS-4: many one-kernel modules with the same lifecycle each pay a whole module build."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ms, ruled_out, runtime
from warp_fix.findings import Finding

SLUG = "granular-modules"
TITLE = "many tiny modules, each built separately"
MIN_MODULES = 4
_IDENTITY_FREE = {"block_dim"}


def diagnose(inputs: Inputs) -> Finding:
    unique_keys = {d.key for d in inputs.report.trace.kernel_defs if d.unique}
    singles = {}
    for build in inputs.user_builds():
        if len(build.kernels) == 1 and not build.generics and build.kernels[0] not in unique_keys:
            singles.setdefault((build.device, _options_key(build.options)), {})[build.module] = build
    group = max(singles.values(), key=len, default={})
    if len(group) < MIN_MODULES:
        return ruled_out(
            SLUG, TITLE, f"fewer than {MIN_MODULES} one-kernel modules share a device and options"
        )
    kernels = []
    for build in group.values():
        kernel = _static_kernel(inputs, build.kernels[0])
        if kernel is not None and kernel.in_repo and kernel.module_kind in ("default", "literal"):
            kernels.append([kernel.file, kernel.name])
    builds = list(group.values())
    cost = sum(b.module_ms for b in builds) - max(b.module_ms for b in builds)
    return fired(
        SLUG,
        TITLE,
        f"{len(group)} one-kernel modules with the same options, built one by one",
        evidence=[runtime(f"{b.module}: one kernel, {ms(b.module_ms)}", b.site, inputs) for b in builds],
        cost_ms=cost,
        extra_builds=len(group) - 1,
        details={"kernels": kernels, "modules": sorted(group)},
    )


def _options_key(options: dict) -> str:
    return repr(sorted((k, repr(v)) for k, v in options.items() if k not in _IDENTITY_FREE))


def _static_kernel(inputs: Inputs, key: str):
    name = key.split(".")[-1].split("__locals__")[-1]
    matches = [k for k in inputs.index.kernels if k.name == name]
    return matches[0] if len(matches) == 1 else None
