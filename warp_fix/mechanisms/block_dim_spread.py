"""CS-5: one module built at several CUDA block_dims: a full build per block size."""

from __future__ import annotations

from collections.abc import Iterator

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    expected_effect,
    fired,
    module_scope_options,
    ms,
    not_applicable,
    ruled_out,
    runtime,
)
from warp_fix.model import FIRED, NOT_APPLICABLE, RULED_OUT, SAFE, Finding, Fix, Proposal


class BlockDimSpread(Mechanism):
    SLUG = "block-dim-spread"
    CS = "CS-5"
    TITLE = "one module compiled at several CUDA block sizes"
    SAFETY = (SAFE,)
    CODEMODS = ("split_by_block_dim",)

    def diagnose(self, inputs: Inputs) -> Finding:
        if inputs.on_cpu_only:
            return not_applicable(
                self.SLUG, self.TITLE, "CPU run: block sizes do not split CPU modules (and splitting measured worse)"
            )
        spread: dict[str, dict[int, list]] = {}
        for build in inputs.user_builds():
            if build.device.startswith("cuda"):
                spread.setdefault(build.module, {}).setdefault(build.block_dim, []).append(build)
        spread = {m: dims for m, dims in spread.items() if len(dims) > 1}
        if not spread:
            return ruled_out(self.SLUG, self.TITLE, "every CUDA module was built at a single block size")
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
            self.SLUG,
            self.TITLE,
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

    def propose(self, finding: Finding, inputs: Inputs) -> Iterator[Proposal]:
        index = inputs.index
        for file, groups in finding.details.get("groups", {}).items():
            python_module = index.python_module_of(file) or "module"
            named = {kernel: f"{python_module}_{group}" for kernel, group in groups.items()}
            options = module_scope_options(index, python_module)
            yield Fix(
                id="",
                slug=finding.slug,
                title="Give each CUDA block size its own module",
                description="The module was compiled once per block size; kernels launched at one stable block size "
                "get a module per size, and kernels whose block size is chosen at run time one of their own. The "
                f"module's own options ({options or 'none'}) go to each new module.",
                safety=SAFE,
                codemod="split_by_block_dim",
                args={"file": file, "groups": named, "options": options},
                files=[file],
                expected=expected_effect(finding),
                expected_builds_removed=finding.extra_builds,
                expected_ms=finding.cost_ms,
            )

    EXAMPLES = (
        Example(
            "two kernels of one CUDA module launched at block sizes 256 and 64",
            case.run(
                builds=[
                    case.build("sim", device="cuda:0", block_dim=256),
                    case.build("sim", device="cuda:0", block_dim=64),
                ],
                launches=[
                    case.launch("integrate", "sim", device="cuda:0", block_dim=256),
                    case.launch("reduce", "sim", device="cuda:0", block_dim=64),
                ],
                source=case.index(
                    files=["sim.py"],
                    kernels=[case.kernel("integrate", "sim.py", 5), case.kernel("reduce", "sim.py", 9)],
                ),
            ),
            FIRED,
            fixes=(("split_by_block_dim", SAFE),),
        ),
        Example(
            "every CUDA module built at one block size",
            case.run(builds=[case.build("sim", device="cuda:0", block_dim=256)]),
            RULED_OUT,
        ),
        Example(
            "a CPU run: block sizes do not split CPU modules",
            case.run(builds=[case.build("sim", block_dim=256), case.build("sim", block_dim=64)]),
            NOT_APPLICABLE,
        ),
    )



