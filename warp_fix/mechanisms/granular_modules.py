"""CS-4: small modules with the same lifecycle each pay a whole module build; two or three are enough to merge."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from codemods.specs import MergeModulesArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    builds_of,
    expected_effect,
    fired,
    module_scope_options,
    ms,
    ruled_out,
    runtime,
)
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.report import KernelSource, ModuleBuild
from warp_fix.scan.index import KernelDef

MIN_MODULES = 2
SMALL_KERNELS = 3  # a module of at most this many kernels is small: its per-module overhead is worth saving
_IDENTITY_FREE = {"block_dim"}


def _tiny_modules(*names: str, options_in: str | None = None, later: str | None = None) -> Inputs:
    """A run that builds one module per `ops/<name>.py`, each holding one kernel `<name>`, all first launched
    from `pipeline.process`; the module `later` is first launched from `pipeline.export` instead."""
    files = [f"ops/{name}.py" for name in names]
    calls = [case.option_call(options_in, 3, {"fast_math": False})] if options_in else []
    builds = []
    for name, file in zip(names, files):
        build = case.build(f"ops.{name}", kernels=[f"ops.{name}.{name}"])
        build.site = case.site("pipeline.py", 20, "export" if name == later else "process")
        build.kernel_sources = [_source(name, file)]
        builds.append(build)
    return case.run(
        builds=builds,
        source=case.index(
            files=files, kernels=[case.kernel(name, file) for name, file in zip(names, files)], option_calls=calls
        ),
    )


def _source(name: str, file: str) -> KernelSource:
    return KernelSource(
        key=name, file=file, line=9, function=name, qualname=name, module_kind="file", options={},
        enable_backward=True, adjoint=True,
    )


@dataclass(frozen=True)
class SmallModules:
    """The small modules of one lifecycle (same first-build place, device, options and block size)."""

    kernels: list[list[str]]  # [file, kernel name] of each of their kernels
    modules: list[str]


class GranularModules(Mechanism[SmallModules]):
    SLUG = "granular-modules"
    CS = "CS-4"
    TITLE = "many tiny modules, each built separately"
    SAFETY = (SAFE,)
    CODEMODS = ("merge_modules",)

    def diagnose(self, inputs: Inputs) -> Finding[SmallModules]:
        built = Counter((b.module, b.device) for b in inputs.user_builds())
        groups: dict[tuple, dict] = {}
        for build in inputs.user_builds():
            kernels = _repo_kernels(inputs, build)
            if built[(build.module, build.device)] != 1 or build.generics or kernels is None:
                continue
            if len(kernels) > SMALL_KERNELS or any(k.chosen_by for k in kernels):
                continue
            groups.setdefault(_lifecycle(build), {})[build.module] = (build, kernels)
        group = max(groups.values(), key=len, default={})
        if len(group) < MIN_MODULES:
            return ruled_out(
                self.SLUG,
                self.TITLE,
                f"fewer than {MIN_MODULES} small modules of the repository are built once each at the same point "
                "of the run with the same device, options and block size",
            )
        builds = [build for build, _ in group.values()]
        kernels = [[k.file, k.name] for _, found in group.values() for k in found]
        cost = sum(b.module_ms for b in builds) - max(b.module_ms for b in builds)
        where = builds[0].site.function if builds[0].site else "the same place"
        return fired(
            self.SLUG,
            self.TITLE,
            f"{len(group)} small modules with one lifecycle (first built from {where}, same device, options and "
            "block size), built one by one",
            evidence=[runtime(f"{b.module}: {len(b.kernels)} kernel(s), {ms(b.module_ms)}", b.site, inputs)
                      for b in builds],
            cost_ms=cost,
            extra_builds=len(group) - 1,
            all_builds=builds_of(inputs, group),
            facts=SmallModules(kernels, sorted(group)),
        )

    def propose(self, finding: Finding[SmallModules], inputs: Inputs) -> Iterator[Proposal]:
        index = inputs.index
        kernels = finding.facts.kernels
        with_options = sorted({f for f, _ in kernels if module_scope_options(index, index.python_module_of(f) or "")})
        if with_options:
            yield NotProposed(finding.slug, f"the small modules carry their own options ({', '.join(with_options)}): "
                              "merging them would change those options")
            return
        packages = [index.python_module_of(file) or "" for file, _ in kernels]
        common = os.path.commonprefix([p.split(".") for p in packages]) or ["app"]
        module = ".".join(common) + ".kernels"
        if index.file_of_module(module):  # a Python module of that name would share (and change) the module
            module += "_merged"
        yield Fix(
            id="",
            slug=finding.slug,
            title=f"Build the {len(finding.facts.modules)} same-lifecycle modules as one module {module}",
            description=f"{', '.join(finding.facts.modules)} are built at the same point of every run with the "
            f"same device, options and block size, each separately; one named module {module} builds their "
            f"{len(kernels)} kernels at once (kernel names kept).",
            safety=SAFE,
            codemod="merge_modules",
            places=(MergeModulesArgs(kernels=kernels, module=module),),
            files=sorted({file for file, _ in kernels}),
            expected=expected_effect(finding),
            expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )

    EXAMPLES = (
        Example(
            "two one-kernel files of one package, same options, built one after the other",
            _tiny_modules("add", "mul"),
            FIRED,
            fixes=(("merge_modules", SAFE),),
        ),
        Example(
            "one of the small modules sets its own options: merging would change them",
            _tiny_modules("add", "mul", "sub", options_in="ops/sub.py"),
            FIRED,
            fixes=(),
            declined="carry their own options",
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


def _lifecycle(build: ModuleBuild) -> tuple:
    """Modules built at the same point of the run (the user function whose launch loaded them), on one device,
    with the same options and block size, live and die together."""
    where = (build.site.file, build.site.function) if build.site else None
    return build.device, _options_key(build.options), build.block_dim, where


def _repo_kernels(inputs: Inputs, build: ModuleBuild) -> list[KernelDef] | None:
    """The scanned defs of every kernel of a module of the repository (by the tracer's code-object sites); None for
    a library's module, a unique one, or one whose sources were not recorded."""
    if not build.kernel_sources or any(s.module_kind == "unique" for s in build.kernel_sources):
        return None
    kernels = []
    for source in build.kernel_sources:
        file = inputs.repo_file(source.file)
        kernel = inputs.index.kernel_at(file, source.line) if file else None
        if kernel is None or not kernel.in_repo or kernel.module_kind not in ("default", "literal"):
            return None
        kernels.append(kernel)
    return kernels
