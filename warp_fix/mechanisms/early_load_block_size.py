"""A call that loads a module before its launches, at another block size: the launches then build it again.

`wp.get_suggested_block_size(kernel, device)` (an occupancy query) loads the kernel's module at the module's
default block size (256 on CUDA); `wp.force_load`/`wp.load_module` load at the block size they are given (the
module's default when none); user code may call `Module.load` itself. Each block size is its own build of the
whole module, so when the launches use another size the early load is one extra full build. The tracer records
which call made each load (`ModuleBuild.cause`). Seen in the field: a physics library fixed it in its own code
(the module's default block size set to its launches') and added a lint against it; a prewarm once turned 5
builds into 9.

The fix is that library's: when the early call loaded at the module's default (an occupancy query, a user's
`Module.load`) and every launch of the module names one block size, that size becomes the module's default
(`module_options`, safe): the early call then loads what the launches need, and no launch changes, since each
names its size. A preload, whose size may be its own argument, and launches of several sizes or none stay advice
naming the launches' size.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._attribution import NoTarget, module_options_target, module_source
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import fired, launch_sizes, ms, ruled_out, runtime
from warp_fix.model import ADVISORY, FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import Launch, ModuleBuild, Site
from warp_fix.wording import counted

# Calls that always load at the module's default block size; a preload's recorded size may be its own argument
# (the build's options hold the size it was built at, not the module's default), so it is never assumed.
TAKE_THE_MODULE_DEFAULT = ("get_suggested_block_size", "Module.load")


@dataclass(frozen=True)
class EarlyLoad:
    """One build an early call made at a block size no launch of its module used."""

    module: str
    device: str
    cause: str  # get_suggested_block_size | force_load | load_module | Module.load
    block_dim: int | None
    launch_block_dims: list[int]
    site: Site | None
    module_ms: float
    at_module_default: bool  # the call took the module's default block size (an occupancy query always does)
    every_launch_names_it: bool  # each launch of the module passed block_dim itself

    @property
    def launches_size(self) -> int | None:
        """The one block size every launch named, which the module can take as its default without changing any."""
        if self.at_module_default and self.every_launch_names_it and len(self.launch_block_dims) == 1:
            return self.launch_block_dims[0]
        return None


@dataclass(frozen=True)
class EarlyLoads:
    loads: list[EarlyLoad]


def _early(module: str, block_dim: int, cause: str, device: str = "cpu") -> ModuleBuild:
    return dataclasses.replace(case.build(module, block_dim=block_dim, device=device), cause=cause)


def _occupancy_query(launch_block_dims: tuple[int | None, ...]) -> Inputs:
    """solver.py's `step`: an occupancy query loads `solver` at CUDA's default 256, a launch builds it at 128; one
    launch per entry of `launch_block_dims` (None: the launch names no block size)."""
    source = case.kernel_source("step", "solver.py", 9)
    return case.run(
        builds=[
            case.sourced(_early("solver", 256, "get_suggested_block_size", device="cuda:0"), source),
            case.sourced(case.build("solver", block_dim=128, device="cuda:0", seq=2), source),
        ],
        launches=[case.launch("step", "solver", device="cuda:0", block_dim=size) for size in launch_block_dims],
        source=case.index(files=["solver.py"]),
    )


class EarlyLoadBlockSize(Mechanism[EarlyLoads]):
    SLUG = "early-load-block-size"
    CS = None  # seen in the field after WARP_FACTS.md's table of thirteen
    TITLE = "a module loaded early at a block size its launches do not use"
    SAFETY = (SAFE, ADVISORY)
    CODEMODS = ("module_options",)

    def diagnose(self, inputs: Inputs) -> Finding[EarlyLoads]:
        builds = inputs.user_builds()
        loads = [load for b in builds if (load := _wasted(b, builds, inputs.report.trace.launches)) is not None]
        if not loads:
            return ruled_out(
                self.SLUG,
                self.TITLE,
                "no call outside a launch built a module at a block size its launches did not use",
            )
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(len(loads), 'early load')} built a module at a block size no launch used "
            f"({'; '.join(_said(load) for load in loads)})",
            evidence=[runtime(_said(load), load.site, inputs) for load in loads],
            cost_ms=sum(load.module_ms for load in loads),
            extra_builds=len(loads),
            facts=EarlyLoads(loads),
        )

    def propose(self, finding: Finding[EarlyLoads], inputs: Inputs) -> Iterator[Proposal]:
        for load in finding.facts.loads:
            size = load.launches_size
            if size is None:
                yield _advice(finding, load, inputs)
                continue
            build = next(b for b in inputs.user_builds() if b.module == load.module and b.cause == load.cause)
            source = module_source(build, inputs)
            target = module_options_target(load.module, source, inputs) if source else NoTarget("no kernel source")
            if isinstance(target, NoTarget):
                yield NotProposed(finding.slug, f"{_said(load)}: its block size cannot be set in one place "
                                  f"({target.reason})")
                continue
            args = target.place({"block_dim": size})
            yield Fix(
                id="",
                slug=finding.slug,
                title=f"Give {load.module} its launches' block size ({size}) as its default",
                description=f"{_said(load)}. block_dim={size} in the module's options (in {args.file}) makes the "
                f"{load.cause} call load the variant its launches use; every launch names block_dim={size} "
                "itself, so none changes.",
                safety=SAFE,
                codemod="module_options",
                places=(args,),
                files=[args.file],
                expected=f"removes 1 build of {load.module} (~{ms(load.module_ms)} of measured cold module work)",
                allow_options=["block_dim"],
                targets=[load.module],
            )

    EXAMPLES = (
        Example(
            "wp.load_module(..., block_dim=64) at start-up, launches at block_dim=32",
            case.run(
                builds=[_early("blocks", 64, "load_module"), case.build("blocks", block_dim=32, seq=2)],
                launches=[case.launch("sums", "blocks", block_dim=32)],
            ),
            FIRED,
            fixes=((None, ADVISORY),),
            reason="1 early load",
        ),
        Example(
            "wp.get_suggested_block_size on CUDA loads at the default 256; every launch names 128: the module's "
            "default becomes 128",
            _occupancy_query(launch_block_dims=(128,)),
            FIRED,
            fixes=(("module_options", SAFE),),
            reason="get_suggested_block_size built solver at block size 256",
        ),
        Example(
            "the same, but one launch names no block size: it runs at the default, which must stay",
            _occupancy_query(launch_block_dims=(128, None)),
            RULED_OUT,
        ),
        Example(
            "the same, and the launches use 32 and 64: the early load served a launch",
            case.run(
                builds=[_early("blocks", 64, "load_module"), case.build("blocks", block_dim=32, seq=2)],
                launches=[case.launch("sums", "blocks", block_dim=32), case.launch("sums", "blocks", block_dim=64)],
            ),
            RULED_OUT,
        ),
    )


def _advice(finding: Finding[EarlyLoads], load: EarlyLoad, inputs: Inputs) -> Fix:
    where = f"{inputs.repo_file(load.site.file) or load.site.file}:{load.site.line}" if load.site else ""
    size = load.launch_block_dims[0] if len(load.launch_block_dims) == 1 else None
    wanted = f"block_dim={size}" if size is not None else "the block size its launches use"
    return Fix(
        id="",
        slug=finding.slug,
        title=f"Load {load.module} early at the block size its launches use",
        description=f"{_said(load)}. Give the module its launches' block size as its default "
        f"(wp.get_module({load.module!r}).options['block_dim'], or module_options={{'block_dim': ...}} "
        f"on a unique kernel) before the call, or pass {wanted} to it; or remove the early load if it "
        f"serves nothing.",
        safety=ADVISORY,
        codemod=None,
        lines=[where] if where else [],
        expected=f"removes 1 build of {load.module} (~{ms(load.module_ms)} of measured cold module work)",
    )


def _wasted(build: ModuleBuild, builds: list[ModuleBuild], launches: list[Launch]) -> EarlyLoad | None:
    """`build` if an early call made it at a size no launch of its module used while a launch built another."""
    if not build.cause:
        return None
    kind = build.device.split(":")[0]
    mine = [lc for lc in launches if lc.module == build.module and lc.device.split(":")[0] == kind]
    sizes = sorted(launch_sizes(build, mine))
    rebuilt = any(
        b.module == build.module and b.device == build.device and not b.cause and b.block_dim != build.block_dim
        for b in builds
    )
    if not rebuilt or build.block_dim in sizes:
        return None
    return EarlyLoad(
        build.module, build.device, build.cause, build.block_dim, sizes, build.site, build.module_ms,
        at_module_default=build.cause in TAKE_THE_MODULE_DEFAULT,
        every_launch_names_it=all(lc.block_dim is not None for lc in mine),
    )


def _said(load: EarlyLoad) -> str:
    return (
        f"{load.cause} built {load.module} at block size {load.block_dim} on {load.device}; its launches use "
        f"{', '.join(map(str, load.launch_block_dims)) or 'none'}"
    )
