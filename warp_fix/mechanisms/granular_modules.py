"""CS-4: small modules with the same lifecycle each pay a whole module build; two or three are enough to merge."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from codemods.specs import MergeModulesArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    builds_of,
    entry_file,
    expected_effect,
    fired,
    ms,
    ruled_out,
    runtime,
    static,
)
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import KernelSource, ModuleBuild
from warp_fix.scan.index import EntryPoint, KernelDef
from warp_fix.scope import optional_reason
from warp_fix.wording import counted, noun

MIN_MODULES = 2
SMALL_KERNELS = 3  # a module of at most this many kernels is small: its per-module overhead is worth saving
_IDENTITY_FREE = {"block_dim"}


def _tiny_modules(
    *names: str,
    options_in: str | None = None,
    computed_options_in: str | None = None,
    later: str | None = None,
    alternatives: tuple[str, ...] = (),
    registry: tuple[str, ...] = (),
    taped: str | None = None,
    helpers_of: str | None = None,
    helpers_in: str = "ops/sim.py",
) -> Inputs:
    """A run that builds one module per `ops/<name>.py`, each holding one kernel `<name>`, all first launched
    from `pipeline.process`; the module `later` is first launched from `pipeline.export` instead.

    `alternatives`: one more module, `ops/edges.py`, holding these module-scope kernels, which `edge_kernel()`
    (line 40) returns from a fixed if/elif on the configured kind; `registry`: one more, `ops/filters.py`, whose
    kernels are entries of the module-scope dict `FILTERS`; `taped`: the module a tape recorded.
    `options_in` / `computed_options_in`: a file that sets its own module's options at module scope, as constants
    (`fast_math=False`) / computed from configuration (`fast_math=MODE == "fast"`). `helpers_of`: each module is
    first launched from a helper `_<name>` of `helpers_in` instead, all inside one call of this method, which
    `main()` of the entry script `run.py` makes."""
    files = [f"ops/{name}.py" for name in names]
    calls = [case.option_call(options_in, 3, {"fast_math": False})] if options_in else []
    if computed_options_in:
        calls.append(case.option_call(computed_options_in, 5, {}, runtime_keys=["fast_math"]))
    builds, kernels = [], [case.kernel(name, file) for name, file in zip(names, files)]
    for n, (name, file) in enumerate(zip(names, files)):
        build = case.build(f"ops.{name}", kernels=[f"ops.{name}.{name}"])
        build.site = case.site("pipeline.py", 20, "export" if name == later else "process")
        if helpers_of:
            stack = [f"{helpers_in}:{20 + n}:{helpers_of}", "run.py:8:main", "run.py:12:<module>"]
            build.site = case.site(helpers_in, 40 + 5 * n, f"_{name}", stack)
        build.kernel_sources = [_source(name, file)]
        builds.append(build)
    for module, members, fields in (
        ("edges", alternatives, {"picked_by": "edge_kernel", "picked_by_file": "ops/edges.py", "picked_by_line": 40}),
        ("filters", registry, {"chosen_by": ["FILTERS[...]"]}),
    ):
        if not members:
            continue
        file = f"ops/{module}.py"
        build = case.build(f"ops.{module}", kernels=[f"ops.{module}.{name}" for name in members])
        build.site = case.site("pipeline.py", 20, "process")
        build.kernel_sources = [_source(name, file, line=10 + 8 * n) for n, name in enumerate(members)]
        builds.append(build)
        files.append(file)
        kernels += [case.kernel(name, file, 10 + 8 * n, **fields) for n, name in enumerate(members)]
    return case.run(
        builds=builds,
        gradient_uses=[case.gradient_use(taped)] if taped else [],
        source=case.index(files=[*files, "ops/sim.py", "run.py"], kernels=kernels, option_calls=calls,
                          entry_points=[EntryPoint(kind="main_guard", file="run.py")]),
        command=("python", "run.py"),
    )


def _source(name: str, file: str, line: int = 9) -> KernelSource:
    return KernelSource(
        key=name, file=file, line=line, function=name, qualname=name, module_kind="file", options={},
        enable_backward=True, adjoint=True,
    )


@dataclass(frozen=True)
class Alternatives:
    """A closed set of module-scope kernels that one function picks from by configuration (a fixed if/elif): all
    defined at import, so the module builds every one of them whichever a run picks."""

    module: str
    file: str  # where the selecting function is
    picked_by: str  # the selecting function
    line: int  # its `def` line
    kernels: list[str]


@dataclass(frozen=True)
class KeptApart:
    """A small module of the group's lifecycle that keeps its own module, and why."""

    module: str
    reason: str


@dataclass(frozen=True)
class SmallModules:
    """The small modules of one lifecycle (same first-build place, device, options and block size)."""

    kernels: list[list[str]]  # [file, kernel name] of each of their kernels
    modules: list[str]
    alternatives: list[Alternatives] = field(default_factory=list)  # closed sets merged whole
    kept_apart: list[KeptApart] = field(default_factory=list)  # same lifecycle, left as they are
    first_built_in: str = ""  # the call inside which the run first built every one of them


class GranularModules(Mechanism[SmallModules]):
    SLUG = "granular-modules"
    CS = "CS-4"
    TITLE = "many tiny modules, each built separately"
    SAFETY = (SAFE,)
    CODEMODS = ("merge_modules",)

    def diagnose(self, inputs: Inputs) -> Finding[SmallModules]:
        built = Counter((b.module, b.device) for b in inputs.user_builds())
        trace = inputs.report.trace
        differentiated = {launch.module for launch in trace.launches if launch.adjoint}
        differentiated |= {use.module for use in trace.gradient_uses}
        groups: dict[tuple, dict] = {}
        apart: dict[tuple, list[KeptApart]] = {}
        for build in inputs.user_builds():
            kernels = _repo_kernels(inputs, build)
            if built[(build.module, build.device)] != 1 or build.generics or kernels is None:
                continue
            if _count(kernels) > SMALL_KERNELS:
                continue
            why = _why_apart(inputs, build, kernels, differentiated)
            if why:
                apart.setdefault(_lifecycle(build, inputs), []).append(KeptApart(build.module, why))
                continue
            groups.setdefault(_lifecycle(build, inputs), {})[build.module] = (build, kernels)
        lifecycle, group = max(groups.items(), key=lambda item: len(item[1]), default=(None, {}))
        if len(group) < MIN_MODULES:
            return ruled_out(
                self.SLUG,
                self.TITLE,
                f"fewer than {MIN_MODULES} small modules of the repository are built once each at the same point "
                "of the run with the same device, options and block size (plugin, differentiated and "
                "own-options modules keep their own)",
                evidence=[runtime(f"{a.module}: {a.reason}", None) for kept in apart.values() for a in kept],
            )
        builds = [build for build, _ in group.values()]
        kernels = [[k.file, k.name] for _, found in group.values() for k in found]
        alternatives = [a for build, found in group.values() for a in _alternatives(build.module, found)]
        kept_apart = apart.get(lifecycle, [])
        cost = sum(b.module_ms for b in builds) - max(b.module_ms for b in builds)
        call = _load_call(builds[0], inputs)
        where = f"one call of {call.function} ({call.file})" if call else "the same place"
        evidence = [runtime(f"{b.module}: {counted(len(b.kernels), 'kernel')}, {ms(b.module_ms)}", b.site, inputs)
                    for b in builds]
        evidence += [static(f"{a.module}: {', '.join(a.kernels)} are a closed set {a.picked_by}() picks from by "
                            "configuration, all defined at import: merged whole", a.file, a.line)
                     for a in alternatives]
        evidence += [runtime(f"{a.module}: {a.reason}", None) for a in kept_apart]
        return fired(
            self.SLUG,
            self.TITLE,
            f"{len(group)} small modules with one lifecycle (first built inside {where}, same device, options and "
            "block size), built one by one",
            evidence=evidence,
            cost_ms=cost,
            extra_builds=len(group) - 1,
            all_builds=builds_of(inputs, group),
            facts=SmallModules(kernels, sorted(group), alternatives, kept_apart, where),
        )

    def propose(self, finding: Finding[SmallModules], inputs: Inputs) -> Iterator[Proposal]:
        index = inputs.index
        facts = finding.facts
        kernels = facts.kernels
        packages = [index.python_module_of(file) or "" for file, _ in kernels]
        common = _common_prefix([p.split(".") for p in packages]) or ["app"]
        module = ".".join(common) + ".kernels"
        if index.file_of_module(module):  # a Python module of that name would share (and change) the module
            module += "_merged"
        closed = "".join(
            f" {a.module} holds a closed set of alternatives, {', '.join(a.kernels)}, that {a.picked_by}() "
            f"({a.file}:{a.line}) picks from by configuration: they join whole (every one is defined at import, "
            f"so the ones a run does not pick compile along, as they do in {a.module} now), and every choice "
            "builds the one module."
            for a in facts.alternatives
        )
        yield Fix(
            id="",
            slug=finding.slug,
            title=f"Build the {len(facts.modules)} same-lifecycle modules as one module {module}",
            description=f"{', '.join(facts.modules)} are first built inside {facts.first_built_in}, whatever helper "
            f"launches them, with the same device, options and block size, each separately; one named module {module} "
            "builds their "
            f"{len(kernels)} kernels at once (kernel names kept).{closed}",
            safety=SAFE,
            codemod="merge_modules",
            places=(MergeModulesArgs(kernels=kernels, module=module),),
            files=sorted({file for file, _ in kernels}),
            expected=expected_effect(finding),
            expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )
        for kept in facts.kept_apart:
            yield NotProposed(finding.slug, f"{kept.module} keeps its own module: {kept.reason}")

    EXAMPLES = (
        Example(
            "two one-kernel files of one package, same options, built one after the other",
            _tiny_modules("add", "mul"),
            FIRED,
            fixes=(("merge_modules", SAFE),),
        ),
        Example(
            "one of the small modules sets its own options: it keeps them in its own module, the other two merge",
            _tiny_modules("add", "mul", "sub", options_in="ops/sub.py"),
            FIRED,
            fixes=(("merge_modules", SAFE),),
            declined="ops.sub keeps its own module: its file sets its own module options",
            places=((MergeModulesArgs(kernels=[["ops/add.py", "add"], ["ops/mul.py", "mul"]], module="ops.kernels"),),),
        ),
        Example(
            "a closed set of alternatives (four module-scope kernels one if/elif on the configured kind picks from) "
            "joins its lifecycle's merge whole; a mode-dependent fast_math module, a registry's module and a taped "
            "module keep their own",
            _tiny_modules(
                "setup", "output", "numerics", "loss", alternatives=("clamp", "wrap", "reflect", "zero"),
                registry=("soften", "emboss"), computed_options_in="ops/numerics.py", taped="ops.loss",
            ),
            FIRED,
            fixes=(("merge_modules", SAFE),),
            declined="ops.filters keeps its own module: plugin code",
            places=((MergeModulesArgs(
                kernels=[["ops/setup.py", "setup"], ["ops/output.py", "output"], ["ops/edges.py", "clamp"],
                         ["ops/edges.py", "wrap"], ["ops/edges.py", "reflect"], ["ops/edges.py", "zero"]],
                module="ops.kernels",
            ),),),
        ),
        Example(
            "modules first built inside one call of `step()`, each launched from another helper, share a lifecycle",
            _tiny_modules("force", "walls", "totals", helpers_of="step"),
            FIRED,
            fixes=(("merge_modules", SAFE),),
            reason="first built inside one call of step",
            places=((MergeModulesArgs(
                kernels=[["ops/force.py", "force"], ["ops/walls.py", "walls"], ["ops/totals.py", "totals"]],
                module="ops.kernels",
            ),),),
        ),
        Example(
            "the same where `step()` and its launch helpers are the entry script's own functions",
            _tiny_modules("force", "walls", "totals", helpers_of="step", helpers_in="run.py"),
            FIRED,
            fixes=(("merge_modules", SAFE),),
            reason="first built inside one call of step (run.py)",
        ),
        Example(
            "a module first built at a later phase (export) has another lifecycle: nothing to merge",
            _tiny_modules("add", "mul", later="mul"),
            RULED_OUT,
        ),
        Example("one small module is nothing to merge", _tiny_modules("add"), RULED_OUT),
    )


def _options_key(options: dict) -> str:
    return repr(sorted((k, repr(v)) for k, v in options.items() if k not in _IDENTITY_FREE))


def _lifecycle(build: ModuleBuild, inputs: Inputs) -> tuple:
    """Modules first built inside one call of the same method (whichever of its helpers launched them), on one
    device, with the same options and block size, live and die together."""
    return build.device, _options_key(build.options), build.block_dim, _load_call(build, inputs)


@dataclass(frozen=True)
class EnclosingCall:
    """One call of a function, inside which the run first loaded a module: the function and where it was called."""

    file: str
    function: str
    called_from: str  # "file:line" of the call, "" when the stack does not say


def _load_call(build: ModuleBuild, inputs: Inputs) -> EnclosingCall | None:
    """The call inside which the run first loaded the module, from the load's stack: the outermost function frame
    below the program's driver (the entry file's frames, and a function the entry's module scope calls), so that a
    `Simulator.step()` the entry calls stands for the helpers it runs (`_force`, `_close`, ...), while `grade()` and
    `export()`, called from the entry one after the other, stay two. A stack that starts in the entry's own code
    is read the same way within the entry: the outermost of its functions below the one its module scope calls
    (`edges()` for the launch helpers it calls, whoever launches). The launching function itself (the stack's
    first frame) where the stack is import-time code or too short to reach the driver."""
    if build.site is None:
        return None
    chain = [build.site, *build.site.callers()]
    files = [inputs.repo_file(frame.file) for frame in chain]
    entry = entry_file(inputs)
    anchor = 0
    for depth in range(1, len(chain) + 1):
        if depth == len(chain):  # the stack ends before the driver: the call that matters is not known
            anchor = 0
            break
        frame, outer = chain[depth], chain[depth + 1] if depth + 1 < len(chain) else None
        driven_by_entry = outer is not None and outer.function == "<module>" and files[depth + 1] == entry
        leaves_for_entry = files[depth] == entry and files[0] != entry
        if frame.function == "<module>" or files[depth] is None or leaves_for_entry or driven_by_entry:
            break
        anchor = depth
    outer = chain[anchor + 1] if anchor + 1 < len(chain) else None
    called_from = f"{files[anchor + 1] or outer.file}:{outer.line}" if outer else ""
    return EnclosingCall(files[anchor] or chain[anchor].file, chain[anchor].function, called_from)


def _repo_kernels(inputs: Inputs, build: ModuleBuild) -> list[KernelDef] | None:
    """The scanned defs of every kernel of a module of the repository (by the tracer's code-object sites); None for
    a library's module, a unique one, or one whose sources were not recorded."""
    if not build.kernel_sources or any(s.module_kind == "unique" for s in build.kernel_sources):
        return None
    kernels = []
    for source in build.kernel_sources:
        file = inputs.repo_file(source.file)
        kernel = inputs.index.kernel_at(file, source.line) if file else None
        if kernel is None or not inputs.scope.in_project(kernel) or kernel.module_kind not in ("default", "literal"):
            return None
        kernels.append(kernel)
    return kernels


def _count(kernels: list[KernelDef]) -> int:
    """How many kernels a module holds for the small-module test, a closed set of alternatives counting once:
    a run uses one of them, the others are small and compile along."""
    return len({_selector(k) or (k.file, k.name, k.line) for k in kernels})


def _selector(kernel: KernelDef) -> tuple[str, str, int] | None:
    """(file, name, line) of the function that picks `kernel` from a closed set, if one does."""
    if kernel.picked_by is None:
        return None
    return kernel.picked_by_file or kernel.file, kernel.picked_by, kernel.picked_by_line or 0


def _alternatives(module: str, kernels: list[KernelDef]) -> list[Alternatives]:
    by_selector: dict[tuple[str, str, int], list[str]] = {}
    for k in kernels:
        if (selector := _selector(k)) is not None:
            by_selector.setdefault(selector, []).append(k.name)
    return [Alternatives(module, file, name, line, names) for (file, name, line), names in by_selector.items()]


def _why_apart(inputs: Inputs, build: ModuleBuild, kernels: list[KernelDef], differentiated: set[str]) -> str:
    """Why a small module of the repository keeps its own module ("" when it can join its lifecycle's merge):
    plugin code, its own options (constant or computed: a mode-dependent fast_math equals the others' in one run
    only), a tape's module, or a closed set of alternatives only partly in it."""
    optional = [k for k in kernels if optional_reason(k)]
    if optional:
        names = ", ".join(f"{k.name} (chosen by {', '.join(k.chosen_by)})" for k in optional)
        return f"plugin code, optional {noun(len(optional), 'kernel')} {names}: left as it is"
    if build.module in differentiated:
        return "differentiated (a tape recorded it or its adjoint ran): left as it is"
    targets = {build.module} | {k.python_module for k in kernels if k.module_kind == "default"}
    calls = [c for c in inputs.index.option_calls if inputs.scope.in_project(c) and c.target_module in targets]
    if calls:
        call = calls[0]
        keys = sorted({*call.values, *call.non_constant_keys})
        return f"its file sets its own module options ({', '.join(keys)}) at {call.file}:{call.line}"
    changes = [c for c in inputs.report.trace.option_changes
               if c.kind != "config" and c.target == build.module and inputs.scope.made_by_project(c)]
    if changes:
        return f"its options are set by {changes[0].kind} ({', '.join(sorted(changes[0].values))})"
    for alternatives in _alternatives(build.module, kernels):
        picker = (alternatives.file, alternatives.picked_by, alternatives.line)
        every = {k.name for k in inputs.index.kernels if _selector(k) == picker}
        if every - set(alternatives.kernels):
            return (f"the alternatives {alternatives.picked_by}() picks from are not all in it "
                    f"({', '.join(sorted(every - set(alternatives.kernels)))} elsewhere)")
    return ""


def _common_prefix(names: list[list[str]]) -> list[str]:
    """The leading parts every dotted name shares (`[["app", "a"], ["app", "b"]]` -> `["app"]`)."""
    prefix = names[0] if names else []
    for parts in names[1:]:
        length = 0
        while length < min(len(prefix), len(parts)) and prefix[length] == parts[length]:
            length += 1
        prefix = prefix[:length]
    return prefix
