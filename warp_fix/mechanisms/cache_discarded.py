"""CS-2: the kernel cache is thrown away, so every start is a cold start."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from codemods.specs import FileLine, KeepCacheArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import fired, ms, ruled_out, runtime, static
from warp_fix.model import FIRED, RULED_OUT, SAFE, Evidence, Finding, Fix, NotProposed, Proposal
from warp_fix.report import CacheDirEvidence, CacheOp, Rebuild, Report, Trace
from warp_fix.scan.index import CacheOperation, Value
from warp_fix.wording import counted

CALLED_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")  # `helper(...)`: the name of the helper


@dataclass(frozen=True)
class CacheStatement:
    """A statement of the repository that ran and cleared or bypassed the cache."""

    file: str
    line: int
    kind: str  # `clear_kernel_cache`, `config.kernel_cache_dir`, ...
    function: str | None


@dataclass(frozen=True)
class MaintenancePath:
    """A cache clear kept: guarded or named for maintenance, or not run at all."""

    file: str
    line: int
    function: str | None
    ran: bool = False  # in the measured run: its guard let it (the command asked for a clear)
    guard: str | None = None  # the condition that makes it maintenance (`args.rebuild`), if any


@dataclass(frozen=True)
class DiscardedCache:
    sites: list[CacheStatement]  # ran in the measured run, not maintenance: each is removed
    elsewhere: list[str]  # "path:line clear_kernel_cache": statements outside the repository that ran
    maintenance: list[MaintenancePath]
    helpers: list[str]  # functions that make the per-run cache directory
    warm_builds: int  # modules the warm run still compiled
    warm_ms: float
    cold_rebuilds: int  # modules compiled again in the cold run after a clear
    lto_relinks: int  # MathDx LTO symbols linked again after a clear
    cold_ms: float


class CacheDiscarded(Mechanism[DiscardedCache]):
    SLUG = "cache-discarded"
    CS = "CS-2"
    TITLE = "compiled kernels thrown away, so every start compiles again"
    SAFETY = (SAFE,)
    CODEMODS = ("keep_cache",)

    def diagnose(self, inputs: Inputs) -> Finding[DiscardedCache]:
        report = inputs.report
        summary = report.summary
        per_run = _per_run_cache_dir(report)
        executed: dict[tuple[str, int], str] = {}
        helpers: set[str] = set()
        evidence = []
        if per_run:
            evidence.append(Evidence("runtime", per_run))
        harmless: set[tuple[str | None, int]] = set()  # ran, but did not defeat the cache (a lasting directory)
        for op in report.trace.cache_ops:
            if op.kind == "kernel_cache_dir" and not _destroys(op, report):
                if op.site is not None:
                    harmless.add((inputs.repo_file(op.site.file), op.site.line))
                continue
            evidence.append(runtime(f"{op.kind}({'' if op.value is None else op.value}) ran", op.site, inputs))
            if op.site is not None and (file := inputs.repo_file(op.site.file)):
                executed[(file, op.site.line)] = op.kind
        incidental, maintenance = [], []
        unattributed = {op.kind for op in report.trace.cache_ops if op.site is None}
        functions_ran = _functions_that_ran(inputs)
        for operation in inputs.index.cache_operations:
            if not inputs.scope.in_project(operation):
                continue
            # a setting the tracer saw without its line (an environment variable) ran if its function ran
            ran = (operation.file, operation.line) in executed or (
                operation.kind.removeprefix("env.") in unattributed
                and (operation.file, operation.function) in functions_ran
            )
            if ran and inputs.scope.maintenance(operation, ran) is None:
                incidental.append(operation)
                helpers.update(_helper_of(operation))
            elif (operation.file, operation.line) not in harmless:
                maintenance.append(operation)
                where = "guarded maintenance path" if ran else "maintenance path, not in the measured run"
                evidence.append(static(f"{operation.kind} kept: {where}", operation.file, operation.line))
        cleared = inputs.rebuilds_because("cache-cleared")
        for rebuild in cleared:
            for reason in rebuild.reasons:
                if reason.kind == "cache-cleared":
                    evidence.append(runtime(f"{rebuild.module}: {reason.detail}", reason.site, inputs))
        relinks = lto_relinks(report.trace)
        rebuilt = [r for r in cleared if not _relink_only(r)]  # the module itself compiled again
        cold_cost = sum(r.module_ms for r in cleared)
        warm = summary.warm_builds if summary else 0
        if not warm and not incidental and not cleared:
            return ruled_out(
                self.SLUG, self.TITLE, "the warm run compiled nothing: the cache is reused", evidence=evidence
            )
        warm_cost = summary.warm_module_ms.median if summary else 0.0
        parts = []
        if warm:
            parts.append(f"the warm run still compiled {counted(warm, 'module')} ({ms(warm_cost)})")
        if cleared:
            cold = summary.cold_module_ms.median if summary else 0.0
            redone = [f"compile {counted(len(rebuilt), 'module')} again"] if rebuilt else []
            redone += [f"link {counted(relinks, 'MathDx LTO build')} again"] if relinks else []
            parts.append(
                f"a cache clear in the run made the cold run {' and '.join(redone) or 'build again'}"
                f" ({ms(cold_cost)} of {ms(cold)} cold module work)"
            )
        if not parts:
            parts.append(f"{counted(len(incidental), 'cache-destroying statement')} ran")
        if per_run:
            parts.append("the kernel cache directory was per-run")
        return fired(
            self.SLUG,
            self.TITLE,
            "; ".join(parts),
            evidence=evidence,
            cost_ms=warm_cost + cold_cost,
            extra_builds=warm + len(cleared),
            facts=DiscardedCache(
                sites=[CacheStatement(o.file, o.line, o.kind, o.function) for o in incidental],
                elsewhere=[
                    f"{op.site.file}:{op.site.line} {op.kind}"
                    for op in report.trace.cache_ops
                    if op.site is not None and not inputs.repo_file(op.site.file)
                ],
                maintenance=[
                    MaintenancePath(o.file, o.line, o.function, (o.file, o.line) in executed, o.maintenance_guard)
                    for o in maintenance
                ],
                helpers=sorted(helpers),
                warm_builds=warm,
                warm_ms=warm_cost,
                cold_rebuilds=len(rebuilt),
                lto_relinks=relinks,
                cold_ms=cold_cost,
            ),
        )

    def propose(self, finding: Finding[DiscardedCache], inputs: Inputs) -> Iterator[Proposal]:
        """One fix for every statement that ran: removing only some of them leaves the cache discarded."""
        facts = finding.facts
        sites = sorted({(site.file, site.line) for site in facts.sites})
        asked = [m for m in facts.maintenance if m.ran]
        if not sites and asked:
            where = ", ".join(f"{m.file}:{m.line}" + (f" (under `{m.guard}`)" if m.guard else "") for m in asked)
            yield NotProposed(
                finding.slug,
                f"the cache clear at {where} ran because the measured command asked for it: a deliberate cold "
                "start, kept; measure the command without that option to see its warm start",
            )
            return
        if not sites and facts.elsewhere:
            yield NotProposed(
                finding.slug,
                f"the cache is discarded by code outside the repository that the measured command runs "
                f"({', '.join(facts.elsewhere)}): nothing of the project to change; if an option of the command "
                "asks for it, measure without that option",
            )
            return
        if not sites:
            yield NotProposed(
                finding.slug,
                "the cache is discarded, but no statement in the repository was seen doing "
                "it in the measured run (an environment setting?)",
            )
            return
        protected = sorted({m.function for m in facts.maintenance if m.function})
        files = sorted({file for file, _ in sites})
        args = KeepCacheArgs(
            sites=tuple(FileLine(file, line) for file, line in sites),
            protected_functions=protected,
            helpers=facts.helpers or None,
        )
        yield Fix(
            id="",
            slug=finding.slug,
            title="Keep Warp's kernel cache between runs",
            description="Removes statements in the run path that clear or bypass Warp's kernel cache, so a "
            "second start reuses what the first compiled."
            + (f" Maintenance paths ({', '.join(protected)}) keep clearing." if protected else ""),
            safety=SAFE,
            codemod="keep_cache",
            places=(args,),
            files=files,
            lines=[f"{file}:{line}" for file, line in sites],
            expected=_expected(facts),
            expected_builds_removed=finding.extra_builds,
            expected_ms=finding.cost_ms,
        )

    EXAMPLES = (
        Example(
            "CUDA_CACHE_DISABLE set in a runtime helper that ran (its launch is traced), without a line of its own",
            case.run(
                builds=[case.build("sim")],
                launches=[case.launch("step", "sim", site=case.site("sim.py", 30, "run", ["rt.py:14:start"]))],
                cache_ops=[case.cache_op("CUDA_CACHE_DISABLE", "1")],
                warm_builds=1,
                warm_module_ms=100.0,
                source=case.index(
                    files=["rt.py", "sim.py"],
                    cache_operations=[
                        CacheOperation(file="rt.py", line=12, function="start", kind="env.CUDA_CACHE_DISABLE"),
                    ],
                ),
            ),
            FIRED,
            fixes=(("keep_cache", SAFE),),
        ),
        Example(
            "a clear at start ran; the clear in a rebuild() maintenance function did not",
            case.run(
                builds=[case.build("app")],
                cache_ops=[case.cache_op("clear_kernel_cache", site=case.site("app.py", 5))],
                warm_builds=1,
                warm_module_ms=100.0,
                source=case.index(
                    files=["app.py"],
                    cache_operations=[
                        CacheOperation(file="app.py", line=5, kind="clear_kernel_cache"),
                        CacheOperation(file="app.py", line=9, function="rebuild", kind="clear_kernel_cache"),
                    ],
                ),
            ),
            FIRED,
            fixes=(("keep_cache", SAFE),),
        ),
        Example(
            "the measured command passes --clear-cache (mujoco_warp's testspeed has one): the clear it asked for stays",
            case.run(
                builds=[case.build("__main__")],
                cache_ops=[case.cache_op("clear_kernel_cache", site=case.site("bench.py", 25, "main"))],
                warm_builds=1,
                warm_module_ms=100.0,
                source=case.index(
                    files=["bench.py"],
                    cache_operations=[
                        CacheOperation(file="bench.py", line=25, function="main", kind="clear_kernel_cache",
                                       maintenance_guard="args.clear_cache"),
                    ],
                ),
            ),
            FIRED,
            fixes=(),
            declined="bench.py:25 (under `args.clear_cache`) ran because the measured command asked for it",
        ),
        Example(
            "an installed tool clears the cache (mujoco_warp's testspeed run with --clear_warp_cache from a package "
            "on PYTHONPATH): nothing of the project to change",
            case.run(
                builds=[case.build("mujoco_warp._src.forward")],
                cache_ops=[
                    case.cache_op("clear_kernel_cache", site=case.site("/opt/py/mujoco_warp/testspeed.py", 157))
                ],
                warm_builds=1,
                warm_module_ms=100.0,
                source=case.index(files=["sim.py"]),
            ),
            FIRED,
            fixes=(),
            declined="outside the repository that the measured command runs (/opt/py/mujoco_warp/testspeed.py:157",
        ),
        Example(
            "a helper of the project points kernel_cache_dir at a mkdtemp() directory; the runs show it per-run",
            case.run(
                builds=[case.build("heatgrid.solver")],
                cache_ops=[
                    case.cache_op(
                        "kernel_cache_dir", "/home/u/.scratch/heatgrid-1",
                        site=case.site("heatgrid/env.py", 13, "use_private_kernel_cache"),
                    )
                ],
                cache_dirs=CacheDirEvidence(
                    cold="/home/u/.scratch/heatgrid-1", warm="/home/u/.scratch/heatgrid-2",
                    cold_exists_after=False, warm_exists_after=False, per_run=True,
                ),
                warm_builds=1,
                warm_module_ms=100.0,
                source=case.index(
                    files=["heatgrid/env.py"],
                    cache_operations=[
                        CacheOperation(
                            file="heatgrid/env.py", line=13, function="use_private_kernel_cache",
                            kind="config.kernel_cache_dir", value=Value("path", False),
                        )
                    ],
                ),
            ),
            FIRED,
            fixes=(("keep_cache", SAFE),),
        ),
        Example(
            "a per-run directory set in one file and a clear at start in another: one fix for both",
            case.run(
                builds=[case.build("app.sim")],
                cache_ops=[
                    case.cache_op("kernel_cache_dir", "/tmp/app-1", site=case.site("app/env.py", 6)),
                    case.cache_op("clear_kernel_cache", site=case.site("app/__main__.py", 9, "main")),
                ],
                cache_dirs=CacheDirEvidence(
                    cold="/tmp/app-1", warm="/tmp/app-2", cold_exists_after=False, warm_exists_after=False,
                    per_run=True,
                ),
                warm_builds=1,
                warm_module_ms=100.0,
                source=case.index(
                    files=["app/env.py", "app/__main__.py"],
                    cache_operations=[
                        CacheOperation(file="app/env.py", line=6, kind="config.kernel_cache_dir"),
                        CacheOperation(file="app/__main__.py", line=9, function="main", kind="clear_kernel_cache"),
                    ],
                ),
            ),
            FIRED,
            fixes=(("keep_cache", SAFE),),
            places=((KeepCacheArgs(sites=(FileLine("app/__main__.py", 9), FileLine("app/env.py", 6))),),),
        ),
        Example(
            "a fixed kernel_cache_dir under /tmp that the next run reuses does not discard anything",
            case.run(
                builds=[case.build("app")],
                cache_ops=[case.cache_op("kernel_cache_dir", "/tmp/app-kernels", site=case.site("app.py", 4))],
                cache_dirs=CacheDirEvidence(
                    cold="/tmp/app-kernels", warm="/tmp/app-kernels", cold_exists_after=True, warm_exists_after=True,
                    per_run=False,
                ),
                source=case.index(
                    files=["app.py"],
                    cache_operations=[CacheOperation(file="app.py", line=4, kind="config.kernel_cache_dir")],
                ),
            ),
            RULED_OUT,
        ),
        Example(
            "clear_lto_cache() between two stages makes the second module link the same MathDx GEMM again",
            case.run(
                builds=[
                    case.build("mlp.encoder", device="cuda:0", lto_kinds=["dot"]),
                    case.build("mlp.decoder", device="cuda:0", lto_kinds=["dot"]),
                ],
                rebuilds=[
                    case.rebuild(
                        "mlp.decoder", "cache-cleared",
                        "MathDx LTO dot_16_16_16 compiled again (23000 ms): clear_lto_cache() in the run threw "
                        "away its first link", site=case.site("mlp/__main__.py", 15, "infer"), ms=23000.0,
                        lto_symbol="dot_16_16_16",
                    )
                ],
                cache_ops=[case.cache_op("clear_lto_cache", site=case.site("mlp/__main__.py", 15, "infer"))],
                source=case.index(
                    files=["mlp/__main__.py"],
                    cache_operations=[
                        CacheOperation(file="mlp/__main__.py", line=15, function="infer", kind="clear_lto_cache")
                    ],
                ),
            ),
            FIRED,
            fixes=(("keep_cache", SAFE),),
        ),
        Example(
            "the warm run compiles, but no statement of the repository discards the cache",
            case.run(builds=[case.build("app")], warm_builds=1, warm_module_ms=100.0),
            FIRED,
            fixes=(),
            declined="no statement in the repository",
        ),
        Example(
            "the warm run compiles nothing and the only clear is a maintenance path",
            case.run(
                builds=[case.build("app")],
                source=case.index(
                    files=["app.py"],
                    cache_operations=[
                        CacheOperation(file="app.py", line=9, function="rebuild", kind="clear_kernel_cache")
                    ],
                ),
            ),
            RULED_OUT,
        ),
    )


def _functions_that_ran(inputs: Inputs) -> set[tuple[str | None, str | None]]:
    """(repo file, function) of every frame the run's recorded events passed through: a function some statement of
    which ran, whatever the tracer could not attribute to a line."""
    trace = inputs.report.trace
    events = [
        *trace.launches, *trace.option_changes, *trace.cache_ops, *trace.kernel_defs, *trace.overloads,
        *trace.tapes, *trace.load_calls, *trace.gradient_uses,
    ]
    ran = set()
    for site in (event.site for event in events if event.site is not None):
        for frame in (site, *site.callers()):
            ran.add((inputs.repo_file(frame.file), frame.function))
    return ran


def _per_run_cache_dir(report: Report) -> str:
    """What the runs themselves showed about the kernel cache directory ("" unless it was per-run)."""
    evidence = report.cache_dir_evidence
    if evidence is None or not evidence.per_run:
        return ""
    if evidence.cold != evidence.warm:
        return f"the cold run compiled into {evidence.cold}, the warm run into {evidence.warm}"
    return f"{evidence.cold} was gone once the cold run exited"


def _destroys(op: CacheOp, report: Report) -> bool:
    """A `kernel_cache_dir` assignment defeats the cache when the runs proved the directory per-run.

    Reports from before the evidence was recorded fall back to how the path looks.
    """
    if report.cache_dir_evidence is not None:
        return report.cache_dir_evidence.per_run
    return isinstance(op.value, str) and ("<private>" in op.value or "/tmp" in op.value or "Temp" in op.value)


def _relink_only(rebuild: Rebuild) -> bool:
    """A build whose only cache-cleared reasons are MathDx links done again (the module was not rebuilt)."""
    cleared = [reason for reason in rebuild.reasons if reason.kind == "cache-cleared"]
    return rebuild.from_hash == rebuild.to_hash and all(r.lto_symbol for r in cleared)


def lto_relinks(trace: Trace) -> int:
    """MathDx LTO symbols compiled again in one run: Warp links each once per cache, unless a clear threw it away."""
    compiled = [event.symbol for event in trace.lto_builds if event.compiled and event.symbol]
    return len(compiled) - len(set(compiled))


def _helper_of(operation: CacheOperation) -> list[str]:
    """The function that made the per-run directory: `= helper()`, or the function a local `path` lives in."""
    if operation.kind != "config.kernel_cache_dir" or operation.value is None:
        return []
    source = operation.value.source.strip()
    if called := CALLED_NAME.match(source):
        return [called.group(1)]
    if source.isidentifier() and operation.function:
        return [operation.function]
    return []


def _expected(facts: DiscardedCache) -> str:
    """What removing the statements saves, said in structure first: modules and LTO links no longer built."""
    parts = []
    if facts.warm_builds:
        parts.append(
            f"the warm start compiles {counted(facts.warm_builds, 'fewer module')} (~{facts.warm_ms:,.0f} ms of "
            "warm module work)"
        )
    fewer = [counted(facts.cold_rebuilds, "fewer module compile")] if facts.cold_rebuilds else []
    fewer += [counted(facts.lto_relinks, "fewer MathDx LTO link")] if facts.lto_relinks else []
    if fewer:
        parts.append(f"the cold start does {' and '.join(fewer)} (~{facts.cold_ms:,.0f} ms of cold module work)")
    return "; ".join(parts) or "no measured cost attached (untested estimate: small)"
