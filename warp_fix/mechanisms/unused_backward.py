"""CS-10: adjoint code generated for modules no tape ever differentiates."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from codemods.specs import CallSiteArgumentArgs, ConfigAtEntryArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._attribution import (
    LIBRARY,
    Location,
    ModuleSource,
    NoTarget,
    Provenance,
    module_options_target,
    module_source,
    option_provenance,
)
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    entry_file,
    entry_placement,
    fired,
    in_repo,
    module_names,
    ruled_out,
    runtime,
    static,
)
from warp_fix.model import ADVISORY, CONSENT, FIRED, RULED_OUT, SAFE, Evidence, Finding, Fix, NotProposed, Proposal
from warp_fix.report import ModuleBuild, OptionSource, Site
from warp_fix.scan.differentiation import Differentiation, differentiated_kernels
from warp_fix.scan.index import (
    EntryPoint,
    FunctionCalls,
    ImportSite,
    LaunchSite,
    OptionParameter,
    TapeBlock,
    TapeUse,
    Value,
)
from warp_fix.wording import counted, noun


@dataclass(frozen=True)
class UnusedAdjoints:
    """The modules that generate adjoint code nothing differentiates, and what decides each one's option."""

    modules: list[str]
    differentiated: list[str]  # modules a tape or adjoint launch of the run used: backward kept
    differentiated_elsewhere: dict[str, str]  # module -> the tape elsewhere in the repository that reaches it
    gradient_free: dict[str, str]  # module -> the unresolved tape that may reach it (its kernels carry no gradient)
    off_per_kernel: list[str]  # modules whose kernels already turn it off
    provenance: dict[str, Provenance]  # module -> where its enable_backward came from
    repo_uses_tape: bool
    # module -> its kernels chosen at run time (a dispatch, a registry) and the build's cost: plugin code, untouched
    optional: dict[str, str] = field(default_factory=dict)
    # Warp's own modules (warp.optim.adam) compiling adjoints nothing uses, in a run that differentiates: advice only
    warp_own: list[str] = field(default_factory=list)
    # module -> a tape elsewhere whose calls the scan cannot follow and that can run the module's code: no resolved
    # tape reaches it, but its backward cannot be turned off in the module itself either
    may_be_differentiated: dict[str, str] = field(default_factory=dict)


class UnusedBackward(Mechanism[UnusedAdjoints]):
    SLUG = "unused-backward"
    CS = "CS-10"
    TITLE = "backward (adjoint) code compiled but never used"
    SAFETY = (SAFE, CONSENT, ADVISORY)
    CODEMODS = ("module_options", "call_site_argument", "config_at_entry")

    def diagnose(self, inputs: Inputs) -> Finding[UnusedAdjoints]:
        trace = inputs.report.trace
        # Runtime evidence first: a module a tape recorded or whose adjoint ran, from wherever it was launched.
        differentiated = {launch.module for launch in trace.launches if launch.adjoint}
        differentiated |= {use.module for use in trace.gradient_uses}
        tape_files = {inputs.repo_file(t.site.file) for t in trace.tapes if t.site}
        launched_from: dict[str, set[str | None]] = {}
        for launch in trace.launches:
            if launch.site and _a_tape_of_its_file_may_record(launch.site, inputs):
                launched_from.setdefault(launch.module, set()).add(inputs.repo_file(launch.site.file))
        # the tapes this run executed answer for themselves: their gradient uses above, not a walk by name
        answered = {(inputs.repo_file(t.site.file), t.site.function.split(".")[-1]) for t in trace.tapes if t.site}
        anywhere = differentiated_kernels(inputs.index, answered)
        unused, kept, off_per_kernel, elsewhere, gradient_free, optional, maybe = [], [], [], {}, {}, {}, {}
        beside_tape: dict[str, set[str]] = {}  # module -> the tape files it was launched from; the tape missed it
        provenance: dict[str, Provenance] = {}
        final = inputs.final_builds
        for build in final.values():
            if not _generates_adjoint(build):
                if build.options.get("enable_backward"):
                    off_per_kernel.append(build.module)
                continue
            if build.module in differentiated:
                kept.append(build.module)
                continue
            if launched_from.get(build.module, set()) & tape_files:
                # Not recorded in this run, but launched where a tape records: another path (an argument, a
                # branch) may differentiate it. Kept, and said so, not called differentiated.
                beside_tape[build.module] = {f for f in launched_from[build.module] & tape_files if f}
                continue
            plugins = _optional_kernels(build, inputs)
            if plugins:
                optional[build.module] = plugins
                continue
            unused.append(build.module)
            provenance[build.module] = option_provenance(build, "enable_backward", inputs)
            call = provenance[build.module].call_site if provenance[build.module].kind == "factory-parameter" else None
            if call is not None:
                # the fix changes this call's kernel only: other calls of the factory keep their own value
                instance = _call_differentiated_by(call, anywhere)
                if instance:
                    elsewhere[build.module] = instance
                continue
            resolved = _differentiated_by(build, anywhere)
            if resolved:
                elsewhere[build.module] = resolved
            elif unresolved := anywhere.unresolved_reaching(_code_files(build, inputs)):
                # what the walk could not follow may run this module's code; one whose kernels take no
                # differentiable argument passes no gradient even then (Warp warns at backward, gradients unchanged)
                (gradient_free if _carries_no_gradient(build) else maybe)[build.module] = unresolved.describe()
        warp_adjoints = [b.module for b in _warp_builds(inputs).values()
                         if _generates_adjoint(b) and b.module not in differentiated]
        warp_own = [
            module for module in warp_adjoints if not launched_from.get(module, set()) & tape_files
        ] if trace.tapes or differentiated else []
        evidence = [runtime(f"{m}: differentiated by a tape, backward kept", None) for m in sorted(set(kept))]
        evidence += [
            runtime(f"{m}: launched from {', '.join(sorted(files))}, which records a tape (not this module's "
                    "launches, in this run): backward kept", None)
            for m, files in sorted(beside_tape.items())
        ]
        tapes = [t for t in inputs.index.tapes if inputs.scope.in_project(t)]
        evidence += [static("wp.Tape used here", t.file, t.line) for t in tapes]
        evidence += [runtime(f"{m}: backward already off per kernel (no adjoint code)", None) for m in off_per_kernel]
        evidence += [
            runtime(f"{m}: holds optional {noun(len(k), 'kernel')} {', '.join(k)}: plugin code, left as it is "
                    f"({final[m].module_ms:.0f} ms measured)", None)
            for m, k in optional.items()
        ]
        evidence += [runtime(f"{m}: Warp's own module, backward generated, no adjoint launch or tape in this run", None)
                     for m in warp_own]
        if not unused and not warp_own:
            scope = " of the application" if warp_adjoints else ""
            parts = [f"already off per kernel: no kernel of {module_names(off_per_kernel, inputs)} generates adjoint "
                     "code"] if off_per_kernel else []
            if kept:
                taped = sorted(set(kept))
                parts.append(
                    f"a tape or adjoint launch of this run differentiates the other {counted(len(taped), 'module')} "
                    "with backward on" if parts else
                    f"a tape or adjoint launch of this run differentiates {module_names(taped, inputs)}" if beside_tape
                    else f"a tape or adjoint launch of this run differentiates every module{scope} with backward on "
                    f"({counted(len(taped), 'module')})"
                )
            if beside_tape:
                files = sorted({f for fs in beside_tape.values() for f in fs})
                them = noun(len(beside_tape), "it", "them")
                parts.append(f"backward kept for {module_names(list(beside_tape), inputs)}, launched from "
                             f"{', '.join(files)}, which records a tape (the tape did not record {them} in this run; "
                             "another path may)")
            reason = "; ".join(parts) or f"no module{scope} compiles backward code"
            if warp_adjoints:  # not the application's: no fix or advice here, but not "every module" either
                reason += (f"; Warp's own {module_names(warp_adjoints, inputs)} "
                           f"{noun(len(warp_adjoints), 'does', 'do')}, left as Warp sets it")
            if optional:
                reason += f"; optional plugin modules left as they are: {_costs(optional, final)}"
            return ruled_out(self.SLUG, self.TITLE, reason, evidence=evidence)
        cost = sum(final[m].module_ms for m in unused) + sum(_warp_builds(inputs)[m].module_ms for m in warp_own)
        for module in unused:
            detail = f"{module}: backward generated, no adjoint launch or tape in this run"
            evidence.append(runtime(f"{detail}; {provenance[module].describe()}", None))
        for module, origin in gradient_free.items():
            evidence.append(runtime(f"{module}: {origin} may reach it, but no argument of its kernels is "
                                    "differentiable", None))
        for module, origin in maybe.items():
            evidence.append(Evidence("static", f"{module}: no tape the scan follows reaches it, but {origin}, and "
                                     "they may run its code"))
        count = len(unused) + len(warp_own)
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(count, 'module')} {noun(count, 'compiles', 'compile')} backward code nobody uses"
            + (f" ({module_names(warp_own, inputs)}: Warp's own)" if warp_own else ""),
            evidence=evidence,
            cost_ms=cost,
            facts=UnusedAdjoints(
                modules=unused,
                differentiated=sorted(set(kept) | set(beside_tape)),
                differentiated_elsewhere=elsewhere,
                gradient_free=gradient_free,
                off_per_kernel=off_per_kernel,
                provenance=provenance,
                repo_uses_tape=any(inputs.scope.in_project(t) for t in inputs.index.tapes) or bool(tape_files - {None}),
                optional={m: f"{', '.join(k)}; {final[m].module_ms:.0f} ms measured" for m, k in optional.items()},
                warp_own=warp_own,
                may_be_differentiated=maybe,
            ),
        )

    def propose(self, finding: Finding[UnusedAdjoints], inputs: Inputs) -> Iterator[Proposal]:
        """Per module at the place that decides its option (also for a module whose kernels carry no gradient and
        that only a tape the scan cannot follow may reach); process-wide at the entry point (consent) when a
        library owns the module or other code of the repository differentiates it."""
        facts = finding.facts
        for module, plugins in facts.optional.items():
            yield NotProposed(
                finding.slug, f"{module} holds optional kernels chosen at run time ({plugins}): plugin code is left "
                "as it is, its options included",
            )
        process_wide, library, seen = [], [], set()
        for module in facts.modules:
            build = inputs.final_builds[module]
            source = module_source(build, inputs) or _source_from_index(build, inputs)
            if source.kind == LIBRARY:
                library.append(module)
                continue
            if module in facts.differentiated_elsewhere:
                process_wide.append(module)
                continue
            if module in facts.may_be_differentiated:
                yield NotProposed(
                    finding.slug, f"{module}: backward stays on in the module itself: no tape the scan follows reaches "
                    f"it, but {facts.may_be_differentiated[module]}, and they can run its code (a gradient through it "
                    "would silently be wrong without its adjoint); the measured command alone can go without it",
                )
                process_wide.append(module)
                continue
            provenance = facts.provenance[module]
            unresolved_tape = facts.gradient_free.get(module)
            links = bool(build.lto_builds)
            proposals = [_per_module_fix(finding, module, source, provenance, inputs, unresolved_tape, links)]
            # a caller's value for the factory's module_options is the module option: changed at the call only
            passed_as_module_option = provenance.kind == "factory-parameter" and (
                build.option_source("enable_backward").kind == "module_options"
            )
            if links and provenance.kind in ("factory-parameter", "decorator") and not passed_as_module_option:
                # a tile module links adjoint GEMMs until its module option is off, whatever its kernels say
                module_level = Provenance("enable_backward", build.option_source("enable_backward").kind)
                proposals.append(_per_module_fix(finding, module, source, module_level, inputs, unresolved_tape,
                                                 links))
            for proposal in proposals:
                key = repr(proposal.places) if isinstance(proposal, Fix) else proposal.reason
                if key not in seen:
                    seen.add(key)
                    yield proposal
        if process_wide or library or facts.warp_own:
            yield from self._process_wide(finding, inputs, process_wide, library)

    def _process_wide(
        self, finding: Finding[UnusedAdjoints], inputs: Inputs, repo_modules: list[str], library: list[str]
    ) -> Iterator[Proposal]:
        """One `wp.config.enable_backward = False` at the measured entry point, for modules that cannot be
        changed themselves: a library's, or one another entry point of the repository differentiates."""
        report, index, facts = inputs.report, inputs.index, finding.facts
        why = "; ".join(
            f"{m} is differentiated by {facts.differentiated_elsewhere[m]}" if m in facts.differentiated_elsewhere
            else f"{m} may be differentiated by {facts.may_be_differentiated[m]}" for m in repo_modules
        )
        if facts.differentiated or report.trace.tapes or facts.warp_own:  # warp_own: only where the run differentiates
            if repo_modules:
                yield NotProposed(finding.slug, f"{why}, and the measured command differentiates other modules "
                                  "itself: backward cannot be turned off process-wide, nor per module")
            if library or facts.warp_own:
                yield _library_advice(finding, library + facts.warp_own, inputs)
            return
        if library and not repo_modules and facts.repo_uses_tape:
            yield _library_advice(finding, library, inputs)
            return
        entry = entry_file(inputs)
        if entry is None:
            yield NotProposed(finding.slug, "modules compile unused backward code, but no entry point was found")
            return
        if differentiated_kernels(index).reaches(entry):
            yield NotProposed(finding.slug, f"{why or 'a tape is in use'}; the entry point {entry} itself can run "
                              "code under a tape, so backward cannot be turned off there")
            return
        placement = entry_placement(inputs, entry, repo_modules + library)
        if placement.created_before:
            yield NotProposed(finding.slug, f"{', '.join(placement.created_before)} compile unused backward code, but "
                              f"{noun(len(placement.created_before), 'it was', 'they were')} {placement.unreachable()}")
        modules = placement.reached
        if not modules:
            return
        args = placement.args(entry, "enable_backward", False)
        reason = (f"{why}: turning backward off in the module itself would break that code, so it is turned off "
                  "only in the measured command's process. " if repo_modules else "")
        them, their = noun(len(modules), "it", "them"), noun(len(modules), "its", "their")
        where = (
            f"at the entry point {entry}, above {placement.creator()}, the statement that created {them} in the run, "
            f"stops generating and compiling {their} adjoint code"
            if placement.statement else
            f"right after the entry point's `import warp` ({entry}) stops generating and compiling adjoint code in "
            f"every module created after that line, which the measurement checks for {them}"
        )
        yield Fix(
            id="", slug=finding.slug, title="Turn off backward code nobody uses, process-wide",
            description=f"{reason}No tape or adjoint launch of the measured command touches "
            f"{module_names(modules, inputs)}; wp.config.enable_backward = False {where}. Process-wide, hence "
            "consent.",
            safety=CONSENT, codemod="config_at_entry", places=(args,), files=[entry],
            expected=f"less generated source and native compile time in {counted(len(modules), 'module')} "
            "(untested estimate)",
            allow_options=["enable_backward"], targets=list(modules),
        )

    EXAMPLES = (
        Example(
            "a module of the repository compiles backward code; nothing differentiates it",
            case.run(
                builds=[case.build("sim")], launches=[case.launch("step", "sim")], source=case.index(files=["sim.py"])
            ),
            FIRED,
            fixes=(("module_options", SAFE),),
        ),
        Example(
            "an installed library's module compiles unused backward code: set it process-wide at the entry point",
            case.run(
                builds=[case.build("fluidlib.ops")],
                source=case.index(
                    files=["app/__main__.py"],
                    library_files=["fluidlib/ops.py"],
                    entry_points=[EntryPoint(kind="main_module", file="app/__main__.py")],
                ),
            ),
            FIRED,
            fixes=(("config_at_entry", CONSENT),),
        ),
        Example(
            "array arithmetic (`a / b`) made a `wp.map` kernel, compiled from a string: no file of the project to "
            "edit, so process-wide",
            case.run(
                builds=[case.sourced(case.build("map_div"), case.kernel_source("map_div", "<string>", 2))],
                source=case.index(
                    files=["app/__main__.py"], entry_points=[EntryPoint(kind="main_module", file="app/__main__.py")]
                ),
            ),
            FIRED,
            fixes=(("config_at_entry", CONSENT),),
        ),
        Example(
            "the entry point reaches the library through the project's own module: the setting goes above the "
            "statement the run shows creating it",
            case.run(
                builds=[case.build("fluidlib.ops", created_by=[
                    case.frame("/venv/fluidlib/ops.py", 12, "@wp.kernel"),
                    case.frame("app/cli.py", 3, "from fluidlib import ops"),
                    case.frame("app/__main__.py", 5, "from app.cli import main"),
                ])],
                source=case.index(
                    files=["app/__main__.py", "app/cli.py"],
                    library_files=["fluidlib/ops.py"],
                    entry_points=[EntryPoint(kind="main_module", file="app/__main__.py")],
                ),
            ),
            FIRED,
            fixes=(("config_at_entry", CONSENT),),
            places=(
                (ConfigAtEntryArgs(file="app/__main__.py", name="enable_backward", value=False, before_line=5,
                                   before_statement="from app.cli import main"),),
            ),
        ),
        Example(
            "a setup call of the entry point imports the library inside: the setting goes above the call",
            case.run(
                builds=[case.build("fluidlib.ops", created_by=[
                    case.frame("/venv/fluidlib/ops.py", 12, "@wp.kernel"),
                    case.frame("app/setup.py", 9, "import fluidlib.ops", function="configure"),
                    case.frame("app/__main__.py", 7, "configure(sys.argv[1:])"),
                ])],
                source=case.index(
                    files=["app/__main__.py", "app/setup.py"],
                    library_files=["fluidlib/ops.py"],
                    entry_points=[EntryPoint(kind="main_module", file="app/__main__.py")],
                ),
            ),
            FIRED,
            fixes=(("config_at_entry", CONSENT),),
            places=(
                (ConfigAtEntryArgs(file="app/__main__.py", name="enable_backward", value=False, before_line=7,
                                   before_statement="configure(sys.argv[1:])"),),
            ),
        ),
        Example(
            "the library's module is unused by tapes, but the repository uses a tape elsewhere: advice only",
            case.run(
                builds=[case.build("fluidlib.ops")],
                source=case.index(
                    files=["app/__main__.py"],
                    library_files=["fluidlib/ops.py"],
                    tapes=[TapeUse(file="app/train.py", line=12, kind="tape")],
                ),
            ),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example(
            "the module is launched from the file that records a tape, which did not record it: kept all the same",
            case.run(
                builds=[case.build("sim")],
                launches=[case.launch("step", "sim", site=case.site("train.py", 14, "train"))],
                tapes=[case.tape(case.site("train.py", 12, "train"))],
            ),
            RULED_OUT,
        ),
        Example(
            "Warp's own optimizer stepped at the script's top level, its tape in a method: advice, and the script's "
            "differentiated module keeps its backward",
            case.run(
                builds=[case.build("__main__"), case.build("warp.optim.adam")],
                launches=[
                    case.launch("advect", "__main__", site=case.site("train.py", 40, "Example.step")),
                    case.launch("adam_step", "warp.optim.adam", site=case.site("train.py", 90)),
                ],
                tapes=[case.tape(case.site("train.py", 60, "Example.backward"))],
                gradient_uses=[case.gradient_use("__main__", site=case.site("train.py", 40, "Example.step"))],
                source=case.index(files=["train.py"]),
            ),
            FIRED,
            fixes=((None, ADVISORY),),
            reason="warp.optim.adam: Warp's own",
        ),
        Example(
            "a launch at the script's top level inside its top-level `with tape:`, not recorded in this run: kept",
            case.run(
                builds=[case.build("sim")],
                launches=[case.launch("step", "sim", site=case.site("train.py", 12))],
                tapes=[case.tape(case.site("train.py", 10))],
                source=case.index(
                    files=["train.py", "sim.py"],
                    tapes=[TapeUse(file="train.py", line=10, kind="tape", blocks=[TapeBlock(11, 14)])],
                ),
            ),
            RULED_OUT,
        ),
        Example(
            "a tape in train.py records a kernel a helper file launches: the run itself says it is differentiated",
            case.run(
                builds=[case.build("sim")],
                launches=[case.launch("step", "sim", site=case.site("helpers.py", 8, "forward"))],
                tapes=[case.tape(case.site("train.py", 12, "train"))],
                gradient_uses=[case.gradient_use("sim", site=case.site("helpers.py", 8, "forward"))],
                source=case.index(files=["sim.py", "helpers.py", "train.py"]),
            ),
            RULED_OUT,
        ),
        Example(
            "an installed library's layer whose adjoint the run launched: no fix and no advice turns its backward off",
            case.run(
                builds=[case.build("netlib.layers")],
                gradient_uses=[case.gradient_use("netlib.layers", kind="adjoint")],
                source=case.index(files=["app/__main__.py"], library_files=["netlib/layers.py"]),
            ),
            RULED_OUT,
        ),
        Example(
            "a module holding a kernel a dispatch makes only for the kind asked for: plugin code, left as it is",
            case.run(
                builds=[case.sourced(case.build("fx"), case.kernel_source("toon", "fx.py", 12))],
                source=case.index(
                    files=["fx.py"],
                    kernels=[case.kernel("toon", "fx.py", 12, enclosing_functions=["make"], chosen_by=["kind"])],
                ),
            ),
            RULED_OUT,
        ),
        Example(
            "a kernel made only in one mode of the module's own class (`if self.sync_mode:`) is its own code",
            case.run(
                builds=[
                    case.sourced(case.build("harvest.buffers"), case.kernel_source("advance", "harvest/buffers.py", 20))
                ],
                source=case.index(
                    files=["harvest/buffers.py"],
                    kernels=[case.kernel("advance", "harvest/buffers.py", 20, enclosing_functions=["record"],
                                         chosen_by=["self"])],
                ),
            ),
            FIRED,
            fixes=(("module_options", SAFE),),
        ),
        Example(
            "a script run as `python wave.py`: its module is __main__, attributed to the script by its kernels",
            case.run(
                builds=[case.sourced(case.build("__main__"), case.kernel_source("wave_solve", "wave.py", 49))],
                source=case.index(files=["wave.py"]),
                command=("python", "wave.py"),
            ),
            FIRED,
            fixes=(("module_options", SAFE),),
        ),
        Example(
            "a string-named module spanning two files: its option is set by name",
            case.run(
                builds=[case.sourced(
                    case.build("solver.prepare"),
                    case.kernel_source("predict", "cloth/prepare.py", 6, kind="named"),
                    case.kernel_source("project", "cloth/constraints.py", 6, kind="named"),
                )],
                source=case.index(files=["cloth/prepare.py", "cloth/constraints.py"]),
            ),
            FIRED,
            fixes=(("module_options", SAFE),),
        ),
        Example(
            "a factory passes enable_backward=True from its caller: the call site changes, not the module",
            case.run(
                builds=[case.sourced(case.build("smoothing.factory"), case.kernel_source(
                    "smooth", "smoothing/factory.py", 10, options={"enable_backward": True},
                    created=case.site("smoothing/factory.py", 10, "make_filter", ["smoothing/filters.py:5:<module>"]),
                ))],
                source=case.index(
                    files=["smoothing/factory.py", "smoothing/filters.py"],
                    kernels=[case.kernel(
                        "smooth", "smoothing/factory.py", 11, enclosing_functions=["make_filter"],
                        at_module_scope=False, enable_backward=Value("enable_backward", False),
                        option_parameters=[OptionParameter("enable_backward", "enable_backward")],
                    )],
                ),
            ),
            FIRED,
            fixes=(("call_site_argument", SAFE),),
        ),
        Example(
            "a factory's module_options take enable_backward from its caller (ripple): that call site changes, and a "
            "tape over another call of the factory does not stop it",
            case.run(
                builds=[case.sourced(
                    case.build("blur_73d534cd", options={"enable_backward": True}, option_sources={
                        "enable_backward": OptionSource("module_options", case.site(
                            "ripple/stencils.py", 17, "make_blur", ["ripple/display.py:7:<module>"])),
                    }),
                    case.kernel_source(
                        "blur", "ripple/stencils.py", 9, kind="unique",
                        created=case.site("ripple/stencils.py", 17, "make_blur", ["ripple/display.py:7:<module>"]),
                    ),
                )],
                source=case.index(
                    files=["ripple/stencils.py", "ripple/display.py", "tests/test_app.py"],
                    kernels=[case.kernel(
                        "blur", "ripple/stencils.py", 9, decorator_line=17, enclosing_functions=["make_blur"],
                        at_module_scope=False, module_kind="unique", made_by="call",
                        option_parameters=[OptionParameter("enable_backward", "enable_backward")],
                    )],
                    tapes=[TapeUse(file="tests/test_app.py", line=17, function="test_blur", kind="tape")],
                    launches=[LaunchSite(file="tests/test_app.py", line=18, function="test_blur", kind="launch",
                                         kernel="blur")],
                ),
            ),
            FIRED,
            fixes=(("call_site_argument", SAFE),),
        ),
        Example(
            "every kernel declares enable_backward=False: already off per kernel",
            case.run(builds=[case.sourced(
                case.build("imgops.color"),
                case.kernel_source("to_gray", "imgops/color.py", options={"enable_backward": False}, adjoint=False),
            )]),
            RULED_OUT,
        ),
        Example(
            "a tile module whose kernels say enable_backward=False still links adjoint GEMMs: the module option",
            case.run(
                builds=[case.sourced(
                    case.build("mlp.encoder", device="cuda:0", lto_kinds=["dot"]),
                    case.kernel_source("encode", "mlp/encoder.py", options={"enable_backward": False}, adjoint=False),
                )],
                source=case.index(files=["mlp/encoder.py"]),
            ),
            FIRED,
            fixes=(("module_options", SAFE),),
        ),
        Example(
            "a tile module whose factory caller asks for backward: the call site, and the module option too",
            case.run(
                builds=[case.sourced(case.build("mlp.layers", device="cuda:0", lto_kinds=["dot"]), case.kernel_source(
                    "dense", "mlp/layers.py", 10, options={"enable_backward": True},
                    created=case.site("mlp/layers.py", 10, "make_dense", ["mlp/model.py:7:<module>"]),
                ))],
                source=case.index(
                    files=["mlp/layers.py", "mlp/model.py"],
                    kernels=[case.kernel(
                        "dense", "mlp/layers.py", 11, enclosing_functions=["make_dense"],
                        at_module_scope=False, enable_backward=Value("enable_backward", False),
                        option_parameters=[OptionParameter("enable_backward", "enable_backward")],
                    )],
                ),
            ),
            FIRED,
            fixes=(("call_site_argument", SAFE), ("module_options", SAFE)),
        ),
        Example(
            "forward-only in the measured command, differentiated by a script elsewhere: process-wide at the entry",
            case.run(
                builds=[case.sourced(case.build("beams.model"), case.kernel_source("deflection", "beams/model.py"))],
                source=case.index(
                    files=["beams/__main__.py", "beams/model.py", "scripts/calibrate.py"],
                    entry_points=[EntryPoint(kind="main_module", file="beams/__main__.py")],
                    tapes=[TapeUse(file="scripts/calibrate.py", line=30, function="calibrate", kind="tape")],
                    calls=[FunctionCalls(file="scripts/calibrate.py", line=23, function="calibrate",
                                         callees=["Tape", "predict"]),
                           FunctionCalls(file="beams/model.py", line=22, function="predict", callees=["launch"])],
                    launches=[LaunchSite(file="beams/model.py", line=25, function="predict", kind="launch",
                                         kernel="deflection")],
                    kernels=[case.kernel("deflection", "beams/model.py")],
                ),
            ),
            FIRED,
            fixes=(("config_at_entry", CONSENT),),
        ),
        Example(
            "a wrapper runs `function(*args)` under a tape: the integer hashing module is safe per module, the float "
            "one only process-wide",
            case.run(
                builds=[
                    case.sourced(case.build("sph.hashing"), case.kernel_source(
                        "hash_cells", "sph/hashing.py", differentiable_arguments=False,
                    )),
                    case.sourced(case.build("sph.density"), case.kernel_source("density", "sph/density.py")),
                ],
                source=case.index(
                    files=["quickstart.py", "sph/hashing.py", "sph/density.py", "sph/autograd.py"],
                    entry_points=[EntryPoint(kind="main_guard", file="quickstart.py")],
                    tapes=[TapeUse(file="sph/autograd.py", line=12, function="Differentiable.forward", kind="tape")],
                    calls=[FunctionCalls(file="sph/autograd.py", line=9, function="Differentiable.forward",
                                         callees=["Tape"], dynamic=["13: function(*warp_args)"],
                                         parameters=["function", "self", "warp_args"]),
                           FunctionCalls(file="sph/density.py", line=20, function="density", callees=["forward"])],
                    imports=[ImportSite(file="sph/density.py", line=3, module="sph.autograd", kind="project")],
                    kernels=[case.kernel("hash_cells", "sph/hashing.py"), case.kernel("density", "sph/density.py")],
                ),
                command=("python", "quickstart.py"),
            ),
            FIRED,
            fixes=(("module_options", SAFE), ("config_at_entry", CONSENT)),
        ),
        Example(
            "a script's tape calls `getattr(plate, method)()`, which the scan cannot follow: the renderer it never "
            "imports keeps its safe fix; the solver it imports only gets the process-wide one, and the plan says why",
            case.run(
                builds=[
                    case.sourced(case.build("heat.solver"), case.kernel_source("diffuse", "heat/solver.py")),
                    case.sourced(case.build("heat.render"), case.kernel_source("shade", "heat/render.py")),
                ],
                source=case.index(
                    files=["heat/__main__.py", "heat/solver.py", "heat/render.py", "scripts/probe.py"],
                    entry_points=[EntryPoint(kind="main_module", file="heat/__main__.py")],
                    tapes=[TapeUse(file="scripts/probe.py", line=9, function="probe", kind="tape")],
                    calls=[FunctionCalls(file="scripts/probe.py", line=6, function="probe", callees=["Tape"],
                                         dynamic=["11: getattr(plate, method)(...)"])],
                    imports=[ImportSite(file="scripts/probe.py", line=3, module="heat.solver", kind="project")],
                    kernels=[case.kernel("diffuse", "heat/solver.py"), case.kernel("shade", "heat/render.py")],
                ),
            ),
            FIRED,
            fixes=(("module_options", SAFE), ("config_at_entry", CONSENT)),
            declined="heat.solver: backward stays on in the module itself",
        ),
        Example(
            "a tape the scan follows launches the integer hashing kernel: no per-module fix, whatever its arguments",
            case.run(
                builds=[case.sourced(case.build("grid.hashing"), case.kernel_source(
                    "hash_cells", "grid/hashing.py", differentiable_arguments=False,
                ))],
                source=case.index(
                    files=["grid/__main__.py", "grid/hashing.py", "scripts/check.py"],
                    entry_points=[EntryPoint(kind="main_module", file="grid/__main__.py")],
                    tapes=[TapeUse(file="scripts/check.py", line=8, function="check", kind="tape")],
                    calls=[FunctionCalls(file="scripts/check.py", line=5, function="check",
                                         callees=["Tape", "launch"])],
                    launches=[LaunchSite(file="scripts/check.py", line=9, function="check", kind="launch",
                                         kernel="hash_cells")],
                    kernels=[case.kernel("hash_cells", "grid/hashing.py")],
                ),
            ),
            FIRED,
            fixes=(("config_at_entry", CONSENT),),
        ),
        Example(
            "the only module with backward code is differentiated by an adjoint launch",
            case.run(builds=[case.build("sim")], launches=[case.launch("step", "sim", adjoint=True)]),
            RULED_OUT,
        ),
    )


def _per_module_fix(
    finding: Finding[UnusedAdjoints],
    module: str,
    source: ModuleSource,
    provenance: Provenance,
    inputs: Inputs,
    unresolved_tape: str | None = None,
    links_mathdx: bool = False,
) -> Proposal:
    """The edit at the place that decides the module's enable_backward, by the module's shape; `unresolved_tape`:
    a tape the scan cannot follow may reach the module, whose kernels take no differentiable argument;
    `links_mathdx`: its builds link MathDx code, where only the module option drops the adjoint GEMMs."""
    why = f"No tape or adjoint launch touches {module} ({provenance.describe()})"
    if unresolved_tape:
        why = (f"No tape or adjoint launch of the measured command touches {module} ({provenance.describe()}), and "
               f"although {unresolved_tape} may reach it, no argument of its kernels is differentiable (integer and "
               "bool values and arrays only), so no gradient can pass through it: if a tape ever records it, Warp "
               "logs a warning at backward and the gradients are unchanged")
    expected = f"less generated source and native compile time in {module} (untested estimate)"
    if provenance.kind == "factory-parameter":
        call = provenance.call_site
        if call is None or not in_repo(inputs, call.file):
            return NotProposed(finding.slug, f"{why}: the factory call that passes it is not in the repository")
        return Fix(
            id="", slug=finding.slug, title=f"Pass {provenance.parameter}=False to {provenance.callee}() at {call}",
            description=f"{why}; the value is chosen where {provenance.callee}() is called, so it is changed there "
            "and the factory's default stays for its other callers.",
            safety=SAFE, codemod="call_site_argument", files=[call.file], expected=expected,
            places=(CallSiteArgumentArgs(file=call.file, line=call.line, callee=provenance.callee,
                                         keyword=provenance.parameter or provenance.key, value=False),),
            allow_options=["enable_backward"],
        )
    if provenance.kind == "decorator":
        return NotProposed(finding.slug, f"{why}: its kernel asks for enable_backward=True itself at "
                           f"{provenance.site}; drop that if nothing differentiates it")
    target = module_options_target(module, source, inputs)
    if isinstance(target, NoTarget):
        return NotProposed(finding.slug, f"{why}: {target.reason}")
    replaces = provenance.kind in ("set_module_options", "module_options", "options.update") and provenance.site
    args = target.place({"enable_backward": False}, replace=True if replaces else None)
    if args.module is not None:
        where = f'wp.set_module_options({{"enable_backward": False}}, module="{module}")'
    elif args.kernel is not None:
        where = f'module_options={{"enable_backward": False}} on {args.kernel}'
    else:
        where = 'wp.set_module_options({"enable_backward": False}) at module scope'
    return Fix(
        id="", slug=finding.slug, title=f"Turn off backward code in {module}",
        description=f"{why}; {where} in {args.file} stops generating and compiling its adjoint code"
        + (" (the per-kernel flag would still link its adjoint GEMMs)." if links_mathdx else "."),
        safety=SAFE, codemod="module_options", places=(args,), files=[args.file], expected=expected,
        allow_options=["enable_backward"], targets=[module],
    )


def _library_advice(finding: Finding[UnusedAdjoints], library: list[str], inputs: Inputs) -> Fix:
    """Backward off is a part of a module's build, not all of it: the estimate says so (newton's geometry kernels,
    21.7 s to build, took 13.0 s without it)."""
    builds = {**_warp_builds(inputs), **inputs.final_builds}
    built_ms = sum(builds[m].module_ms for m in library)
    return Fix(
        id="", slug=finding.slug, title="Turn off backward code in library modules no tape differentiates",
        description="A tape is in use, so backward cannot be turned off process-wide. "
        f"{noun(len(library), 'This module belongs', 'These modules belong')} to a library: "
        f"{module_names(library, inputs)}; set {noun(len(library), 'its', 'their')} enable_backward option from your "
        f"code if {noun(len(library), 'it is', 'they are')} never differentiated (advisory).",
        safety=ADVISORY, codemod=None,
        expected=f"less generated source and native compile time in {counted(len(library), 'module')}: a part of their "
        f"{built_ms:,.0f} ms measured build (untested estimate)",
    )


def _warp_builds(inputs: Inputs) -> dict[str, ModuleBuild]:
    """The last build of each of Warp's own modules: their unused adjoints are worth advice where a tape rules
    out the process-wide switch."""
    return {b.module: b for b in inputs.warp_builds()}


def _a_tape_of_its_file_may_record(site: Site, inputs: Inputs) -> bool:
    """A launch from a file's top-level code runs once, as the file runs: only a top-level tape of that file
    can record it, entered around that line (or by hand, which the scan cannot bound). A launch from a
    function may run under any tape of its file (fluid_checkpoint's Adam.step at top level, its tape in a
    method: not recorded)."""
    if site.function != "<module>":
        return True
    file = inputs.repo_file(site.file)
    top_level = [t for t in inputs.index.tapes if t.file == file and t.function is None]
    return any(not t.blocks or any(block.holds(site.line) for block in t.blocks) for t in top_level)


def _generates_adjoint(build: ModuleBuild) -> bool:
    """What Warp compiled: a kernel's own enable_backward=False overrides the module option, except in a tile
    module, which still links adjoint GEMMs (MathDx) while the module option is on."""
    if build.adjoint_kernels is None or (build.lto_builds and build.options.get("enable_backward")):
        return bool(build.options.get("enable_backward"))
    return build.adjoint_kernels > 0


def _optional_kernels(build: ModuleBuild, inputs: Inputs) -> list[str]:
    """The build's kernels the scope calls optional (a plugin, a registry entry, a branch on a kind the run is
    given): their options stay as their author set them."""
    optional = inputs.scope.optional_kernels(build)
    return [f"{kernel.name} (chosen by {', '.join(kernel.chosen_by)})" for kernel, _ in optional]


def _costs(optional: dict[str, list[str]], final: dict[str, ModuleBuild]) -> str:
    return ", ".join(f"{m} ({final[m].module_ms:.0f} ms)" for m in optional)


def _differentiated_by(build: ModuleBuild, anywhere: Differentiation) -> str | None:
    """The tape or adjoint launch anywhere in the repository that the walk followed to one of the build's kernels,
    with the call it followed by name on the way, where it did (then the tape runs the kernel only if that call runs
    the function that leads to it: said as a condition, not as a fact)."""
    names = {k.function.split(".")[-1] for k in build.kernel_sources}
    names |= {key.split(".")[-1].split("__locals__")[-1] for key in build.kernels}
    reached = [n for n in sorted(names) if n in anywhere.kernels]
    exact = [n for n in reached if n not in anywhere.by_name]
    if exact:
        return anywhere.kernels[exact[0]]
    if reached:
        return f"{anywhere.kernels[reached[0]]} {anywhere.by_name[reached[0]].condition()}"
    return None


def _call_differentiated_by(call: Location, anywhere: Differentiation) -> str | None:
    """What may differentiate the kernel one factory call makes, which only code that reaches the call's file can
    hold: code of that file run under a tape, or a tape whose unfollowed calls can run that file's code. Other
    calls of the factory make other kernels, whatever a tape does with those."""
    if anywhere.reaches(call.file):
        return f"a tape that runs code of {call.file}"
    unresolved = anywhere.unresolved_reaching([call.file])
    return unresolved.describe() if unresolved else None


def _code_files(build: ModuleBuild, inputs: Inputs) -> list[str]:
    """The repository files whose code runs the build's kernels: where they are defined and launched, as the run
    and the scan see it. None known (a report without kernel sources): every file, so nothing is ruled out."""
    names = {k.function.split(".")[-1] for k in build.kernel_sources}
    launched = [launch.site for launch in inputs.report.trace.launches if launch.module == build.module]
    files = set(_files_of(build, inputs)) | {inputs.repo_file(site.file) for site in launched if site}
    files |= {launch.file for name in names for launch in inputs.index.launches_of(name)}
    files.discard(None)
    return sorted(files) if files else [f.file for f in inputs.index.files]


def _carries_no_gradient(build: ModuleBuild) -> bool:
    """Every kernel of the build, as the tracer saw it compiled, takes only integer/bool arguments (a report
    without kernel sources, or without the field, knows nothing: differentiable)."""
    return bool(build.kernel_sources) and not any(k.differentiable_arguments for k in build.kernel_sources)


def _files_of(build: ModuleBuild, inputs: Inputs) -> list[str]:
    return [f for f in (inputs.repo_file(k.file) for k in build.kernel_sources) if f]


def _source_from_index(build: ModuleBuild, inputs: Inputs) -> ModuleSource:
    """For reports without kernel sources: the file whose Python module has the build's name."""
    file = inputs.index.file_of_module(build.module)
    if file is not None and in_repo(inputs, file):
        return ModuleSource("file", [file])
    return ModuleSource(LIBRARY)
