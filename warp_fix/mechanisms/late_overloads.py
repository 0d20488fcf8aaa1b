"""CS-6: a generic kernel's new instance after the first load rebuilds the whole module."""

from __future__ import annotations

from collections.abc import Iterator

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import expected_effect, fired, ms, ruled_out, runtime
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, Proposal


class LateOverloads(Mechanism):
    SLUG = "late-overloads"
    CS = "CS-6"
    TITLE = "generic kernel instances created after the module's first build"
    SAFETY = (SAFE,)
    CODEMODS = ("register_overloads",)

    def diagnose(self, inputs: Inputs) -> Finding:
        rebuilds = inputs.rebuilds_because("generic-instance")
        if not rebuilds:
            return ruled_out(self.SLUG, self.TITLE, "no module was rebuilt for a new generic instance")
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
            self.SLUG,
            self.TITLE,
            f"{len(rebuilds)} extra build(s) for new generic instances ({ms(cost)})",
            evidence=evidence,
            cost_ms=cost,
            extra_builds=len(rebuilds),
            details={"instances": instances},
        )

    def propose(self, finding: Finding, inputs: Inputs) -> Iterator[Proposal]:
        for key, instances in finding.details.get("instances", {}).items():
            file, _, kernel = key.partition("::")
            yield Fix(
                id="",
                slug=finding.slug,
                title=f"Register the {kernel} overloads used at run time up front",
                description=f"{kernel} is generic and was launched with {len(instances)} type signature(s); each new "
                "one after the first build rebuilt the module. Registering them at module scope builds them together.",
                safety=SAFE,
                codemod="register_overloads",
                args={"file": file, "kernel": kernel, "overloads": instances},
                files=[file],
                expected=expected_effect(finding),
                expected_builds_removed=finding.extra_builds,
                expected_ms=finding.cost_ms,
            )

    EXAMPLES = (
        Example(
            "a generic kernel launched with float32, then float64 arrays after the first build",
            case.run(
                builds=[case.build("sim"), case.build("sim")],
                rebuilds=[case.rebuild("sim", "generic-instance", "new instance scale[float64]")],
                launches=[
                    case.launch("scale", "sim", dtypes=["array[float32,1]", "float32"]),
                    case.launch("scale", "sim", dtypes=["array[float64,1]", "float64"]),
                ],
                source=case.index(files=["sim.py"], kernels=[case.kernel("scale", "sim.py", is_generic=True)]),
            ),
            FIRED,
            fixes=(("register_overloads", SAFE),),
        ),
        Example(
            "a generic kernel launched with one type signature only",
            case.run(
                builds=[case.build("sim")],
                launches=[case.launch("scale", "sim", dtypes=["array[float32,1]", "float32"])],
            ),
            RULED_OUT,
        ),
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
