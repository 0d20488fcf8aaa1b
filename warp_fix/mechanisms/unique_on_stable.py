"""CS-9: `module="unique"` on stable kernels gives each its own hash-named module and build."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from codemods.specs import CallSiteArgumentArgs, DropUniqueArgs, KernelsToModuleScopeArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._attribution import module_source
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    WARP_BLOCK_DIM,
    builds_of,
    expected_effect,
    fired,
    ms,
    ruled_out,
    runtime,
    static,
)
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import KernelDef as TracedKernel
from warp_fix.scan.index import KernelDef, Value
from warp_fix.scope import optional_reason
from warp_fix.wording import counted, named, noun


@dataclass(frozen=True)
class UniqueKernel:
    """A `module="unique"` kernel of the repository: how it is made, and the named module it would share."""

    file: str
    kernel: str  # the def's name
    line: int
    factory: str | None  # the function it is made in; None at module scope
    python_module: str
    module_kind: str
    captures: list[str]
    factory_params: list[str]
    called_at_module_scope: bool  # every call of its factory ran at import time
    made_by: str  # decorator | call | the project's decorator
    call_line: int  # the decorator or wp.kernel(...) call
    callee: str  # the name called there
    module_options: str  # the source of its own module_options, "" without
    chosen_by: list[str]  # the branch conditions that make it: optional
    module: str  # the named module it would share
    modules: list[str]  # the unique modules the run built for it
    runtime_names: list[str]  # the names a factory gave it


@dataclass(frozen=True)
class UniqueKernels:
    stable: list[UniqueKernel]  # made the same way on every run: they can share a module
    runtime_made: list[UniqueKernel]
    optional: list[UniqueKernel]
    generic: list[UniqueKernel]
    # stable by their source, but the run built none of their modules: reading alone proposes no fix
    unbuilt: list[UniqueKernel] = field(default_factory=list)


def _unique_kernel(captures: list[str], called_from: str, calls: int = 2, built: bool = True, **fields) -> Inputs:
    """`integrate`, made with module="unique" inside `make_integrator()`, which is called `calls` times at
    `called_from` (each call a unique module of its own; `built` False: the run never launched them)."""
    stack = ["sim.py:6:integrate", called_from]
    made = case.kernel_def("integrate", "sim", unique=True, site=case.site("sim.py", 6, "integrate", stack))
    modules = ["integrate_0a1b2c3d", "integrate_4e5f6a7b"][:calls]
    return case.run(
        builds=[case.build(module, kernels=["sim.integrate"]) for module in modules if built],
        kernel_defs=[replace(made, module=module) for module in modules],
        source=case.index(
            files=["sim.py"],
            kernels=[
                case.kernel(
                    "integrate", "sim.py", 6, module_kind="unique", enclosing_functions=["make_integrator"],
                    captures=captures, at_module_scope=False, **fields,
                )
            ],
        ),
    )


def _transpose_beside(launched_at: int, as_script: bool = False, device: str = "cuda:0") -> Inputs:
    """`transpose`, decorated `@wp.kernel(module="unique")` at sim.py:6 (Warp's 2-D FFT example writes it so), launched
    at `launched_at`; `step`, of sim.py's own module, launched without a block_dim. `as_script`: the run is
    `python sim.py`, whose module is `__main__`. On the CPU, Warp records block_dim 1 in every build's options."""
    own = "__main__" if as_script else "sim"
    options = {"block_dim": 1} if device == "cpu" else {}
    made = case.kernel_def("transpose", "sim", unique=True,
                           site=case.site("sim.py", 6, "transpose", ["sim.py:6:transpose", "sim.py:5:<module>"]))
    return case.run(
        builds=[case.build("transpose_5c6d7e8f", device=device, kernels=["sim.transpose"], options=options),
                case.sourced(case.build(own, device=device, options=options),
                             case.kernel_source("step", "sim.py", 20))],
        kernel_defs=[replace(made, module="transpose_5c6d7e8f")],
        launches=[case.launch("transpose", "transpose_5c6d7e8f", device=device, block_dim=launched_at),
                  case.launch("step", own, device=device)],
        source=case.index(
            files=["sim.py"],
            kernels=[case.kernel("transpose", "sim.py", 6, module_kind="unique"), case.kernel("step", "sim.py", 20)],
        ),
        command=("python", "sim.py") if as_script else ("python", "-m", "sim"),
    )


def _reductions(options_set_in: str | None = None, plain_kernel: bool = False) -> Inputs:
    """`sum_k`, `max_k` and `sq_k`, each `@wp.kernel(module="unique")` at module scope of ops.py and launched once.
    `options_set_in`: a function of ops.py that calls `wp.set_module_options({"enable_backward": False})` for the
    file's module, and ran between the launches (a reporting helper written so; it reaches no unique kernel).
    `plain_kernel`: ops.py also defines `mesh_k` in its own module, which this run never builds."""
    names = ["sum_k", "max_k", "sq_k"]
    modules = [f"{name}_{i}a1b2c3d" for i, name in enumerate(names)]
    made = [
        replace(case.kernel_def(name, "ops", unique=True,
                                site=case.site("ops.py", 8 + 6 * i, name, [f"ops.py:{8 + 6 * i}:{name}",
                                                                           "ops.py:7:<module>"])), module=module)
        for i, (name, module) in enumerate(zip(names, modules, strict=True))
    ]
    off = {"enable_backward": False}
    calls = [case.option_call("ops.py", 28, off, function=options_set_in)] if options_set_in else []
    changes = [case.option_change("ops", off, has_kernels=False)] if options_set_in else []
    return case.run(
        builds=[case.build(module, kernels=[f"ops.{name}"]) for name, module in zip(names, modules, strict=True)],
        kernel_defs=made,
        launches=[case.launch(name, module) for name, module in zip(names, modules, strict=True)],
        option_changes=changes,
        source=case.index(
            files=["ops.py"],
            kernels=[case.kernel(name, "ops.py", 8 + 6 * i, module_kind="unique") for i, name in enumerate(names)]
            + ([case.kernel("mesh_k", "ops.py", 40)] if plain_kernel else []),
            option_calls=calls,
        ),
    )


def _installed_unique() -> Inputs:
    """`body_inverses` and `check_inertia`, each `@wp.kernel(module="unique")` at module scope of an installed
    package's inertia.py (Newton 1.8 writes two so), launched from the package's own code while the project's
    script runs: stable, but not the project's to edit. A third, `apply_offsets`, is made but never launched."""
    names = ["body_inverses", "check_inertia"]
    modules = [f"{name}_{i}a1b2c3d" for i, name in enumerate(names)]
    made = [
        replace(case.kernel_def(name, "physlib.inertia", unique=True,
                                site=case.site("physlib/inertia.py", 10 + 20 * i, name,
                                               [f"physlib/inertia.py:{10 + 20 * i}:{name}"])), module=module)
        for i, (name, module) in enumerate(zip([*names, "apply_offsets"], [*modules, "apply_offsets_9f8e7d6c"],
                                               strict=True))
    ]
    return case.run(
        builds=[case.build(module, kernels=[f"physlib.inertia.{name}"]) for name, module in zip(names, modules,
                                                                                                   strict=True)],
        kernel_defs=made,
        launches=[case.launch(name, module) for name, module in zip(names, modules, strict=True)],
        source=case.index(
            files=["pendulum.py"],
            library_files=["physlib/inertia.py"],
            kernels=[case.kernel(name, "physlib/inertia.py", 10 + 20 * i, module_kind="unique", in_repo=False)
                     for i, name in enumerate([*names, "apply_offsets"])],
        ),
    )


def _renamed_by_call(**fields) -> Inputs:
    """`box` renamed `box_size_3_kernel` by its factory and made by `wp.kernel(box, module="unique", ...)` at
    line 21, the factory called twice at import time: only the code object's site (boxes.py:10) names the def."""
    stack = ["boxes.py:21:make_box", "pipeline.py:9:<module>"]
    made = case.kernel_def("box_size_3_kernel", "boxes", unique=True,
                           site=case.site("boxes.py", 10, "box_size_3_kernel", stack))
    modules = ["box_size_3_kernel_0a1b2c3d", "box_size_3_kernel_4e5f6a7b"]
    return case.run(
        builds=[case.build(module, kernels=["box_size_3_kernel"]) for module in modules],
        kernel_defs=[replace(made, module=module) for module in modules],
        source=case.index(
            files=["boxes.py", "pipeline.py"],
            kernels=[
                KernelDef(
                    file="boxes.py", line=10, name="box", python_module="boxes", decorator_line=21,
                    decorator='wp.kernel(box, module="unique")', module_kind="unique", enclosing_functions=["make_box"],
                    captures=["size"], at_module_scope=False, made_by="call", **fields,
                )
            ],
        ),
    )


class UniqueOnStable(Mechanism[UniqueKernels]):
    SLUG = "unique-on-stable"
    CS = "CS-9"
    TITLE = 'stable kernels each compiled in a module of their own (module="unique")'
    SAFETY = (SAFE,)
    CODEMODS = ("kernels_to_module_scope", "drop_unique", "call_site_argument")

    def diagnose(self, inputs: Inputs) -> Finding[UniqueKernels]:
        defs = [d for d in inputs.report.trace.kernel_defs if d.unique]
        if not defs:
            return ruled_out(self.SLUG, self.TITLE, 'no kernel with module="unique" was created in the run')
        stable, runtime_made, optional, generic = [], [], [], []
        outside: list[str] = []  # unique kernels of installed packages or generated code: never edited
        built = {d.function for d in defs if d.module in {b.module for b in inputs.report.trace.builds}}
        evidence = []
        for kernel_def in _distinct(defs):
            kernel = _static_kernel(inputs, kernel_def)
            if kernel is None or not inputs.scope.in_project(kernel):
                outside.append(kernel_def.function)
                continue
            made_here = [d for d in defs if d.site and (d.site.file, d.site.line) == (kernel_def.site.file,
                                                                                     kernel_def.site.line)]
            entry = _entry(inputs, kernel, made_here)
            runtime_captures = [c for c in kernel.captures if c != "module"]
            if kernel_def.generic or kernel.is_generic:
                # Each overload is built where it is launched; a shared module would build every registered one.
                generic.append(entry)
                evidence.append(static(f"{kernel.name} is generic: its own module builds only the instances "
                                       "launched", kernel.file, kernel.line))
            elif optional_reason(kernel):
                optional.append(entry)
                evidence.append(
                    static(f"{kernel.name} is made only in a branch on {', '.join(kernel.chosen_by)}: optional",
                           kernel.file, kernel.line)
                )
            # A factory called only at import time makes a fixed set of kernels before any launch, whatever its
            # kernels capture: they can share one module. One called later (plugins, requests) cannot.
            elif runtime_captures and not (entry.factory and entry.called_at_module_scope):
                runtime_made.append(entry)
                evidence.append(
                    static(
                        f"{kernel.name} captures {', '.join(runtime_captures)}: made from runtime "
                        "data, stays unique",
                        kernel.file,
                        kernel.line,
                    )
                )
            else:
                stable.append(entry)
                evidence.append(static(f"{kernel.name} is made the same way on every run: stable", kernel.file,
                                       kernel.line))
        unique_modules = [b for b in inputs.user_builds() if _is_unique_build(b, {d.key for d in defs})]
        evidence += [
            runtime(f"module {b.module} built for one unique kernel", b.site, inputs) for b in unique_modules
        ]
        built_modules = {b.module for b in inputs.report.trace.builds if b.status != "error"}
        unbuilt = [k for k in stable if not set(k.modules) & built_modules]
        stable = [k for k in stable if k not in unbuilt]
        facts = UniqueKernels(stable, runtime_made, optional, generic, unbuilt)
        if not stable:
            # The ones that cost a build lead: they are the ones worth naming.
            outside = sorted(set(outside), key=lambda name: (name not in built, name))
            return ruled_out(self.SLUG, self.TITLE, _why_none_stable(facts, outside), evidence=evidence, facts=facts)
        # What a shared module saves: the builds of the stable kernels whose options allow sharing.
        shareable = {module for k in stable if not k.module_options for module in k.modules}
        cost = sum(b.module_ms for b in unique_modules if b.module in shareable)
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(len(stable), 'stable kernel')} built in "
            f"{noun(len(stable), 'a module of its own', 'modules of their own')} ({ms(cost)})",
            evidence=evidence,
            cost_ms=cost,
            extra_builds=max(0, len(shareable) - 1),
            all_builds=builds_of(inputs, {module for k in stable for module in k.modules}),
            facts=facts,
        )

    def propose(self, finding: Finding[UniqueKernels], inputs: Inputs) -> Iterator[Proposal]:
        facts = finding.facts
        if facts.unbuilt:
            yield NotProposed(finding.slug, _unbuilt_reason(facts.unbuilt))
        for item in facts.runtime_made:
            yield NotProposed(
                finding.slug,
                f"{_named(item)} is made from runtime "
                'data: it keeps module="unique"',
            )
        for item in facts.optional:
            yield NotProposed(finding.slug, _optional_reason(item))
        for item in facts.generic:
            yield NotProposed(
                finding.slug,
                f"{_named(item)} is generic (per-dtype overloads): in a shared module every registered instance "
                "would build with it. Left alone",
            )
        alone = _without_partner([item for item in facts.stable if not item.module_options], inputs)
        for item, why in alone:
            yield NotProposed(finding.slug, f"{_named(item)} {why}: a shared module removes no build. Left alone")
        stable = [item for item in facts.stable if all(item is not lone for lone, _ in alone)]
        with_options = [item for item in stable if item.module_options]
        for item in with_options:
            yield NotProposed(
                finding.slug,
                f"{_named(item)} sets its own module_options "
                f"({item.module_options}), valid only with module=\"unique\": a shared module would change them",
            )
        to_scope: dict[tuple[str, str], dict] = {}
        renamed: dict[tuple[str, str], dict] = {}
        at_call_sites: list[UniqueKernel] = []
        for item in stable:
            if item.module_options:
                continue
            if item.made_by != "decorator":
                at_call_sites.append(item)
            elif item.factory and not item.captures and not item.called_at_module_scope:
                entry = to_scope.setdefault((item.file, item.factory), {"kernels": [], "item": item})
                entry["kernels"].append(item.kernel)
            else:
                # Every call of the factory is at import time: its kernels (closures of one key live side by side
                # in a module) and the file's module-scope unique kernels get one named module, in one edit.
                name = item.factory if item.factory else item.kernel
                entry = renamed.setdefault((item.file, item.module), {"names": [], "item": item})
                if name not in entry["names"]:
                    entry["names"].append(name)
        for (file, module), entry in renamed.items():
            names = ", ".join(entry["names"])
            if module == entry["item"].python_module:  # module-scope kernels: the keyword goes
                one = len(entry["names"]) == 1
                title = f"Build {names} with the other kernels of {'its' if one else 'their'} file"
                said = (f'{names} {"declares" if one else "each declare"} module="unique", a module of '
                        f"{'its' if one else 'their'} own; without it, {'it builds' if one else 'they build'} with "
                        f"the other kernels of {file}.")
                module = ""
            elif entry["item"].factory:
                title = f"Build the stable kernels of {file} in one named module"
                said = (f'{names} gave every stable kernel a module of its own (module="unique"); the named '
                        f"module {module} builds them together.")
            else:
                title = f"Build the stable kernels of {file} in one named module"
                own = entry["item"].python_module
                said = (f'{names} each declare module="unique", a module of their own; the named module {module} '
                        f"builds them together. Not {own}: {_not_own_module(inputs, file, own)}.")
            yield Fix(
                id="", slug=finding.slug, title=title, description=said,
                safety=SAFE, codemod="drop_unique",
                places=(DropUniqueArgs(file=file, names=entry["names"], module=module),),
                files=[file], expected=expected_effect(finding), expected_builds_removed=finding.extra_builds,
                expected_ms=finding.cost_ms,
            )
        for item in at_call_sites:
            how = "a wp.kernel(...) call" if item.made_by == "call" else "the project's kernel decorator"
            yield Fix(
                id="", slug=finding.slug,
                title=f"Build {item.kernel} in the shared module {item.module}",
                description=f"{item.kernel} ({item.file}:{item.line}) gets module=\"unique\" through {how}; "
                f"the named module {item.module} builds it with the other kernels instead.",
                safety=SAFE, codemod="call_site_argument",
                places=(CallSiteArgumentArgs(file=item.file, line=item.call_line, callee=item.callee,
                                             keyword="module", value=item.module),),
                files=[item.file], lines=[f"{item.file}:{item.call_line}"],
                expected=expected_effect(finding, builds=1), expected_builds_removed=1,
            )
        for (file, factory), entry in to_scope.items():
            module = entry["item"].module
            yield Fix(
                id="",
                slug=finding.slug,
                title=f"Define the stable kernels of {factory}() at module scope in one module",
                description=f"{factory}() made {', '.join(entry['kernels'])} with module=\"unique\" although they "
                f"capture nothing from it; at module scope in the named module {module} they build once, together.",
                safety=SAFE, codemod="kernels_to_module_scope",
                places=(KernelsToModuleScopeArgs(file=file, factory=factory, kernels=entry["kernels"], module=module),),
                files=[file], expected=expected_effect(finding), expected_builds_removed=finding.extra_builds,
                expected_ms=finding.cost_ms,
            )

    EXAMPLES = (
        Example(
            'factories called at import time make module="unique" kernels: one named module, one edit per file',
            _unique_kernel(captures=[], called_from="sim.py:20:<module>"),
            FIRED,
            fixes=(("drop_unique", SAFE),),
        ),
        Example(
            "stable unique kernels the run made but never built: no fix claims builds the run did not make",
            _unique_kernel(captures=[], called_from="sim.py:20:<module>", built=False),
            RULED_OUT,
            reason="integrate is never built by the run",
        ),
        Example(
            "the kernel captures the factory's argument, but the factory only runs at import time",
            _unique_kernel(captures=["op"], called_from="sim.py:20:<module>"),
            FIRED,
            fixes=(("drop_unique", SAFE),),
        ),
        Example(
            "a factory called after import makes a kernel that captures nothing: it moves to module scope",
            _unique_kernel(captures=[], called_from="sim.py:40:step"),
            FIRED,
            fixes=(("kernels_to_module_scope", SAFE),),
        ),
        Example(
            "a lone stable unique kernel has nothing to share a module with: left alone",
            _unique_kernel(captures=[], called_from="sim.py:20:<module>", calls=1),
            FIRED,
            fixes=(),
            declined="would be the only kernel of module sim",
        ),
        Example(
            "launched at block_dim=128 beside kernels launched at the default 256: a shared module would build twice",
            _transpose_beside(launched_at=128),
            FIRED,
            fixes=(),
            declined="is launched at block_dim [128], the kernels of sim at [256]",
        ),
        Example(
            "launched at block_dim=256, the default its module's other kernels get: the merge builds once",
            _transpose_beside(launched_at=256),
            FIRED,
            fixes=(("drop_unique", SAFE),),
        ),
        Example(
            "the same in a script run as `python sim.py`: its own module is __main__ in the run",
            _transpose_beside(launched_at=256, as_script=True),
            FIRED,
            fixes=(("drop_unique", SAFE),),
        ),
        Example(
            "the same on the CPU, whose builds record block_dim 1: the launches' own sizes still decide",
            _transpose_beside(launched_at=256, as_script=True, device="cpu"),
            FIRED,
            fixes=(("drop_unique", SAFE),),
        ),
        Example(
            "module-scope unique kernels of a file that sets no options: they join the file's own module",
            _reductions(),
            FIRED,
            fixes=(("drop_unique", SAFE),),
            places=((DropUniqueArgs(file="ops.py", names=["sum_k", "max_k", "sq_k"], module=""),),),
        ),
        Example(
            "the file's own module holds a kernel this run never builds: joining it would compile that kernel too, "
            "so they share a named module of their own",
            _reductions(plain_kernel=True),
            FIRED,
            fixes=(("drop_unique", SAFE),),
            places=((DropUniqueArgs(file="ops.py", names=["sum_k", "max_k", "sq_k"], module="ops.stable"),),),
        ),
        Example(
            "the file's module gets options at run time (forward_only()): they share a named module it cannot reach",
            _reductions(options_set_in="forward_only"),
            FIRED,
            fixes=(("drop_unique", SAFE),),
            places=((DropUniqueArgs(file="ops.py", names=["sum_k", "max_k", "sq_k"], module="ops.stable"),),),
        ),
        Example(
            "a plugin kernel made per request from runtime data keeps its module of its own",
            _unique_kernel(captures=["op"], called_from="sim.py:40:handle_request"),
            RULED_OUT,
        ),
        Example(
            "a kernel made only for the plugin kind the run asked for is optional: left alone",
            _unique_kernel(captures=[], called_from="sim.py:40:step", chosen_by=["kind"]),
            RULED_OUT,
        ),
        Example(
            "a generic kernel in a module of its own builds only the overloads launched: left alone",
            _unique_kernel(captures=[], called_from="sim.py:20:<module>", is_generic=True),
            RULED_OUT,
            reason="integrate is generic",
        ),
        Example(
            "an installed package's stable unique kernels are its own: ruled out, and said so (not 'runtime data'), "
            "the ones built named first",
            _installed_unique(),
            RULED_OUT,
            reason="body_inverses, check_inertia, apply_offsets are not the repository's code",
        ),
        Example(
            "a renamed factory kernel made by a wp.kernel(...) call: the call site gets the named module",
            _renamed_by_call(),
            FIRED,
            fixes=(("call_site_argument", SAFE),),
        ),
        Example(
            "a kernel with its own module_options keeps module=\"unique\": a shared module would change them",
            _renamed_by_call(module_options=Value('{"max_unroll": size}', is_constant=False)),
            FIRED,
            fixes=(),
            declined="sets its own module_options",
        ),
    )


def _why_none_stable(facts: UniqueKernels, outside: list[str]) -> str:
    """Each kind of unique kernel the run made, named, and why none of them can share a module."""
    kinds = [
        (outside, "not the repository's code (an installed package's, or generated): never edited"),
        ([k.kernel for k in facts.runtime_made], "made from runtime data (plugins, expressions)"),
        ([k.kernel for k in facts.optional], "made only on some runs (optional, left alone)"),
        ([k.kernel for k in facts.generic], "generic: its own module builds only the instances launched"),
        ([k.kernel for k in facts.unbuilt], "never built by the run (a fix claims only builds the run made)"),
    ]
    return "no stable unique kernel of the repository: " + "; ".join(
        f"{named(names)} {'is' if len(names) == 1 else 'are'} {why}" for names, why in kinds if names
    )


def _unbuilt_reason(unbuilt: list[UniqueKernel]) -> str:
    names = named(sorted({k.kernel for k in unbuilt}))
    return (f"{names} {'is' if len(unbuilt) == 1 else 'are'} stable by the source, but the run built none of "
            "their modules: no fix claims builds the run did not make (their isolation stays as written)")


def _static_kernel(inputs: Inputs, kernel_def):
    """The scanned def behind a traced kernel, joined on its code object's file and first line (not its name:
    factories rename kernels, and `wp.kernel(fn, ...)` or a project decorator makes them without `@wp.kernel`)."""
    if kernel_def.site is None:
        return None
    file = inputs.repo_file(kernel_def.site.file)
    return inputs.index.kernel_at(file, kernel_def.site.line) if file else None


def _entry(inputs: Inputs, kernel: KernelDef, made_here: list[TracedKernel]) -> UniqueKernel:
    """What propose needs of one unique kernel (`made_here`: the run's creations of it), and the named module it
    would share."""
    factory = inputs.index.factory_named(".".join(kernel.enclosing_functions)) if kernel.enclosing_functions else None
    return UniqueKernel(
        file=kernel.file,
        kernel=kernel.name,
        line=kernel.line,
        factory=kernel.enclosing_functions[-1] if kernel.enclosing_functions else None,
        python_module=_module_name(inputs, kernel),
        module_kind=kernel.module_kind,
        captures=list(kernel.captures),
        factory_params=[p.name for p in factory.parameters] if factory else [],
        called_at_module_scope=_created_at_module_scope(made_here),
        made_by=kernel.made_by,
        call_line=kernel.decorator_line,
        callee=kernel.decorator.split("(")[0].split(".")[-1],
        module_options=kernel.module_options.source if kernel.module_options else "",
        chosen_by=list(kernel.chosen_by),
        module=_shared_module(inputs, kernel),
        modules=sorted({d.module for d in made_here}),
        runtime_names=sorted({d.function for d in made_here} - {kernel.name}),
    )


def _shared_module(inputs: Inputs, kernel) -> str:
    """A module-scope kernel joins its file's own module when nothing sets that module's options; factory
    kernels, or a file whose module gets options, get `<python module>.stable`. A unique module never took the
    file's options: joining would give them to the kernel, and an options call that runs after its first
    launch (`forward_only()` in a reporting helper) would rebuild the shared module."""
    name = _module_name(inputs, kernel)
    reached = _options_reach(inputs, kernel.python_module) or _options_reach(inputs, name)
    if kernel.at_module_scope and not reached and not _unbuilt_neighbours(inputs, kernel.file):
        return name
    return f"{name}.stable"


def _module_name(inputs: Inputs, kernel) -> str:
    """The kernel's Python module as the run named it (`newton._src.geometry.inertia`, whatever the folders say),
    else as the scan does; a script's `__main__` keeps the scan's name, which a literal module name can carry."""
    name = inputs.python_module_of(kernel.file)
    return name if name and name != "__main__" else kernel.python_module


def _unbuilt_neighbours(inputs: Inputs, file: str) -> list[str]:
    """The file's own-module kernels when the run never built that module: joining it would compile them too, the
    isolation `module="unique"` gave (a finalize step that must not compile the file's mesh kernels)."""
    own = [k.name for k in inputs.index.kernels if k.file == file and k.module_kind == "default"]
    built = any(
        source.module_kind == "file" and inputs.repo_file(source.file) == file
        for build in inputs.report.trace.builds
        for source in build.kernel_sources
    )
    return [] if built else own


def _not_own_module(inputs: Inputs, file: str, own: str) -> str:
    """Why stable module-scope kernels do not join their file's own module."""
    unbuilt = _unbuilt_neighbours(inputs, file)
    if unbuilt:
        return (f"this run never builds it, and joining it would compile {', '.join(unbuilt)} too, which "
                'module="unique" keeps out')
    return f"{_options_setter(inputs, own)} sets its options, which these kernels never had"


def _options_setter(inputs: Inputs, python_module: str) -> str:
    """The code that sets this module's options, as a reviewer finds it: `forward_only() (reducers/ops.py:28)`."""
    calls = inputs.index.option_calls_for(python_module)
    if calls:
        call = calls[0]
        return f"{call.function}() ({call.file}:{call.line})" if call.function else f"{call.file}:{call.line}"
    change = next(c for c in inputs.report.trace.option_changes if c.target == python_module)
    return f"{change.site.file}:{change.site.line}" if change.site else "code of the run"


def _options_reach(inputs: Inputs, python_module: str) -> bool:
    """Some code of the repository, or of the run, sets options of this module: at module scope or later."""
    return bool(inputs.index.option_calls_for(python_module)) or any(
        change.target == python_module for change in inputs.report.trace.option_changes
    )


def _named(item: UniqueKernel) -> str:
    """`box (boxes.py:10, made as box_size_3_kernel, box_size_7_kernel)`: the def, and the names a factory gave it."""
    renamed = item.runtime_names
    return f"{item.kernel} ({item.file}:{item.line}" + (f", made as {', '.join(renamed)})" if renamed else ")")


def _optional_reason(item: UniqueKernel) -> str:
    where = f"{item.factory}()" if item.factory else item.file
    return (
        f"{_named(item)} is optional: {where} makes it only in a branch on "
        f"{', '.join(item.chosen_by)}, so only some runs build it; in a module every run builds, "
        "every run would compile it. Left alone"
    )


def _created_at_module_scope(made_here: list[TracedKernel]) -> bool:
    """Every creation of this kernel came from a factory call at import time (module scope): stable inputs."""
    callers = [d.site.callers()[1] for d in made_here if len(d.site.stack) > 1]
    return bool(callers) and all(caller.function == "<module>" for caller in callers)


def _without_partner(stable: list[UniqueKernel], inputs: Inputs) -> list[tuple[UniqueKernel, str]]:
    """Stable unique kernels a merge cannot help: nothing else would build in their named module, or what would
    is launched at another block size (the shared module would be built once per block size on CUDA).

    A launch that names no block_dim gets its module's (Warp's default, 256) on CUDA, and is counted so on the CPU
    too: a kernel the project launches at 128 would build its new module twice beside kernels launched without one.

    Example: `bin_counts`, the only kernel of histogram.py, launched with block_dim=256 -> alone."""
    built: dict[str, list[str]] = {}
    module_block_dim: dict[str, int] = {}
    for build in inputs.user_builds():
        built.setdefault(build.module, []).extend(build.kernels)
        if build.device.startswith("cuda"):  # a CPU build records block_dim 1, which says nothing of CUDA's
            module_block_dim[build.module] = int(build.options.get("block_dim") or WARP_BLOCK_DIM)
    block_dims: dict[str, set[int]] = {}
    for launch in inputs.report.trace.launches:
        size = launch.block_dim or module_block_dim.get(launch.module, WARP_BLOCK_DIM)
        block_dims.setdefault(launch.module, set()).add(size)
    own = _own_modules(inputs)
    alone = []
    for item in stable:
        named = own.get(item.file, item.module) if item.module == item.python_module else item.module
        sharing = [other for other in stable if other.module == item.module]
        kernels = sum(max(1, len(other.modules)) for other in sharing) + len(built.get(named, []))
        mine = {b for module in item.modules for b in block_dims.get(module, set())}
        theirs = {
            b for module in [named, *(m for o in sharing if o is not item for m in o.modules)]
            for b in block_dims.get(module, set())
        }
        if kernels < 2:
            alone.append((item, f"would be the only kernel of module {item.module}"))
        elif mine and theirs and mine != theirs:
            alone.append((item, f"is launched at block_dim {sorted(mine)}, the kernels of {item.module} at "
                                f"{sorted(theirs)}"))
    return alone


def _own_modules(inputs: Inputs) -> dict[str, str]:
    """Each repository file's own module by the name it had in the run, read from the builds' kernel sources (a
    script's module is `__main__`, not its file's name)."""
    own: dict[str, str] = {}
    for build in inputs.user_builds():
        source = module_source(build, inputs)
        if source is not None and source.kind == "file" and len(source.files) == 1:
            own.setdefault(source.files[0], build.module)
    return own


def _distinct(defs):
    seen = set()
    for d in defs:
        key = (d.site.file, d.site.line) if d.site else (None, d.function)
        if key not in seen:
            seen.add(key)
            yield d


def _is_unique_build(build, unique_keys: set[str]) -> bool:
    return bool(build.kernels) and all(k in unique_keys for k in build.kernels)
