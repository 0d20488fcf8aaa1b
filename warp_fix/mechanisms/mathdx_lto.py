"""CS-7: MathDx link-time-optimised code that may not pay for its build.

Turning MathDx off makes the build cheaper and may make the kernel slower (on the H200 an f16 tile GEMM ran
3.6x faster with it, an f32 one no faster), so the finding only names the modules and what their builds cost;
apply measures both ways. A module whose LTO builds come from several kernels is split by kernel instead:
each such kernel is tried in a module of its own without MathDx, so the kernels it pays for keep it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from codemods.specs import SplitByOptionsArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._attribution import (
    LIBRARY,
    NoTarget,
    OptionsTarget,
    module_options_target,
    module_source,
)
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import (
    fired,
    in_repo,
    module_scope_options,
    not_applicable,
    option_origin,
    ruled_out,
)
from warp_fix.model import CONSENT, FIRED, NOT_APPLICABLE, RULED_OUT, Finding, Fix, NotProposed, Proposal
from warp_fix.wording import counted

# Warp's MathDx builders (warp._src.build.build_lto_<kind>) and the option that turns each one off.
OPTION_OF_KIND = {"dot": "enable_mathdx_gemm", "solver": "enable_mathdx_solver", "fft": "enable_mathdx_fft"}


@dataclass(frozen=True)
class LtoKernel:
    """The MathDx builds one kernel's code generation asked for."""

    options: list[str] = field(default_factory=list)  # the options that turn its builders off
    ms: float = 0.0


@dataclass(frozen=True)
class LtoModule:
    """A module that ran MathDx builders: its LTO builds, the options that would turn them off, and its cost."""

    module: str
    lto_builds: int
    module_ms: float
    native_ms: float
    options: list[str]
    kernels: dict[str, LtoKernel]  # kernel key -> its builds, where the tracer recorded the kernel


@dataclass(frozen=True)
class LtoModules:
    lto_artifacts: int
    lto_builds: int
    native_share: float  # of cold module time in the native compiler
    modules: list[LtoModule]


class MathdxLto(Mechanism[LtoModules]):
    SLUG = "mathdx-lto"
    CS = "CS-7"
    TITLE = "MathDx link-time-optimised code that may not pay for its build"
    SAFETY = (CONSENT,)
    CODEMODS = ("module_options", "split_by_options")

    def diagnose(self, inputs: Inputs) -> Finding[LtoModules]:
        if inputs.on_cpu_only:
            return not_applicable(self.SLUG, self.TITLE, "CPU run: MathDx LTO is CUDA-only")
        summary = inputs.report.summary
        events = [e for e in inputs.report.trace.lto_builds if e.compiled is not False]
        if summary is None or (summary.lto_artifacts == 0 and not events):
            return ruled_out(self.SLUG, self.TITLE, "no LTO artifact was produced")
        modules = _lto_modules(inputs)
        count = counted(len(events), "MathDx LTO build") if events else f"{summary.lto_artifacts} LTO artifacts"
        native, module = summary.native_compile_ms.median, summary.cold_module_ms.median
        share = native / module if module else 1.0
        if share >= 0.5:
            return ruled_out(
                self.SLUG,
                self.TITLE,
                f"{count}, but {share:.0%} of module time is "
                "the native compiler: linking does not dominate",
            )
        names = ", ".join(m.module for m in modules) or "modules the tracer could not attribute"
        return fired(
            self.SLUG,
            self.TITLE,
            f"{count} ({names}); only {share:.0%} of module time in the native "
            "compiler: measure the build and the steady-state kernel time both ways",
            cost_ms=module - native,
            facts=LtoModules(summary.lto_artifacts, len(events), share, modules),
        )

    def propose(self, finding: Finding[LtoModules], inputs: Inputs) -> Iterator[Proposal]:
        """One consent fix per repository module built with MathDx: its module option off, measured both ways;
        per kernel when several kernels of the module link MathDx code."""
        for item in finding.facts.modules:
            if len(item.kernels) > 1:
                yield from _splits(finding, item, inputs)
                continue
            module, options = item.module, item.options
            target = _options_target(module, inputs)
            if isinstance(target, NoTarget):
                yield NotProposed(finding.slug, f"{module} builds MathDx code but {target.reason}")
                continue
            file = target.file
            if not options:
                yield NotProposed(finding.slug, f"{module}: the MathDx builders that ran were not recorded")
                continue
            outside = item.module_ms - item.native_ms
            origins = "; ".join(f"{o} now from {option_origin(inputs, module, o)}" for o in options)
            yield Fix(
                id="", slug=finding.slug, title=f"Build {module} without MathDx",
                description=f"{module} links {counted(item.lto_builds, 'MathDx LTO build')}; "
                f"{', '.join(f'{o}=False' for o in options)} at module scope trades that build time for slower "
                "kernels (Warp's own tile code instead of cuBLASDx/cuSolverDx/cuFFTDx). apply measures the build "
                f"and the steady-state kernel time both ways; keeping it needs consent ({origins}).",
                safety=CONSENT, codemod="module_options",
                places=(target.place(dict.fromkeys(options, False), replace=True),),
                files=[file],
                expected=f"{outside:.0f} ms of the module's {item.module_ms:.0f} ms build is outside the native "
                "compiler (mostly LTO); kernel time cost: measured by apply",
                expected_ms=outside, allow_options=list(options), measure_kernels=True, targets=[module],
            )

    EXAMPLES = (
        Example(
            "a CUDA module of the repository links two MathDx GEMMs; 10% of its build is the native compiler",
            case.run(
                builds=[case.build("sim", device="cuda:0", ms=5000.0, native_ms=500.0, lto_kinds=["dot", "dot"])],
                source=case.index(files=["sim.py"]),
            ),
            FIRED,
            fixes=(("module_options", CONSENT),),
        ),
        Example(
            "a script's own module (`__main__`, as Warp's tile MLP example) links MathDx GEMMs: the script is edited",
            case.run(
                builds=[case.sourced(
                    case.build("__main__", device="cuda:0", ms=130000.0, native_ms=9000.0, lto_kinds=["dot"]),
                    case.kernel_source("compute", "example_tile_mlp.py", 76),
                )],
                source=case.index(files=["example_tile_mlp.py"]),
                command=("python", "example_tile_mlp.py"),
            ),
            FIRED,
            fixes=(("module_options", CONSENT),),
        ),
        Example(
            "an f16 and an f32 GEMM of one module each link MathDx code: each is tried without it, in a module of "
            "its own",
            case.run(
                builds=[case.sourced(
                    case.build("spectra.gemm", device="cuda:0", ms=36000.0, native_ms=900.0, lto_kinds=["dot", "dot"]),
                    case.kernel_source("gemm16", "spectra/gemm.py", 14),
                    case.kernel_source("gemm32", "spectra/gemm.py", 26),
                )],
                lto_builds=[case.lto("spectra.gemm", "gemm16", ms=23000.0), case.lto("spectra.gemm", "gemm32")],
                source=case.index(
                    files=["spectra/gemm.py"],
                    option_calls=[case.option_call("spectra/gemm.py", 5, {"enable_mathdx_gemm": True})],
                ),
            ),
            FIRED,
            fixes=(("split_by_options", CONSENT), ("split_by_options", CONSENT)),
        ),
        Example(
            "two kernels of a module link MathDx code, one of them made inside a function: only the other is split",
            case.run(
                builds=[case.sourced(
                    case.build("spectra.gemm", device="cuda:0", ms=36000.0, native_ms=900.0, lto_kinds=["dot", "dot"]),
                    case.kernel_source("gemm16", "spectra/gemm.py", 14),
                    replace(case.kernel_source("gemm32", "spectra/gemm.py", 26), qualname="make.<locals>.gemm32"),
                )],
                lto_builds=[case.lto("spectra.gemm", "gemm16"), case.lto("spectra.gemm", "gemm32")],
                source=case.index(files=["spectra/gemm.py"]),
            ),
            FIRED,
            fixes=(("split_by_options", CONSENT),),
            declined="defined inside a function",
        ),
        Example(
            "the module that links MathDx code belongs to an installed library",
            case.run(
                builds=[case.build("fluidlib.ops", device="cuda:0", ms=5000.0, native_ms=500.0, lto_kinds=["fft"])],
                source=case.index(library_files=["fluidlib/ops.py"]),
            ),
            FIRED,
            fixes=(),
            declined="not a file of the repository",
        ),
        Example(
            "LTO artifacts, but the native compiler takes most of the module time",
            case.run(builds=[case.build("sim", device="cuda:0", ms=1000.0, native_ms=900.0, lto_kinds=["dot"])]),
            RULED_OUT,
        ),
        Example("a CPU run: MathDx is CUDA-only", case.run(builds=[case.build("sim")]), NOT_APPLICABLE),
    )


def _lto_modules(inputs: Inputs) -> list[LtoModule]:
    """Per module that ran MathDx builders: LTO builds, the options that would turn them off, and its cost.

    The build_lto_* calls of the run are counted as events where the tracer recorded them (a symbol linked
    twice counts twice, one taken from Warp's LTO cache not at all); else the per-build counts.
    """
    events = [e for e in inputs.report.trace.lto_builds if e.compiled is not False]
    found: dict[str, dict] = {}
    for build in inputs.user_builds():
        kinds = [e.kind for e in events if e.module == build.module] if events else build.lto_kinds
        if not kinds and not build.lto_builds:
            continue
        entry = found.setdefault(
            build.module,
            {
                "module": build.module, "lto_builds": 0, "module_ms": 0.0, "native_ms": 0.0, "options": [],
                "kernels": {},
            },
        )
        for event in events:
            option = OPTION_OF_KIND.get(event.kind)
            if event.module == build.module and event.kernel and option:
                used = entry["kernels"].setdefault(event.kernel, {"options": [], "ms": 0.0})
                used["ms"] += event.ms
                if option not in used["options"]:
                    used["options"].append(option)
        entry["lto_builds"] = len(kinds) if events else entry["lto_builds"] + build.lto_builds
        entry["module_ms"] += build.module_ms
        entry["native_ms"] += build.native_ms
        for kind in kinds:
            option = OPTION_OF_KIND.get(kind)
            if option and option not in entry["options"]:
                entry["options"].append(option)
    modules = [
        LtoModule(**{**entry, "kernels": {key: LtoKernel(**used) for key, used in entry["kernels"].items()}})
        for entry in found.values()
    ]
    return sorted(modules, key=lambda m: -m.module_ms)


def _splits(finding: Finding[LtoModules], item: LtoModule, inputs: Inputs) -> Iterator[Proposal]:
    """Per kernel that links MathDx code: the kernel alone in a named module without MathDx (the module's
    other options carried), measured both ways; kept only where the kernels lose nothing."""
    module = item.module
    build = next(b for b in inputs.user_builds() if b.module == module)
    sources = {k.key: k for k in build.kernel_sources}
    for key, used in item.kernels.items():
        source = sources.get(key)
        if source is None or not in_repo(inputs, source.file):
            yield NotProposed(finding.slug, f"{module}: kernel {key} links MathDx code but is not a kernel of the "
                              "repository the tracer could attribute")
            continue
        if source.module_kind != "file" or "<locals>" in source.qualname:
            where = "is defined inside a function" if "<locals>" in source.qualname else (
                f"is in a {source.module_kind} module, not its file's own")
            yield NotProposed(finding.slug, f"{module}: {source.function}() ({source.file}:{source.line}) {where}: "
                              "not moved to a module of its own")
            continue
        python_module = inputs.index.python_module_of(source.file) or module
        options = {**module_scope_options(inputs, python_module), **dict.fromkeys(used.options, False)}
        target = f"{python_module}_without_mathdx"
        off = ", ".join(f"{o}=False" for o in used.options)
        yield Fix(
            id="", slug=finding.slug, title=f"Build {source.function} without MathDx, in a module of its own",
            description=f"{len(item.kernels)} kernels of {module} link MathDx code. {source.function}() "
            f"({source.file}:{source.line}) moves to the named module {target} with {off} (the module's own "
            "options carried); the others keep MathDx. apply measures the build and the steady-state kernel "
            "time both ways and keeps the move only if the kernels lose nothing; it needs consent.",
            safety=CONSENT, codemod="split_by_options",
            places=(SplitByOptionsArgs(file=source.file, kernels=[source.function], module=target, options=options),),
            files=[source.file], lines=[f"{source.file}:{source.line}"],
            expected=f"{used.ms:.0f} ms of MathDx LTO builds for {source.function}; kernel time cost: measured "
            "by apply",
            expected_ms=used.ms, allow_options=list(used.options), measure_kernels=True,
        )


def _options_target(module: str, inputs: Inputs) -> OptionsTarget | NoTarget:
    """Where the module's options are set, from its kernels' code objects (a script's `__main__`, a named or
    unique module); by its Python module's file for reports that predate kernel sources."""
    build = next((b for b in inputs.user_builds() if b.module == module), None)
    source = module_source(build, inputs) if build is not None else None
    if source is None:
        file = inputs.index.file_of_module(module)
        if file is not None and in_repo(inputs, file):
            return OptionsTarget(file)
        return NoTarget("is not a file of the repository")
    if source.kind == LIBRARY:
        return NoTarget("is not a file of the repository")
    return module_options_target(module, source, inputs)
