"""CS-1 one module level up: a factory's kernels made one by one inside the loop that launches them.

Each value's kernel gets a `module="unique"` module of its own, built once, so no module is ever rebuilt and
kernel-after-load sees nothing; yet the run builds one module per value where one module holding the set would
build once. A shared module name alone does not help: each kernel made in the loop joins the module after its
previous load (kernels defined after their module loaded), one build per value again. The set must exist before
the first launch: made in the constructor, in one module.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from codemods.specs import FactorySetArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import builds_of, expected_effect, fired, ms, ruled_out, runtime, static
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import KernelDef as TracedKernel
from warp_fix.report import Site
from warp_fix.scan.index import FactoryFunction, FunctionCalls, LoopFactoryCall, Value
from warp_fix.wording import counted


@dataclass(frozen=True)
class LoopSet:
    """The kernels one factory call site made, one per loop value, each launched before the next was made."""

    file: str  # the factory call's file, repo-relative
    line: int
    function: str  # the method or function holding the loop: `FilterBank.apply`
    class_name: str | None
    method: str | None  # the name class_name calls it by (`apply`), wherever its body is written
    callee: str  # as written at the call
    arguments: list[str]
    loop_line: int
    loop_target: str
    loop_iter: str
    origin: str  # constructor | constant | parameter | computed (LoopFactoryCall.origin)
    origin_detail: str
    per_call: list[str]  # what the call's arguments read that only the loop's run knows
    factory: str
    factory_file: str
    factory_line: int
    kernel: str  # the def the factory turns into a kernel
    kernel_line: int
    module_options: str  # the source of the kernel's own module_options, "" without
    module_parameter: str | None  # the factory's parameter that already sets the module, if any
    modules: list[str]  # the unique modules the run made there, one per value
    builds: int  # builds of those modules
    build_ms: float
    shared_module: str  # the named module the set would share
    other_callers: list[str] = field(default_factory=list)  # other places that call the factory
    factory_in_repo: bool = True  # False: the kernel is made in an installed library's code
    # the values as the constructor holds them (`self.orders`) when the loop runs over a parameter standing for them
    constructor_values: str = ""


@dataclass(frozen=True)
class LoopSets:
    loop_sets: list[LoopSet]


def _bank(
    *, origin: str = "constructor", per_call: tuple[str, ...] = (), class_name: str | None = "FilterBank",
    module_options: str | None = None, widths: int = 3, lazily: bool = True, other_caller: bool = False,
    library: bool = False, held_by: str = "",
) -> Inputs:
    """`FilterBank.apply` (bank.py:21) calls `make_filter(width)` (filters.py:6, kernel `box` at line 10, made
    with module="unique" at line 18) in `for width in self.widths:`, launching each kernel before making the
    next (or, `lazily` False, making all of them first). `held_by`: the loop runs over a parameter of the helper
    `FilterBank._smooth` instead, which every call fills with this constructor attribute."""
    function = ("FilterBank._smooth" if held_by else "FilterBank.apply") if class_name else "apply"
    call = case.site("bank.py", 21, "apply")
    filters = "/usr/lib/python3/site-packages/filt/filters.py" if library else "filters.py"
    stack = [f"{filters}:18:make_filter", "bank.py:21:apply", "app.py:9:main"]
    modules = [f"make_filter__locals__box_{i:08x}" for i in range(widths)]
    made = [
        replace(
            case.kernel_def("make_filter__locals__box", module, unique=True,
                            site=case.site(filters, 10, "box", stack)),
            seq=(2 * i if lazily else i), created=case.site(filters, 18, "make_filter", stack[1:]),
        )
        for i, module in enumerate(modules)
    ]
    launches = [replace(case.launch("make_filter__locals__box", module, site=call), seq=(2 * i + 1 if lazily else
                                                                                          widths + i))
                for i, module in enumerate(modules)]
    calls = [FunctionCalls(file="bank.py", line=20, function=function, callees=["make_filter", "launch"])]
    if other_caller:
        calls.append(FunctionCalls(file="tools.py", line=4, function="preview", callees=["make_filter"]))
    return case.run(
        builds=[case.build(module, kernels=["make_filter__locals__box"]) for module in modules],
        launches=launches,
        kernel_defs=made,
        source=case.index(
            files=["bank.py", "filters.py", "app.py", *(["tools.py"] if other_caller else [])],
            kernels=[] if library else [case.kernel(
                "box", "filters.py", 10, module_kind="unique", module_value="unique", made_by="call",
                enclosing_functions=["make_filter"], captures=["width"], at_module_scope=False,
                module_options=Value(module_options, is_constant=True) if module_options else None,
            )],
            factories=[FactoryFunction(file="filters.py", line=6, name="make_filter", qualname="make_filter",
                                       python_module="filters", function_path="make_filter", kernels=["box"])],
            loop_factory_calls=[LoopFactoryCall(
                file="bank.py", line=21, function=function, callee="make_filter", arguments=["width"],
                class_name=class_name, method=function.rsplit(".", 1)[-1] if class_name else None, loop_line=20,
                loop_target="width", loop_iter="widths" if held_by else "self.widths", origin=origin,
                origin_detail={"constructor": "self.widths is set in FilterBank.__init__",
                               "parameter": "frames is a parameter of apply()"}.get(origin, ""),
                init_line=15 if origin == "constructor" else None, per_call=list(per_call),
                constructor_values=held_by,
            )],
            calls=calls,
        ),
    )


class FactoryInLoop(Mechanism[LoopSets]):
    SLUG = "factory-in-loop"
    CS = None  # CS-1 one module level up; the id in docs/compile-model.md's table stays kernel-after-load's
    TITLE = "a factory's kernels made one by one in the loop that launches them, a module each"
    SAFETY = (SAFE,)
    CODEMODS = ("factory_set",)

    def diagnose(self, inputs: Inputs) -> Finding[LoopSets]:
        found: list[LoopSet] = []
        evidence = []
        for (call_file, call_line), made in _by_call_site(inputs).items():
            modules = list(dict.fromkeys(d.module for d in made))
            if len(modules) < 2 or not _made_after_a_launch(inputs, made):
                continue
            loop = next(
                (c for c in inputs.index.loop_factory_calls if (c.file, c.line) == (call_file, call_line)), None
            )
            if loop is None:
                continue
            builds = [b for b in inputs.user_builds() if b.module in modules]
            kernel = inputs.index.kernel_at(*_def_site(inputs, made[0]))
            if kernel is None or not inputs.scope.in_project(kernel) or not kernel.enclosing_functions:
                found.append(_outside(loop, made, modules, builds, _shared_module(inputs, loop)))
                evidence.append(runtime(f"{loop.callee}() at {loop.file}:{loop.line} made {len(modules)} kernels, a "
                                        "module each, in code the repository does not define", made[-1].site, inputs))
                continue
            factory = inputs.index.factory_named(".".join(kernel.enclosing_functions))
            item = LoopSet(
                file=loop.file, line=loop.line, function=loop.function or "", class_name=loop.class_name,
                method=loop.method, callee=loop.callee, arguments=list(loop.arguments), loop_line=loop.loop_line,
                loop_target=loop.loop_target, loop_iter=loop.loop_iter, origin=loop.origin,
                origin_detail=loop.origin_detail, per_call=list(loop.per_call),
                factory=kernel.enclosing_functions[-1], factory_file=kernel.file,
                factory_line=factory.line if factory else kernel.line, kernel=kernel.name, kernel_line=kernel.line,
                module_options=kernel.module_options.source if kernel.module_options else "",
                module_parameter=kernel.module_value if kernel.module_from_parameter else None,
                modules=modules, builds=len(builds), build_ms=sum(b.module_ms for b in builds),
                shared_module=_shared_module(inputs, loop), constructor_values=loop.constructor_values,
            )
            found.append(replace(item, other_callers=_other_callers(inputs, item, factory)))
            evidence.append(runtime(
                f"{loop.callee}() at {loop.file}:{loop.line} made {len(modules)} kernels of {kernel.name}, a "
                f"module=\"unique\" module each, each after the previous one's launch ({len(builds)} builds)",
                made[-1].created or made[-1].site, inputs,
            ))
            evidence.append(static(f"for {loop.loop_target} in {loop.loop_iter}: {loop.origin_detail}", loop.file,
                                   loop.loop_line))
        if not found:
            return ruled_out(
                self.SLUG, self.TITLE,
                "no factory made several kernels, a module each, in a loop that launched each before making the next",
            )
        extra = sum(max(0, item.builds - 1) for item in found)
        cost = sum(_cost(inputs, item) for item in found)
        return fired(
            self.SLUG, self.TITLE,
            f"{counted(extra, 'extra build')}: {counted(len(found), 'loop')} made their factory's kernels one by one, "
            f"a module each ({ms(cost)})",
            evidence=evidence, cost_ms=cost, extra_builds=extra,
            all_builds=builds_of(inputs, {m for item in found for m in item.modules}), facts=LoopSets(found),
        )

    def propose(self, finding: Finding[LoopSets], inputs: Inputs) -> Iterator[Proposal]:
        told: set[str] = set()
        for item in finding.facts.loop_sets:
            where = f"{item.callee}({', '.join(item.arguments)}) at {item.file}:{item.line}"
            why = _why_not(item)
            if why is not None:
                yield NotProposed(finding.slug, f"{where}: {why}. It keeps a module per kernel")
                continue
            if item.other_callers and item.factory not in told:
                told.add(item.factory)
                yield NotProposed(
                    finding.slug,
                    f"{item.factory}() ({item.factory_file}:{item.factory_line}) keeps module=\"unique\" as its "
                    f"default: {', '.join(item.other_callers)} also call it, with values of their own; only the "
                    "project's own loop passes the shared module (a keyword added, never a default changed)",
                )
            values = len(item.modules)
            iterated = item.constructor_values or item.loop_iter
            yield Fix(
                id="", slug=finding.slug,
                title=f"Make {item.class_name}'s {item.factory}() kernels before the first launch, in one module",
                description=(
                    f"{item.function}() made one {item.kernel} kernel per value of {iterated} inside the loop "
                    f"that launches it ({where}), each in a module of its own: {values} modules, {item.builds} "
                    f"builds. The values are fixed when the object is made ({item.origin_detail}), so "
                    f"{item.class_name}.__init__ makes the set, passing module=\"{item.shared_module}\", and the "
                    f"loop launches from it: one module, one build. {item.factory}() gains the keyword "
                    f"{item.module_parameter or 'module'}=\"unique\", its old behaviour the default. A shared "
                    "module alone would not help: each kernel made in the loop would join it after its previous "
                    "load and build it again."
                ),
                safety=SAFE, codemod="factory_set",
                places=(FactorySetArgs(
                    file=item.file, class_name=item.class_name or "", method=item.method or "",
                    line=item.line, callee=item.callee, attribute=_attribute(item.factory),
                    module=item.shared_module, factory_file=item.factory_file, factory=item.factory,
                    parameter=item.module_parameter or "module", values=item.constructor_values,
                ),),
                files=sorted({item.file, item.factory_file}),
                lines=[f"{item.file}:{item.line}", f"{item.factory_file}:{item.factory_line}"],
                expected=expected_effect(finding, builds=item.builds - 1, cost_ms=_cost(inputs, item)),
                expected_builds_removed=item.builds - 1, expected_ms=_cost(inputs, item),
            )

    EXAMPLES = (
        Example(
            "a filter bank makes each width's kernel in its launch loop, widths fixed by its constructor",
            _bank(),
            FIRED,
            fixes=(("factory_set", SAFE),),
            places=((FactorySetArgs(
                file="bank.py", class_name="FilterBank", method="apply", line=21, callee="make_filter",
                attribute="_filter_kernels", module="bank.FilterBank", factory_file="filters.py", factory="make_filter",
            ),),),
        ),
        Example(
            "the loop runs over a parameter of a private helper that every call fills with the constructor's widths: "
            "the constructor makes the set over self.widths",
            _bank(held_by="self.widths"),
            FIRED,
            fixes=(("factory_set", SAFE),),
            places=((FactorySetArgs(
                file="bank.py", class_name="FilterBank", method="_smooth", line=21, callee="make_filter",
                attribute="_filter_kernels", module="bank.FilterBank", factory_file="filters.py", factory="make_filter",
                values="self.widths",
            ),),),
        ),
        Example(
            "the factory's other callers keep its default: said in the plan, the fix still made",
            _bank(other_caller=True),
            FIRED,
            fixes=(("factory_set", SAFE),),
            declined="tools.py:4 (preview) also call it",
        ),
        Example(
            "a kernel whose width is computed from each frame's data: known only per call, not proposed",
            _bank(origin="parameter", per_call=("width (line 15: width = 2 * int(noise * 40.0) + 3)",)),
            FIRED,
            fixes=(),
            declined="depends on data known only per call",
        ),
        Example(
            "a loop over a parameter of the method: the set is not known at construction",
            _bank(origin="parameter"),
            FIRED,
            fixes=(),
            declined="not a fixed set known at construction",
        ),
        Example(
            "a factory kernel with its own module_options keeps module=\"unique\"",
            _bank(module_options='{"fast_math": True}'),
            FIRED,
            fixes=(),
            declined="module_options",
        ),
        Example(
            "a loop in a plain function: no constructor to make the set in",
            _bank(class_name=None),
            FIRED,
            fixes=(),
            declined="is no method",
        ),
        Example(
            "an installed library's factory: no module keyword to pass, its code never edited",
            _bank(library=True),
            FIRED,
            fixes=(),
            declined="code the repository does not define",
        ),
        Example(
            "every kernel made before the first launch: nothing to move",
            _bank(lazily=False),
            RULED_OUT,
        ),
        Example("a single value: one module either way", _bank(widths=1), RULED_OUT),
    )


def _why_not(item: LoopSet) -> str | None:
    """Why a loop's kernels must stay made one by one, a module each; None when the set can be made up front."""
    if not item.factory_in_repo:
        return (f"{item.callee}() makes its kernels in code the repository does not define (an installed library's): "
                "it takes no module name to share, and its code is never edited")
    if item.per_call:
        return (f"its kernel depends on data known only per call, {'; '.join(item.per_call)}, not on a fixed set "
                "known at construction")
    if item.origin in ("parameter", "computed"):
        return (f"the loop runs over {item.loop_iter} ({item.origin_detail}): values known only when it runs, "
                "not a fixed set known at construction")
    if item.module_options:
        return (f"{item.kernel} sets its own module_options ({item.module_options}), which Warp accepts only with "
                "module=\"unique\": a shared module would drop them")
    if item.class_name is None:
        return f"{item.function}() is no method: no constructor to make the set in (make it before the loop by hand)"
    return None


def _outside(loop: LoopFactoryCall, made: list[TracedKernel], modules: list[str], builds: list, shared: str) -> LoopSet:
    """A loop whose factory's kernels are made outside the repository: reported, never edited."""
    maker = made[0].created or made[0].site
    return LoopSet(
        file=loop.file, line=loop.line, function=loop.function or "", class_name=loop.class_name, method=loop.method,
        callee=loop.callee, arguments=list(loop.arguments), loop_line=loop.loop_line, loop_target=loop.loop_target,
        loop_iter=loop.loop_iter, origin=loop.origin, origin_detail=loop.origin_detail, per_call=list(loop.per_call),
        factory=maker.function if maker else loop.callee, factory_file=maker.file if maker else "",
        factory_line=maker.line if maker else 0, kernel=made[0].function, kernel_line=made[0].site.line if
        made[0].site else 0, module_options="", module_parameter=None, modules=modules, builds=len(builds),
        build_ms=sum(b.module_ms for b in builds), shared_module=shared, factory_in_repo=False,
    )


def _by_call_site(inputs: Inputs) -> dict[tuple[str, int], list[TracedKernel]]:
    """The run's unique kernels made inside a factory, by the repository line that called the factory first for
    their module (a module two call sites both ask for is the first one's: its build is theirs)."""
    found: dict[tuple[str, int], list[TracedKernel]] = {}
    owner: dict[str, tuple[str, int]] = {}
    for made in sorted(inputs.report.trace.kernel_defs, key=lambda d: d.seq):
        call = _factory_call(made) if made.unique else None
        file = inputs.repo_file(call.file) if call else None
        if call is not None and file:
            where = owner.setdefault(made.module, (file, call.line))
            if where == (file, call.line):
                found.setdefault(where, []).append(made)
    return found


def _factory_call(made: TracedKernel) -> Site | None:
    """The frame that called the factory: the caller of the function where the kernel was created."""
    created = made.created
    if created is not None and created.function != "<module>" and created.stack:
        return created.callers()[0]
    callers = made.site.callers() if made.site else ()
    return callers[1] if len(callers) > 1 and callers[0].function != "<module>" else None


def _def_site(inputs: Inputs, made: TracedKernel) -> tuple[str, int]:
    site = made.site
    return (inputs.repo_file(site.file) or site.file, site.line) if site else ("", 0)


def _made_after_a_launch(inputs: Inputs, made: list[TracedKernel]) -> bool:
    """A kernel of the set was made after another one's first launch: made lazily, launched at once."""
    modules = {d.module for d in made}
    first_launch = min((launch.seq for launch in inputs.report.trace.launches if launch.module in modules),
                       default=None)
    if first_launch is None:
        return False
    launched = {launch.module for launch in inputs.report.trace.launches if launch.seq <= first_launch}
    return any(d.seq > first_launch and d.module not in launched for d in made)


def _cost(inputs: Inputs, item: LoopSet) -> float:
    """The builds one module of the set would not make: all but the first (it also pays the set's one build)."""
    builds = [b for b in inputs.user_builds() if b.module in item.modules]
    return sum(b.module_ms for b in builds[1:])


def _shared_module(inputs: Inputs, loop: LoopFactoryCall) -> str:
    python_module = inputs.index.python_module_of(loop.file) or loop.file.removesuffix(".py").replace("/", ".")
    return f"{python_module}.{loop.class_name}" if loop.class_name else f"{python_module}.{loop.function}"


def _attribute(factory: str) -> str:
    """`make_filter` -> `_filter_kernels`: the dict the constructor builds."""
    return f"_{factory.removeprefix('make_').removeprefix('_')}_kernels"


def _other_callers(inputs: Inputs, item: LoopSet, factory: FactoryFunction | None) -> list[str]:
    """Where else the repository calls the factory (functions, by the name called): they keep its default."""
    if factory is None:
        return []
    return [
        f"{calls.file}:{calls.line} ({calls.function or 'module scope'})"
        for calls in inputs.index.calls
        if (item.factory in calls.callees or any(m.split(".")[-1] == item.factory for m in calls.methods)
            or any(typed.method == item.factory for typed in calls.typed))
        and (calls.file, calls.function) != (item.file, item.function)
    ]


