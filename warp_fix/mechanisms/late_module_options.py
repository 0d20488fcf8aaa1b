"""CS-3: module options changed after the module's first build force a second full build."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from codemods.specs import HoistOptionsArgs, Options
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    builds_of,
    expected_effect,
    fired,
    ms,
    option_origin,
    ruled_out,
    runtime,
    static,
)
from warp_fix.model import CONSENT, FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import OptionChange, Rebuild
from warp_fix.wording import counted, noun


@dataclass(frozen=True)
class LateCall:
    """An options call of the project that ran after its module's first build."""

    module: str
    file: str | None
    line: int | None
    function: str | None  # the function of the repository it is in
    constant: bool  # every value a literal: the call can move
    non_constant_keys: list[str]
    kind: str  # set_module_options | options.update
    keys: list[str]
    origins: dict[str, str]  # option -> where the first build's value came from, for people
    differentiated: bool  # a tape or adjoint launch used the module


@dataclass(frozen=True)
class NoOpCall:
    """An options call whose target module never gets a kernel: it changes nothing."""

    module: str
    file: str | None
    line: int | None
    values: Options


@dataclass(frozen=True)
class LateOptions:
    calls: list[LateCall]
    no_ops: list[NoOpCall]


class LateModuleOptions(Mechanism[LateOptions]):
    SLUG = "late-module-options"
    CS = "CS-3"
    TITLE = "options set after the module's first build"
    SAFETY = (SAFE, CONSENT)
    CODEMODS = ("hoist_options",)

    def diagnose(self, inputs: Inputs) -> Finding[LateOptions]:
        own, library = [], []
        for change in inputs.report.trace.option_changes:
            if change.kind != "config":
                (library if _not_the_projects(change, inputs) else own).append(change)
        targets_with_kernels = _modules_with_kernels(inputs)
        bare = [c for c in own if c.target not in targets_with_kernels]
        inherited = {id(c): _inheriting_modules(c, inputs) for c in bare}
        no_ops = _once_per_site([c for c in bare if not inherited[id(c)]])
        late = [c for c in own if c.target_loaded and c.target in targets_with_kernels]
        library_only = {c.target for c in library} - {c.target for c in own}  # a package's own modules
        rebuilds = [
            r for r in inputs.rebuilds_because("option") if not _only_config(r) and r.module not in library_only
        ]
        evidence = [runtime(f"{c.target}: {c.values} after its first build", c.site, inputs) for c in late]
        evidence += [
            runtime(f"{c.target}: {c.values} targets a module that never gets kernels (no effect)", c.site, inputs)
            for c in no_ops
        ]
        evidence += [
            runtime(
                f"{c.target}: {c.values} reaches {counted(len(inherited[id(c)]), 'module')} generated from it "
                f"later, which copied its options ({', '.join(inherited[id(c)])})",
                c.site, inputs,
            )
            for c in _once_per_site([c for c in bare if inherited[id(c)]])
        ]
        evidence += [
            runtime(f"{c.target}: {c.values} set by an installed package, not by the project", c.caller, inputs)
            for c in _once_per_site(library)
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
                LateCall(
                    module=change.target,
                    file=file,
                    line=change.site.line if change.site else None,
                    function=call.function if call else None,
                    constant=bool(call and call.is_constant),
                    non_constant_keys=list(call.non_constant_keys) if call else [],
                    kind=change.kind,
                    keys=sorted(change.values),
                    origins={key: option_origin(inputs, change.target, key) for key in sorted(change.values)},
                    differentiated=any(
                        launch.adjoint and launch.module == change.target for launch in inputs.report.trace.launches
                    ),
                )
            )
        noops = [_no_op(change, inputs) for change in no_ops]
        if not rebuilds and not late:
            reason = "no module's options changed after its first build"
            if no_ops:
                where = ", ".join(f"{n.file or '?'}:{n.line}" for n in noops)
                calls = noun(len(noops), "the options call at", "options calls at")
                target = noun(len(noops), "targets", "target")
                reason += f"; {calls} {where} {target} a module with no kernels (a no-op)"
            return ruled_out(self.SLUG, self.TITLE, reason, evidence=evidence, facts=LateOptions([], noops))
        cost = sum(r.module_ms for r in rebuilds)
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(len(rebuilds), 'extra build')} after options changed on loaded modules ({ms(cost)})",
            evidence=evidence,
            cost_ms=cost,
            extra_builds=len(rebuilds),
            all_builds=builds_of(inputs, {r.module for r in rebuilds}),
            facts=LateOptions(calls, noops),
        )

    def propose(self, finding: Finding[LateOptions], inputs: Inputs) -> Iterator[Proposal]:
        for noop in finding.facts.no_ops:
            yield NotProposed(
                finding.slug,
                f"options call at {noop.file}:{noop.line} targets module {noop.module}, which "
                "holds no kernels: a no-op. Making it effective would change the kernels' numerics, so it is left "
                "for you to decide.",
            )
        if not finding.facts.calls:
            yield NotProposed(
                finding.slug,
                "the options change behind the rebuild was not traced to an options call of the project "
                "(why-rebuilt names what is known)",
            )
        seen = set()
        for call in finding.facts.calls:
            where = f"{call.file}:{call.line}"
            if not call.file or not call.function:
                yield NotProposed(
                    finding.slug, f"late options call at {where} is not inside a function of the repo"
                )
                continue
            if not call.constant:
                keys = ", ".join(call.non_constant_keys) or "its options"
                depend = noun(len(call.non_constant_keys), "depends", "depend")
                yield NotProposed(
                    finding.slug,
                    f"options call at {where}: {keys} {depend} on runtime values, so it "
                    "cannot move before the first build; give each option set a module of its own",
                )
                continue
            if (call.file, call.function) in seen:
                continue
            seen.add((call.file, call.function))
            numerics = _numerics_keys(call)
            consent = (
                f" Launches before the call ran with the old {', '.join(numerics)}; after the move every launch uses "
                "the new value, which changes numerics: consent needed." if numerics else ""
            )
            origins = "; ".join(f"{key} from {origin}" for key, origin in call.origins.items())
            yield Fix(
                id="", slug=finding.slug, title=f"Set {call.module} options before its first build",
                description=f"Moves the constant options call out of {call.function}() to module scope, so module "
                f"{call.module} is built once with its final options instead of twice"
                + (f" (its first build took {origins})." if origins else ".") + consent,
                safety=CONSENT if numerics else SAFE, codemod="hoist_options",
                places=(HoistOptionsArgs(file=call.file, function=call.function, line=call.line),),
                files=[call.file], lines=[where], expected=expected_effect(finding),
                expected_builds_removed=finding.extra_builds, expected_ms=finding.cost_ms,
                allow_options=numerics or (["enable_backward"] if "enable_backward" in call.keys else []),
            )

    EXAMPLES = (
        Example(
            "enable_backward turned off in setup() after the first launch; no tape uses the module",
            case.run(
                builds=[case.build("sim"), case.build("sim", options={"enable_backward": False})],
                rebuilds=[case.rebuild("sim", "option", "option enable_backward: True -> False")],
                option_changes=[
                    case.option_change("sim", {"enable_backward": False}, site=case.site("sim.py", 20, "setup"))
                ],
                source=case.index(
                    files=["sim.py"],
                    option_calls=[case.option_call("sim.py", 20, {"enable_backward": False}, function="setup")],
                ),
            ),
            FIRED,
            fixes=(("hoist_options", SAFE),),
            places=((HoistOptionsArgs(file="sim.py", function="setup", line=20),),),
        ),
        Example(
            "fast_math turned on after launches that ran without it: moving it changes their numerics",
            case.run(
                builds=[case.build("sim"), case.build("sim", options={"fast_math": True})],
                rebuilds=[case.rebuild("sim", "option", "option fast_math: False -> True")],
                option_changes=[case.option_change("sim", {"fast_math": True}, site=case.site("sim.py", 20, "setup"))],
                source=case.index(
                    files=["sim.py"],
                    option_calls=[case.option_call("sim.py", 20, {"fast_math": True}, function="setup")],
                ),
            ),
            FIRED,
            fixes=(("hoist_options", CONSENT),),
        ),
        Example(
            "the late option's value is computed at run time, so the call cannot move",
            case.run(
                builds=[case.build("sim"), case.build("sim")],
                rebuilds=[case.rebuild("sim", "option", "option max_unroll: 16 -> 4")],
                option_changes=[case.option_change("sim", {"max_unroll": 4}, site=case.site("sim.py", 20, "setup"))],
                source=case.index(
                    files=["sim.py"],
                    option_calls=[
                        case.option_call("sim.py", 20, {}, function="setup", runtime_keys=["max_unroll"])
                    ],
                ),
            ),
            FIRED,
            fixes=(),
            declined="max_unroll depends on runtime values",
        ),
        Example(
            "a module rebuilt for an option change that no traced call of the project made",
            case.run(
                builds=[case.build("sim"), case.build("sim", options={"max_unroll": 4})],
                rebuilds=[case.rebuild("sim", "option", "option max_unroll: 16 -> 4")],
            ),
            FIRED,
            fixes=(),
            declined="not traced to an options call",
        ),
        Example(
            "an options call on a module that never gets kernels (all its kernels are unique) is a no-op",
            case.run(
                builds=[case.build("sum_kernel_f099199d")],
                option_changes=[
                    case.option_change(
                        "reducers.ops", {"enable_backward": False}, has_kernels=False,
                        site=case.site("reducers/ops.py", 28, "forward_only"),
                    )
                ],
                source=case.index(files=["reducers/ops.py"]),
            ),
            RULED_OUT,
        ),
        Example(
            "warp.fem copies the options of an integrand's module into the module it generates: not a no-op",
            case.run(
                builds=[case.build("__main__.diffusion_form_3f2a1b9c", options={"enable_backward": False}, seq=2)],
                option_changes=[
                    case.option_change(
                        "__main__", {"enable_backward": False}, loaded=False, has_kernels=False,
                        site=case.site("example_diffusion.py", 150), seq=1,
                    )
                ],
            ),
            RULED_OUT,
            fixes=(),
        ),
        Example(
            "a call at the top of a script, before its kernels exist, reaches the module built later",
            case.run(
                builds=[case.build("__main__", options={"enable_backward": False})],
                option_changes=[
                    case.option_change(
                        "__main__", {"enable_backward": False}, loaded=False, has_kernels=False,
                        site=case.site("app.py", 8),
                    )
                ],
            ),
            RULED_OUT,
            fixes=(),
        ),
        Example(
            "an installed package's own options call rebuilt its module: the package's business, not the project's",
            case.run(
                builds=[case.build("__main__"), case.build("fluidlib.ops"), case.build("fluidlib.ops")],
                rebuilds=[case.rebuild("fluidlib.ops", "option", "option enable_backward: True -> False")],
                option_changes=[
                    case.option_change(
                        "fluidlib.ops", {"enable_backward": False}, site=case.site("app.py", 6),
                        library_caller=case.site("/venv/fluidlib/ops.py", 30),
                    )
                ],
            ),
            RULED_OUT,
            fixes=(),
        ),
    )


def _modules_with_kernels(inputs: Inputs) -> set[str]:
    """Warp modules that were built or got a kernel at any time in the run.

    Whether the target had kernels is recorded when the call runs, so a call at the top of a file, before
    the file's kernels, would look like a no-op; the whole run decides instead.
    """
    trace = inputs.report.trace
    return {b.module for b in trace.builds} | {d.module for d in trace.kernel_defs}


def _not_the_projects(change: OptionChange, inputs: Inputs) -> bool:
    """Made by an installed package, or by code outside the repository however it was installed (a package on
    PYTHONPATH is no site-packages): its calls are not the project's to move or to call no-ops."""
    return not inputs.scope.made_by_project(change)


def _inheriting_modules(change: OptionChange, inputs: Inputs) -> list[str]:
    """Modules named `<target>.<name>` built after the call with its values: they inherited them.

    warp.fem generates a module per integrand, `<integrand's module>.<integrand>_<hash>`, and copies that module's
    options into it when it creates the kernel (warp/_src/fem/cache.py), so an options call on a module with no
    kernels of its own still reaches them: it is not a no-op.
    """
    prefix = change.target + "."
    return sorted({
        b.module for b in inputs.report.trace.builds
        if b.seq > change.seq and b.module.startswith(prefix)
        and all(b.options.get(key) == value for key, value in change.values.items())
    })


def _once_per_site(changes: list) -> list:
    """One change per (target, line that made it): a call in a loop or a function run twice is one call."""
    seen, unique = set(), []
    for change in changes:
        where = change.caller or change.site
        key = (change.target, where.file if where else None, where.line if where else None)
        if key not in seen:
            seen.add(key)
            unique.append(change)
    return unique


def _only_config(rebuild: Rebuild) -> bool:
    return all(reason.set_by == "config" for reason in rebuild.reasons if reason.kind == "option")


def _no_op(change: OptionChange, inputs: Inputs) -> NoOpCall:
    file = inputs.repo_file(change.site.file) if change.site else None
    return NoOpCall(change.target, file, change.site.line if change.site else None, change.values)


def _numerics_keys(call: LateCall) -> list[str]:
    """Options whose change moves results (DESIGN invariant 2); enable_backward only if a tape used the module."""
    from warp_fix.compare import NUMERICS_OPTIONS

    keys = [k for k in call.keys if k in NUMERICS_OPTIONS and k != "enable_backward"]
    if "enable_backward" in call.keys and call.differentiated:
        keys.append("enable_backward")
    return keys
