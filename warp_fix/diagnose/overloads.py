"""CS-6: a generic kernel's new instance after the first load rebuilds the whole module."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ms, ruled_out, runtime
from warp_fix.findings import Finding

SLUG = "late-overloads"
TITLE = "generic kernel instances created after the module's first build"


def diagnose(inputs: Inputs) -> Finding:
    rebuilds = inputs.rebuilds_because("generic-instance")
    if not rebuilds:
        return ruled_out(SLUG, TITLE, "no module was rebuilt for a new generic instance")
    instances: dict[str, list[list[str]]] = {}
    for launch in inputs.report.trace.launches:
        kernel = inputs.index.kernel_named(launch.function)
        if kernel is None or not kernel.is_generic or not kernel.in_repo or not kernel.at_module_scope:
            continue
        types = [_type_expression(t) for t in launch.dtypes]
        bucket = instances.setdefault(f"{kernel.file}::{kernel.name}", [])
        if types not in bucket and None not in types:
            bucket.append(types)
    cost = sum(r.module_ms for r in rebuilds)
    evidence = [
        runtime(f"{r.module}: {reason.detail}", reason.site, inputs)
        for r in rebuilds
        for reason in r.reasons
        if reason.kind == "generic-instance"
    ]
    return fired(
        SLUG,
        TITLE,
        f"{len(rebuilds)} extra build(s) for new generic instances ({ms(cost)})",
        evidence=evidence,
        cost_ms=cost,
        extra_builds=len(rebuilds),
        details={"instances": instances},
    )


_SCALARS = {
    "float32",
    "float64",
    "float16",
    "int32",
    "int64",
    "int8",
    "int16",
    "uint8",
    "uint32",
    "uint64",
    "int",
    "float",
    "bool",
}


def _type_expression(dtype: str) -> str | None:
    """'array[float64,1]' -> 'wp.array(dtype=wp.float64)'; 'float' -> 'float'."""
    if "[" in dtype:
        kind, _, rest = dtype.partition("[")
        inner, _, ndim = rest.rstrip("]").rpartition(",")
        if kind != "array":
            return None
        element = inner if inner in ("float", "int", "bool") else f"wp.{inner}"
        return f"wp.array(dtype={element})" if ndim == "1" else f"wp.array(dtype={element}, ndim={ndim})"
    if dtype in ("float", "int", "bool"):
        return dtype
    if dtype in _SCALARS or dtype.startswith(("vec", "mat", "quat", "transform")):
        return f"wp.{dtype}"
    return None
