"""CS-5: one module built at several CUDA block_dims: a full build per block size.

The split gives every stable block size its own module and every kernel launched at several sizes a module of
its own, so it pays only when it does not add builds: a kernel launched at 128 and 256 next to one launched at
256 makes three modules of a module built twice, and the overloads that would have removed its rebuilds no
longer can. Such a split is not proposed; the reason names the kernels that keep the sizes apart.

A build that a call other than a launch made (an occupancy query, a preload) at a size no launch of the module
ran at is not one of the launches' sizes: splitting cannot remove it, and early-load-block-size owns it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from codemods.specs import SplitByBlockDimArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    WARP_BLOCK_DIM,
    builds_of,
    expected_effect,
    fired,
    launch_sizes,
    module_scope_options,
    ms,
    not_applicable,
    ruled_out,
    runtime,
)
from warp_fix.model import FIRED, NOT_APPLICABLE, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.wording import counted


@dataclass(frozen=True)
class SplitBuilds:
    """What splitting one file's module by block size does to its builds per run."""

    before: int
    after: int
    spread: dict[str, list[int]]  # the kernels launched at several sizes, which each need a module per size


@dataclass(frozen=True)
class BlockDims:
    modules: dict[str, list[int]]  # module -> the block sizes it was built at
    groups: dict[str, dict[str, str]]  # file -> kernel -> its group (`bd<size>`, or `<kernel>_module`)
    builds_after_split: dict[str, SplitBuilds]  # per file
    runtime_block_dim: list[str]  # kernels whose block size is chosen at run time


class BlockDimSpread(Mechanism[BlockDims]):
    SLUG = "block-dim-spread"
    CS = "CS-5"
    TITLE = "one module compiled at several CUDA block sizes"
    SAFETY = (SAFE,)
    CODEMODS = ("split_by_block_dim",)

    def diagnose(self, inputs: Inputs) -> Finding[BlockDims]:
        if inputs.on_cpu_only:
            return not_applicable(
                self.SLUG, self.TITLE, "CPU run: block sizes do not split CPU modules (and splitting measured worse)"
            )
        spread: dict[str, dict[int, list]] = {}
        launches = inputs.report.trace.launches
        for build in inputs.user_builds():
            if build.cause and build.block_dim not in launch_sizes(build, launches):
                continue  # an early load at a size no launch used: early-load-block-size's
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
            if kernel is None or not inputs.scope.in_project(kernel):
                continue
            sites = [s for s in inputs.index.launches_of(kernel.name) if s.block_dim is not None]
            if any(not s.block_dim.is_constant for s in sites):
                runtime_kernels.append(kernel.name)
            groups.setdefault(kernel.file, {}).setdefault(kernel.name, set()).add(launch.block_dim or WARP_BLOCK_DIM)
        plan, builds_after = {}, {}
        for file, kernels in groups.items():
            builds_after[file] = _builds_after_split(kernels, set(runtime_kernels))
            for name, dims in kernels.items():
                if name in runtime_kernels or len(dims) > 1:
                    plan.setdefault(file, {})[name] = f"{name}_module"
                else:
                    plan.setdefault(file, {})[name] = f"bd{next(iter(dims))}"
        extra = sum(len(d) - 1 for d in spread.values())
        cost = sum(min(b.module_ms for b in builds) for dims in spread.values() for builds in list(dims.values())[1:])
        evidence = [runtime(f"{m} built at block_dim {sorted(d)}", None) for m, d in spread.items()]
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(extra, 'extra build')} for extra block sizes ({ms(cost)})",
            evidence=evidence,
            cost_ms=cost,
            extra_builds=extra,
            all_builds=builds_of(inputs, spread),
            facts=BlockDims(
                modules={m: sorted(d) for m, d in spread.items()},
                groups=plan,
                builds_after_split=builds_after,
                runtime_block_dim=sorted(set(runtime_kernels)),
            ),
        )

    def propose(self, finding: Finding[BlockDims], inputs: Inputs) -> Iterator[Proposal]:
        index = inputs.index
        if not finding.facts.groups:
            spread = "; ".join(f"{m} at {', '.join(map(str, d))}" for m, d in finding.facts.modules.items())
            yield NotProposed(
                finding.slug,
                f"{spread}: no kernel of the repository is launched there, so the block sizes are an installed "
                "package's choice",
            )
            return
        for file, groups in finding.facts.groups.items():
            python_module = index.python_module_of(file) or "module"
            split = finding.facts.builds_after_split[file]
            before, after = split.before, split.after
            if after > before:
                sizes = "; ".join(f"{k} at {', '.join(map(str, d))}" for k, d in split.spread.items())
                yield NotProposed(
                    finding.slug,
                    f"splitting {file} by block size would build {after} modules where it builds {before} now: "
                    f"{sizes} would need a module built at each size, and registered overloads could no longer "
                    "remove its rebuilds",
                )
                continue
            named = {kernel: f"{python_module}_{group}" for kernel, group in groups.items()}
            options = module_scope_options(inputs, python_module)
            yield Fix(
                id="",
                slug=finding.slug,
                title="Give each CUDA block size its own module",
                description="The module was compiled once per block size; kernels launched at one stable block size "
                "get a module per size, and kernels whose block size is chosen at run time one of their own. The "
                f"module's own options ({options or 'none'}) go to each new module.",
                safety=SAFE,
                codemod="split_by_block_dim",
                places=(SplitByBlockDimArgs(file=file, groups=named, options=options),),
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
            places=((SplitByBlockDimArgs(file="sim.py", groups={"integrate": "sim_bd256", "reduce": "sim_bd64"}),),),
        ),
        Example(
            "MuJoCo Warp's broadphase module built at 128 and 256 by the library's own launches: its choice",
            case.run(
                builds=[
                    case.build("_nxn_broadphase__locals__kernel_0dcff9d2", device="cuda:0", block_dim=128),
                    case.build("_nxn_broadphase__locals__kernel_0dcff9d2", device="cuda:0", block_dim=256),
                ],
                launches=[
                    case.launch("kernel", "_nxn_broadphase__locals__kernel_0dcff9d2", device="cuda:0", block_dim=d)
                    for d in (128, 256)
                ],
                source=case.index(files=["sim.py"]),
            ),
            FIRED,
            fixes=(),
            declined="no kernel of the repository is launched there, so the block sizes are an installed package's",
        ),
        Example(
            "a generic kernel launched at 128 and 256 beside one at 256: the split would add a module, so none",
            case.run(
                builds=[
                    case.build("blend", device="cuda:0", block_dim=128),
                    case.build("blend", device="cuda:0", block_dim=256),
                ],
                launches=[
                    case.launch("lerp_into", "blend", device="cuda:0", block_dim=128),
                    case.launch("accumulate", "blend", device="cuda:0", block_dim=256),
                    case.launch("lerp_into", "blend", device="cuda:0", block_dim=256),
                ],
                source=case.index(
                    files=["blend.py"],
                    kernels=[case.kernel("lerp_into", "blend.py", 5), case.kernel("accumulate", "blend.py", 9)],
                ),
            ),
            FIRED,
            fixes=(),
            declined="would build 3 modules where it builds 2 now",
        ),
        Example(
            "an occupancy query built the module at the default 256, its one kernel's launches at 128: a split "
            "cannot remove that build (early-load-block-size's)",
            case.run(
                builds=[
                    replace(case.build("step", device="cuda:0", block_dim=256), cause="get_suggested_block_size"),
                    case.build("step", device="cuda:0", block_dim=128, seq=2),
                ],
                launches=[case.launch("integrate", "step", device="cuda:0", block_dim=128)],
                source=case.index(files=["step.py"], kernels=[case.kernel("integrate", "step.py", 9)]),
            ),
            RULED_OUT,
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


def _builds_after_split(kernels: dict[str, set[int]], runtime_kernels: set[str]) -> SplitBuilds:
    """Builds per run now and after the split, and the kernels launched at several sizes, for one file.

    Now the module is built once per block size any of its kernels uses; after the split, once per stable size,
    once per size of each kernel launched at several, and once per kernel whose size is chosen at run time
    (its own module keeps the others from being rebuilt when another run picks another size: not counted
    against the split)."""
    sizes = {size for dims in kernels.values() for size in dims}
    spread = {k: sorted(d) for k, d in kernels.items() if len(d) > 1}
    if not spread:
        return SplitBuilds(len(sizes), len(sizes), {})
    stable = {next(iter(d)) for k, d in kernels.items() if k not in spread and k not in runtime_kernels}
    return SplitBuilds(len(sizes), len(stable) + sum(len(d) for d in spread.values()), spread)
