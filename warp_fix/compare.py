"""Verdicts between two Reports: same workload, same output, same effective options, and a real gain.

Structure (identities, generated source, LTO artifacts and builds, warm builds) does not
vary with machine load, so it decides first; timing confirms, and a timing
difference inside the noise band is inconclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from warp_fix.output_model import OutputModel, OutputVerdict, check, learn
from warp_fix.probe.stats import noise_band
from warp_fix.report import Launch, ModuleBuild, Report, Stat

IMPROVED = "IMPROVED"
INCONCLUSIVE = "INCONCLUSIVE"
REGRESSED = "REGRESSED"
INVALID = "INVALID"

NUMERICS_OPTIONS = (
    "fast_math",
    "max_unroll",
    "mode",
    "optimization_level",
    "enable_mathdx_gemm",
    "enable_mathdx_solver",
    "enable_mathdx_fft",
    "fuse_fp",
    "deterministic",
    "enable_backward",
)
# lto_builds counts MathDx builds as events of the cold run: a clear_lto_cache() in the run that makes a later
# module link the same GEMM again leaves the artifacts at exit unchanged, but not this count.
STRUCTURE_FIELDS = ("identities", "generated_source_bytes", "lto_artifacts", "lto_builds", "warm_builds")
# Counted from the files a run left in its kernel cache directory: unknown when the run removed the directory.
CACHE_INVENTORY_FIELDS = ("generated_source_bytes", "lto_artifacts")
# Warp's generated source carries Python line numbers: moving a kernel a few lines changes its size by a
# few bytes without changing what is compiled. Smaller source differences than this are not structure.
SOURCE_BYTES_TOLERANCE = (0.005, 256)
# Reported next to the startup verdict, never part of it: a fix that trades build time for kernel time
# (MathDx off) is offered with both numbers and kept only with consent.
KERNEL_METRIC = "steady-state kernel time"


@dataclass
class TimingDelta:
    metric: str
    before: Stat
    after: Stat
    delta: float
    band: float

    @property
    def significant(self) -> bool:
        return abs(self.delta) > self.band

    def line(self) -> str:
        sign = "+" if self.delta >= 0 else ""
        pct = 100.0 * self.delta / self.before.median if self.before.median else 0.0
        verdict = "" if self.significant else " (inside the noise band: not significant)"
        return (
            f"{self.metric}: {fmt_ms(self.before.median)} -> {fmt_ms(self.after.median)} ms "
            f"({sign}{fmt_ms(self.delta)} ms, {sign}{pct:.1f}%; band ±{fmt_ms(self.band)} ms, "
            f"n={len(self.before.values)}/{len(self.after.values)}){verdict}"
        )


def fmt_ms(value: float) -> str:
    """Whole milliseconds for build times; three significant digits below 100 ms (kernel times)."""
    return f"{value:.0f}" if abs(value) >= 100 or value == 0 else f"{value:.3g}"


@dataclass
class OptionDrift:
    function: str
    option: str
    before: object
    after: object
    allowed: bool


@dataclass
class Comparison:
    verdict: str
    reasons: list[str]
    workload_same: bool | None  # None: unverifiable
    renames: list[tuple[str, str]]
    output_same: bool | None  # None: not compared (allowed to vary, or the baseline's text varies)
    option_drift: list[OptionDrift]
    structure: dict[str, tuple[int, int]]
    timing: list[TimingDelta]
    judged_on: str  # the timing metric the verdict used
    notes: list[str] = field(default_factory=list)
    output_detail: str = ""  # "identical", "within learned tolerance (...)", or what changed
    output_rules: list[str] = field(default_factory=list)  # the numbers compared with a tolerance or ignored

    def _moved(self) -> dict[str, int]:
        """-1 shrank, +1 grew, 0 same (within the source-bytes tolerance), per structure field."""
        moved = {}
        for name, (before, after) in self.structure.items():
            slack = 0
            if name == "generated_source_bytes":
                slack = max(SOURCE_BYTES_TOLERANCE[0] * before, SOURCE_BYTES_TOLERANCE[1])
            moved[name] = 0 if abs(after - before) <= slack else (1 if after > before else -1)
        return moved

    @property
    def structural_win(self) -> bool:
        return -1 in self._moved().values() and 1 not in self._moved().values()

    @property
    def structural_loss(self) -> bool:
        return 1 in self._moved().values() and -1 not in self._moved().values()

    @property
    def structure_mixed(self) -> bool:
        """Some counts shrank, others grew (e.g. a split: one more module, far less source): timing decides."""
        return {-1, 1} <= set(self._moved().values())

    @property
    def exit_code(self) -> int:
        return 1 if self.verdict in (REGRESSED, INVALID) else 0


def compare(
    before: Report,
    after: Report,
    allow_options: frozenset[str] | set[str] = frozenset(),
    output_model: OutputModel | None = None,
    skip_output: bool = False,
) -> Comparison:
    """`output_model`: what the output must match (default: learned from `before`); `skip_output`: don't."""
    if before.summary is None or after.summary is None:
        which = "before" if before.summary is None else "after"
        return _invalid(f"the {which} report has no successful sample")
    reasons: list[str] = []
    notes: list[str] = []
    workload_same, renames, workload_reason = _workload(before, after)
    if workload_reason:
        (reasons if workload_same is False else notes).append(workload_reason)
    output = _output(before, after, output_model, skip_output)
    if output.same is not True:
        (reasons if output.same is False else notes).append(output.detail)
    drift = _option_drift(before, after, allow_options) if workload_same is not False else []
    for d in drift:
        text = f"effective option {d.option} of kernel {d.function}: {d.before!r} -> {d.after!r}"
        if d.allowed:
            notes.append(text + " (allowed)")
        else:
            reasons.append(text)
    hidden = [r.label or which for r, which in ((before, "before"), (after, "after")) if _cache_gone(r)]
    fields = [name for name in STRUCTURE_FIELDS if not (hidden and name in CACHE_INVENTORY_FIELDS)]
    if hidden:
        notes.append(
            f"generated source bytes and LTO artifacts not compared: the {' and '.join(hidden)} run's kernel cache "
            "directory was gone when it exited"
        )
    structure = {name: (getattr(before.summary, name), getattr(after.summary, name)) for name in fields}
    timing = [
        _delta("cold module work", before.summary.cold_module_ms, after.summary.cold_module_ms),
        _delta("compile elapsed", before.summary.compile_elapsed_ms, after.summary.compile_elapsed_ms),
    ]
    if before.summary.kernel_ms is not None and after.summary.kernel_ms is not None:
        timing.append(_delta(KERNEL_METRIC, before.summary.kernel_ms, after.summary.kernel_ms))
    comparison = Comparison(
        verdict=INCONCLUSIVE,
        reasons=reasons,
        workload_same=workload_same,
        renames=renames,
        output_same=output.same,
        option_drift=drift,
        structure=structure,
        timing=timing,
        judged_on="",
        notes=notes,
        output_detail=output.detail,
        output_rules=output.rules,
    )
    moved = comparison._moved()
    same_shape = moved["identities"] == 0 and moved.get("generated_source_bytes", 0) == 0
    judged = timing[1] if same_shape else timing[0]
    if comparison.structure_mixed:
        notes.append("structure mixed: " + ", ".join(f"{k} {'+' if v > 0 else '-'}" for k, v in moved.items() if v))
    comparison.judged_on = judged.metric
    comparison.verdict = _verdict(comparison, judged)
    return comparison


def _verdict(c: Comparison, judged: TimingDelta) -> str:
    if c.reasons:
        return INVALID
    if c.structural_loss:
        grown = [k for k, v in c._moved().items() if v > 0]
        c.reasons.append("structure grew: " + ", ".join(grown))
        return REGRESSED
    if c.structural_win:
        shrunk = [k for k, v in c._moved().items() if v < 0]
        c.reasons.append("structure shrank: " + ", ".join(shrunk))
        return IMPROVED
    if judged.significant:
        c.reasons.append(judged.line())
        return IMPROVED if judged.delta < 0 else REGRESSED
    c.reasons.append("no structural change and " + judged.line())
    return INCONCLUSIVE


def _cache_gone(report: Report) -> bool:
    """The cold run's cache directory did not outlive it: what it held (source, LTO files) was never counted."""
    evidence = report.cache_dir_evidence
    return evidence is not None and evidence.cold is not None and not evidence.cold_exists_after


def _invalid(reason: str) -> Comparison:
    return Comparison(INVALID, [reason], None, [], None, [], {}, [], "")


def _delta(metric: str, before: Stat, after: Stat) -> TimingDelta:
    return TimingDelta(
        metric, before, after, round(after.median - before.median, 3), round(noise_band(before), 3)
    )


def _workload(before: Report, after: Report) -> tuple[bool | None, list[tuple[str, str]], str]:
    """Same ordered launches by structure; kernel keys may change (a closure moved to module scope)."""
    b, a = before.trace, after.trace
    if b.launch_count == 0 or a.launch_count == 0:
        return None, [], "no launches recorded: the workload check is unverifiable"
    if b.launch_count != a.launch_count:
        return False, [], f"launch count changed: {b.launch_count} -> {a.launch_count}"
    if b.launch_digest and a.launch_digest and b.launch_digest != a.launch_digest:
        index, detail = _first_difference(b.launches, a.launches)
        return False, [], f"launch #{index + 1} differs: {detail}"
    for x, y in zip(b.launches, a.launches):
        if x.function != y.function:
            return False, [], f"launch of kernel {x.function} became {y.function}"
    renames = sorted({(x.kernel, y.kernel) for x, y in zip(b.launches, a.launches) if x.kernel != y.kernel})
    return True, renames, ""


def _first_difference(before: list[Launch], after: list[Launch]) -> tuple[int, str]:
    for index, (x, y) in enumerate(zip(before, after)):
        if x.structure() != y.structure():
            return index, f"{x.function}{x.structure()} -> {y.function}{y.structure()}"
    return min(len(before), len(after)), "beyond the detailed launch record"


def _output(before: Report, after: Report, model: OutputModel | None, skip: bool) -> OutputVerdict:
    """Same text, and numbers as the baseline's own runs allow (warp_fix/output_model.py)."""
    if skip:
        return OutputVerdict(None, "output not compared (--allow-nondeterministic-output)")
    if model is None:
        if before.output.text_varies:
            return OutputVerdict(None, "the baseline's own output text varies between runs: output not compared")
        model = learn(before.output) if before.output.profile is not None else None
    if model is None:  # reports from before output profiles: bytes decide
        same = before.output.sha256 == after.output.sha256 and after.output.deterministic is not False
        return OutputVerdict(same, "identical" if same else "program output changed")
    return check(model, after.output)


def _option_drift(before: Report, after: Report, allowed: frozenset[str] | set[str]) -> list[OptionDrift]:
    """For every launched kernel, the options of the build it ran with, before vs after."""
    drift: dict[tuple[str, str], OptionDrift] = {}
    differentiated = _differentiated_modules(before)
    pairs = zip(_launch_builds(before), _launch_builds(after))
    for (x, bx), (_y, by) in pairs:
        if bx is None or by is None:
            continue
        for option in NUMERICS_OPTIONS:
            old, new = bx.options.get(option), by.options.get(option)
            if old == new or (x.function, option) in drift:
                continue
            ok = option in allowed or (option == "enable_backward" and x.module not in differentiated)
            drift[(x.function, option)] = OptionDrift(x.function, option, old, new, ok)
    return list(drift.values())


def _differentiated_modules(report: Report) -> set[str]:
    """Modules that an adjoint launch touched: their backward code is in use."""
    return {launch.module for launch in report.trace.launches if launch.adjoint}


def _launch_builds(report: Report) -> list[tuple[Launch, ModuleBuild | None]]:
    """Each launch with the build it ran: the module's latest build before the next launch.

    A launch is traced before the load it triggers, so "before the next launch" is the bound.
    """
    launches = report.trace.launches
    result = []
    for index, launch in enumerate(launches):
        bound = launches[index + 1].seq if index + 1 < len(launches) else float("inf")
        found = None
        for build in report.trace.builds:
            if build.seq > bound:
                break
            if build.module == launch.module and build.device == launch.device and build.status != "error":
                found = build
        result.append((launch, found))
    return result
