"""CS-13: independent modules built one after another on first use, where a preload could overlap them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from codemods.specs import PreloadArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    entry_file,
    fired,
    module_names,
    ms,
    not_applicable,
    ruled_out,
)
from warp_fix.model import ADVISORY, CONSENT, FIRED, NOT_APPLICABLE, RULED_OUT, Finding, Fix, Proposal
from warp_fix.report import ModuleBuild, Site
from warp_fix.scan.index import EntryPoint
from warp_fix.warp_releases import SAFE_PARALLEL_CPU_LOADS, holds
from warp_fix.wording import noun

MIN_CEILING = 1.3
LIBRARY_LAUNCH = "/venv/lib/python3.12/site-packages/physics/step.py"
ENTRY_CALL = "app/__main__.py:12:main"


def _cuda_modules(
    first_launch_in: str = "app/__main__.py", *stack: str, made_in: str = "<module>", **module_ms: float
) -> Inputs:
    """A CUDA run that builds each module once, in `module_ms` milliseconds, its kernel made in `made_in` of its own
    file (`<module>`: at import); the first launch in main() of `first_launch_in`, whose outer frames are `stack`."""
    first = case.site(first_launch_in, 8, "main", stack=stack)
    made = {m: case.site(f"app/{m}.py", 5, made_in) for m in module_ms}
    return case.run(
        builds=[
            case.sourced(
                case.build(m, device="cuda:0", block_dim=256, ms=ms),
                case.kernel_source("step", f"app/{m}.py", 6, created=made[m]),
            )
            for m, ms in module_ms.items()
        ],
        launches=[case.launch("step", m, device="cuda:0", site=first) for m in module_ms],
        source=case.index(
            files=["app/__main__.py", "sim.py"], entry_points=[EntryPoint(kind="main_module", file="app/__main__.py")]
        ),
    )


@dataclass(frozen=True)
class SerialModules:
    """The modules built exactly once, one after another, and what a parallel preload could gain at best."""

    modules: dict[str, int | None]  # module -> the block_dim it was built at
    sum_ms: float
    max_ms: float
    slowest: str
    ceiling: float  # sum / max of their build times
    device: str


class SerialBuilds(Mechanism[SerialModules]):
    SLUG = "serial-builds"
    CS = "CS-13"
    TITLE = "independent modules compiled one at a time"
    SAFETY = (CONSENT, ADVISORY)
    CODEMODS = ("preload",)

    def diagnose(self, inputs: Inputs) -> Finding[SerialModules]:
        device = "cpu" if inputs.on_cpu_only else "cuda"
        builds = [b for b in inputs.user_builds() if b.device.startswith(device) and b.status == "compiled"]
        per_module = {}
        for build in builds:
            per_module.setdefault(build.module, []).append(build)
        once = {m: bs[0] for m, bs in per_module.items() if len(bs) == 1}
        if inputs.on_cpu_only:
            return not_applicable(
                self.SLUG,
                self.TITLE,
                _cpu_reason(inputs.report.warp_version) + _ceiling_text(once),
            )
        if len(once) < 2:
            return ruled_out(self.SLUG, self.TITLE, "fewer than two modules were built exactly once")
        total = sum(b.module_ms for b in once.values())
        largest = max(once.values(), key=lambda b: b.module_ms)
        ceiling = total / largest.module_ms if largest.module_ms else 1.0
        facts = SerialModules(
            modules={m: b.block_dim for m, b in once.items()},
            sum_ms=total,
            max_ms=largest.module_ms,
            slowest=largest.module,
            ceiling=round(ceiling, 2),
            device=largest.device,
        )
        if ceiling < MIN_CEILING:
            return ruled_out(
                self.SLUG,
                self.TITLE,
                f"one module dominates ({largest.module}, {ms(largest.module_ms)} of "
                f"{ms(total)}): preload ceiling only {ceiling:.2f}x",
                facts=facts,
            )
        return fired(
            self.SLUG,
            self.TITLE,
            f"{len(once)} modules built serially: {ms(total)}; ceiling {ceiling:.2f}x "
            f"(slowest {largest.module}, {ms(largest.module_ms)})",
            cost_ms=total - largest.module_ms,
            facts=facts,
        )

    def propose(self, finding: Finding[SerialModules], inputs: Inputs) -> Iterator[Proposal]:
        report = inputs.report
        entry = entry_file(inputs)
        facts = finding.facts
        first = next((launch for launch in report.trace.launches if launch.site), None)
        if entry is None or first is None or first.site.file != entry:
            yield _advisory(finding, _by_hand(facts, first.site if first else None, inputs))
            return
        ready = {m: dim for m, dim in facts.modules.items() if _made_at_import(inputs.final_builds[m], inputs)}
        later = sorted(set(facts.modules) - set(ready))
        times = {m: inputs.final_builds[m].module_ms for m in ready}
        slowest = max(times, key=times.__getitem__, default=None)
        ceiling = round(sum(times.values()) / times[slowest], 2) if slowest and times[slowest] else 1.0
        if len(ready) < 2 or ceiling < MIN_CEILING:
            yield _advisory(finding, _made_later(facts, later, first.site.function, inputs))
            return
        modules = sorted(ready)
        left_out = (
            f" Left out: {module_names(later, inputs)}, made while the program runs: no preload can name them "
            "before they exist."
            if later
            else ""
        )
        # At the top of the function holding the first launch (a launch inside a loop must not get it per pass).
        where = (
            {"before_line": first.site.line} if first.site.function == "<module>" else {"function": first.site.function}
        )
        yield Fix(
            id="",
            slug=finding.slug,
            title=f"Preload {len(modules)} independent modules in parallel",
            description=f"{len(modules)} modules were built one after another ({ms(sum(times.values()))} summed; "
            f"slowest {slowest} {ms(times[slowest])}). Ceiling: {ceiling}x on compile elapsed. Each module's real "
            f"block_dim is declared so the preload builds the variant used.{left_out}",
            safety=CONSENT,
            codemod="preload",
            places=(
                PreloadArgs(
                    file=entry,
                    modules=modules,
                    device=facts.device,
                    max_workers=len(modules),
                    block_dims=ready,
                    **where,
                ),
            ),
            files=[entry],
            expected=f"compile elapsed down to at best ~{times[slowest]:,.0f} ms "
            f"(ceiling {ceiling}x; untested estimate)",
        )

    EXAMPLES = (
        Example(
            "three CUDA modules of similar size built one after another from main() of the entry point",
            _cuda_modules(sim=400.0, render=300.0, io=300.0),
            FIRED,
            fixes=(("preload", CONSENT),),
        ),
        Example(
            "the first launch is in a library function, not in the entry point: nowhere to insert the preload",
            _cuda_modules(sim=400.0, render=300.0, io=300.0, first_launch_in="sim.py"),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example(
            "the first launch is inside an installed package, reached from the entry point: advice by hand",
            _cuda_modules(LIBRARY_LAUNCH, ENTRY_CALL, sim=400.0, render=300.0, io=300.0),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example(
            "the modules are made while the program runs (warp.fem integrands, a factory): a preload at the start of "
            "main() could not name them",
            _cuda_modules(made_in="solve", sim=400.0, render=300.0, io=300.0),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example(
            "one module dominates: a preload could gain at most 1.1x",
            _cuda_modules(sim=2000.0, render=100.0, io=100.0),
            RULED_OUT,
        ),
        Example(
            "a CPU run: no CPU preload is offered (unsafe before Warp 1.17, no measured gain since)",
            case.run(builds=[case.build("sim"), case.build("render")]),
            NOT_APPLICABLE,
        ),
    )


def _advisory(finding: Finding[SerialModules], description: str) -> Fix:
    """The fix where no preload can be inserted: what to do, in words."""
    return Fix(
        id="",
        slug=finding.slug,
        title="Preload independent modules in parallel",
        description=description,
        safety=ADVISORY,
        codemod=None,
        expected=f"compile elapsed down to at best ~{finding.facts.max_ms:,.0f} ms, the slowest module alone "
        f"(ceiling {finding.facts.ceiling}x, every build overlapped; untested estimate)",
    )


def _built(facts: SerialModules) -> str:
    count = len(facts.modules)
    return f"{count} modules were built one after another ({ms(facts.sum_ms)} summed; ceiling {facts.ceiling}x)"


def _made_at_import(build: ModuleBuild, inputs: Inputs) -> bool:
    """Every kernel of the module is the project's and made at module scope: the module is complete once the
    program is imported, so a preload before the first launch can name it. Modules warp.fem, a library or a
    factory makes while the program runs do not exist yet there (a preload would build an empty module)."""
    return bool(build.kernel_sources) and all(
        inputs.repo_file(k.file) and k.created is not None and k.created.function == "<module>"
        for k in build.kernel_sources
    )


def _made_later(facts: SerialModules, later: list[str], function: str, inputs: Inputs) -> str:
    """The advisory where too few modules exist before the first launch to preload."""
    who = "all of them" if len(later) == len(facts.modules) else module_names(later, inputs)
    return (
        f"{_built(facts)}; {who} {noun(len(later), 'is', 'are')} made while the program runs "
        f"(by warp.fem, a library or a factory), after the start of {function}, so no preload there can name "
        "them before they exist. `warp-fix bake` takes their builds out of a cold start altogether."
    )


def _by_hand(facts: SerialModules, first: Site | None, inputs: Inputs) -> str:
    """What the user can do where no preload can be inserted: where the first launch is, the call to place
    before it, and the condition that makes it safe (a kernel added to a module after its preload rebuilds it)."""
    count = len(facts.modules)
    built = _built(facts)
    if first is None:
        return f"{built}; no launch was traced to a line of code, so there is no place to put a preload."
    own = inputs.repo_file(first.file)
    if own is None:
        caller = next((c for c in first.callers() if inputs.repo_file(c.file)), None)
        reached = f", reached from {inputs.repo_file(caller.file)}:{caller.line} in {caller.function}" if caller else ""
        place = f"{first.file.rsplit('/', 1)[-1]}:{first.line} in {first.function}"
        where = f"the first launch is in library code ({place}{reached})"
    else:
        where = f"the first launch is at {own}:{first.line} in {first.function}, not in the entry point"
    call = f'wp.force_load(device="{facts.device}", modules=[...], max_workers={count})'
    return (
        f"{built}; {where}. By hand, `{call}` listing those modules, run before the first launch, overlaps the builds "
        "if every kernel of them exists by then (a kernel added later builds its module again); "
        "`warp-fix bake` takes them out of a cold start altogether."
    )


def _cpu_reason(warp_version: str) -> str:
    """Why no CPU preload is offered: unsafe before Warp 1.17; from 1.17 safe, but no CPU gain was measured."""
    if holds(SAFE_PARALLEL_CPU_LOADS, warp_version):
        return f"CPU run: a parallel CPU preload is safe on Warp {warp_version} but has no measured CPU gain"
    return f"CPU run: concurrent CPU loads are unsafe on Warp {warp_version or '?'} (see concurrent CPU loads)"


def _ceiling_text(once: dict) -> str:
    """The preload ceiling (sum / max of module times), reported even where preloading does not apply."""
    if len(once) < 2:
        return ""
    total = sum(b.module_ms for b in once.values())
    largest = max(once.values(), key=lambda b: b.module_ms)
    ceiling = total / largest.module_ms if largest.module_ms else 1.0
    return f"; ceiling would be {ceiling:.2f}x (slowest {largest.module}, {ms(largest.module_ms)} of {ms(total)})"
