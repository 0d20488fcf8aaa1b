"""Verdicts between two Reports: same workload, same output, same effective options, and a real gain.

Structure (identities, generated source, LTO artifacts and builds, warm builds) does not
vary with machine load, so it decides first; timing confirms, and a timing
difference inside the noise band is inconclusive. A structural win that timing
contradicts by at least twice the noise band is not a win: it is inconclusive until
more samples settle it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from warp_fix.metrics import (
    COLD_CPU,
    COLD_MODULE,
    COMPILE_ELAPSED,
    IDENTITIES,
    KERNEL,
    SOURCE_BYTES,
    STRUCTURE,
    WARM_BUILDS,
    WARM_MODULE,
    Metric,
    fmt_ms,
)
from warp_fix.model import OptionClaim
from warp_fix.option_effect import no_effect_reason, option_effects
from warp_fix.output_model import OutputModel, OutputVerdict, check, learn
from warp_fix.probe.stats import estimate_band
from warp_fix.report import Launch, ModuleBuild, Report, Stat
from warp_fix.wording import named

IMPROVED = "IMPROVED"
INCONCLUSIVE = "INCONCLUSIVE"
REGRESSED = "REGRESSED"
INVALID = "INVALID"
NO_EFFECT = "NO EFFECT"  # an edit meant to set options moved no module's build (invariant 7)

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
# Warp's generated source carries Python line numbers: moving a kernel a few lines changes its size by a
# few bytes without changing what is compiled. Smaller source differences than this are not structure.
# Renamed kernel keys are taken out before this margin applies (see Comparison.renamed_bytes).
SOURCE_BYTES_TOLERANCE = (0.005, 256)
KERNELS_NAMED = 6  # kernels named in a note on moved options; the rest are counted
# The startup timings every comparison reports; the kernel time is added when both runs timed their kernels.
STARTUP_TIMING = (COLD_MODULE, COMPILE_ELAPSED)


@dataclass
class TimingDelta:
    metric: str  # the Metric's label
    before: Stat
    after: Stat
    delta: float
    band: float
    band_how: str = ""  # how the band was estimated: which runs, what spread
    not_applicable: str = ""  # why this metric means nothing here (compile elapsed when the warm run compiled)
    spread_seen: bool = True  # some code state was measured more than once: the band rests on observed noise

    @property
    def significant(self) -> bool:
        return not self.not_applicable and abs(self.delta) > self.band

    def line(self) -> str:
        """The verdict's view: how far it moved, against the band (compare's output and its reasons)."""
        if self.not_applicable:
            return self._not_applicable()
        sign = "+" if self.delta >= 0 else ""
        pct = 100.0 * self.delta / self.before.median if self.before.median else 0.0
        verdict = "" if self.significant else " (inside the noise band: not significant)"
        how = f"; band {self.band_how}" if self.band_how else ""
        return (
            f"{self._span()} ({sign}{fmt_ms(self.delta)} ms, {sign}{pct:.1f}%; band ±{fmt_ms(self.band)} ms, "
            f"{self._counts()}{how}){verdict}"
        )

    def record_line(self) -> str:
        """The measurement's view: medians with their spread (commit bodies and the ledger)."""
        if self.not_applicable:
            return self._not_applicable()
        verdict = "" if self.significant else ", inside the noise band"
        how = f" {self.band_how}" if self.band_how else ""
        return (
            f"{self._span()} (median of {self._counts()}, MAD {fmt_ms(self.before.mad)}/{fmt_ms(self.after.mad)} ms, "
            f"noise band ±{fmt_ms(self.band)} ms{how}{verdict})"
        )

    def pair(self) -> str:
        """`before -> after` in ms, or n/a: what the commit trailer and the short summaries show."""
        return "n/a" if self.not_applicable else f"{fmt_ms(self.before.median)} -> {fmt_ms(self.after.median)}"

    def _span(self) -> str:
        return f"{self.metric}: {self.pair()} ms"

    def _counts(self) -> str:
        return f"n={len(self.before.values)}/{len(self.after.values)}"

    def _not_applicable(self) -> str:
        return f"{self.metric}: n/a ({self.not_applicable})"


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
    output_summary: str = ""  # the detail without its parenthesis: "within learned tolerance"
    output_rules: list[str] = field(default_factory=list)  # the numbers compared with a tolerance or ignored
    # How often the candidate's generated source spells each kernel key (None: not counted). A renamed key
    # changes the source by its length difference times this, and nothing else is compiled differently.
    key_uses: dict[str, int] | None = None
    contradiction: str = ""  # a structural win that timing contradicts beyond the noise band

    def _moved(self) -> dict[str, int]:
        """-1 shrank, +1 grew, 0 same (within the source-bytes tolerance), per structure field."""
        moved = {}
        for name, (before, after) in self.structure.items():
            if name == SOURCE_BYTES.field:
                moved[name] = self._source_moved(before, after)
            else:
                moved[name] = 0 if after == before else (1 if after > before else -1)
        return moved

    def _source_moved(self, before: int, after: int) -> int:
        """Generated source counts as structure only beyond what renamed kernel keys and shifted lines explain."""
        explained = self.renamed_bytes()
        if explained is None:
            return 0  # keys were renamed and how often the source spells them is unknown: the size proves nothing
        after -= explained
        slack = max(SOURCE_BYTES_TOLERANCE[0] * before, SOURCE_BYTES_TOLERANCE[1])
        return 0 if abs(after - before) <= slack else (1 if after > before else -1)

    def renamed_bytes(self) -> int | None:
        """The source size change that renamed kernel keys explain: sum of (new - old key length) x uses of the
        new key in the candidate's source. None when keys were renamed but their uses were not counted."""
        if not self.renames:
            return 0
        if not self.key_uses:
            return None
        return sum((len(new) - len(old)) * self.key_uses.get(new, 0) for old, new in self.renames)

    @property
    def shrunk(self) -> list[str]:
        """The structure fields that shrank (generated source only beyond what renamed keys explain)."""
        return [name for name, way in self._moved().items() if way < 0]

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
    accepted_history: Sequence[Report] = (),
    output_model: OutputModel | None = None,
    skip_output: bool = False,
) -> Comparison:
    """`accepted_history`: earlier measurements of the accepted state (apply's baseline and arms); their runs
    widen the noise band to what this machine has shown. Without it the band comes from the two reports.
    `output_model`: what the output must match (default: learned from `before`); `skip_output`: don't."""
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
    for (option, old, new, allowed), kernels in _grouped(drift).items():
        # the comparison's option_drift keeps every one
        listed = named(kernels, KERNELS_NAMED)
        which = f"kernel {kernels[0]}" if len(kernels) == 1 else f"{len(kernels)} kernels ({listed})"
        text = f"effective option {option} of {which}: {old} -> {new}"
        (notes if allowed else reasons).append(text + (" (allowed)" if allowed else ""))
    hidden = [r.label or which for r, which in ((before, "before"), (after, "after")) if _cache_gone(r)]
    # Counted from the files a run left in its kernel cache directory: unknown when the run removed it.
    compared = [
        metric for metric in STRUCTURE if not (hidden and metric.in_cache_dir) and recorded(metric, before, after)
    ]
    if hidden:
        notes.append(
            f"generated source bytes and LTO artifacts not compared: the {' and '.join(hidden)} run's kernel cache "
            "directory was gone when it exited"
        )
    structure = {m.field: (getattr(before.summary, m.field), getattr(after.summary, m.field)) for m in compared}
    history = [r for r in accepted_history if r is not before and r.summary is not None]
    source = "the accepted state so far and this candidate" if history else "the two reports"
    timing = [_delta(metric, before, after, history, source) for metric in STARTUP_TIMING]
    cpu = None
    if before.summary.cold_module_cpu_ms is not None and after.summary.cold_module_cpu_ms is not None:
        cpu = _delta(COLD_CPU, before, after, history, source)
        timing.append(cpu)
    if before.summary.kernel_ms is not None and after.summary.kernel_ms is not None:
        timing.append(_delta(KERNEL, before, after, history, source))
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
        output_summary=output.headline,
        output_rules=output.rules,
        key_uses=after.summary.kernel_key_uses or None,
    )
    _note_renamed_source(comparison)
    moved = comparison._moved()
    same_shape = moved[IDENTITIES.field] == 0 and moved.get(SOURCE_BYTES.field, 0) == 0
    judged = timing[1] if same_shape and not timing[1].not_applicable else timing[0]
    if {name: way for name, way in moved.items() if way} == {WARM_BUILDS.field: -1}:
        # Only the second start changed (the cache is kept): the cold run is the same by design, so the claim
        # is judged, and can only be contradicted, on the warm run's module work.
        judged = _delta(WARM_MODULE, before, after, history, source)
        timing.append(judged)
    if comparison.structure_mixed:
        notes.append("structure mixed: " + ", ".join(f"{k} {'+' if v > 0 else '-'}" for k, v in moved.items() if v))
    comparison.judged_on = judged.metric
    comparison.verdict = _verdict(comparison, judged, _same_work(before, after), cpu if judged is timing[0] else None)
    return comparison


def recorded(metric: Metric, *reports: Report) -> bool:
    """Every report counted it (an older report lacks the newer counts: they are not compared)."""
    return all(getattr(report.summary, metric.field) is not None for report in reports)


def require_option_effect(c: Comparison, before: Report, after: Report, claim: OptionClaim) -> Comparison:
    """An edit meant to set options is proven only by modules that compiled with the new value and another
    hash, each of the claim's targets among them; otherwise the verdict is NO_EFFECT, whatever the timing says,
    with where the setting ran."""
    if c.verdict == INVALID or not claim.options:
        return c
    unproven = [effect for effect in option_effects(before, after, claim) if not effect.took_effect]
    if unproven:
        c.verdict = NO_EFFECT
        c.reasons = [no_effect_reason(effect, after) for effect in unproven]
    return c


def _same_work(before: Report, after: Report) -> bool:
    """Both runs built the very same module identities, loaded the same way: the compile work is the same, so
    no timing difference between them can be the change's (a no-op edit on a noisy machine)."""
    state = _state(before)
    return bool(state) and state == _state(after) and _loads(before) == _loads(after)


def _loads(report: Report) -> list[tuple]:
    return [(c.function, c.devices, c.modules, c.block_dim, c.max_workers) for c in report.trace.load_calls]


def _note_renamed_source(c: Comparison) -> None:
    if SOURCE_BYTES.field not in c.structure:  # not compared: a run deleted its kernel cache
        return
    before, after = c.structure[SOURCE_BYTES.field]
    explained = c.renamed_bytes()
    if before == after or explained == 0:
        return
    if explained is None:
        c.notes.append(
            f"generated source {before} -> {after} bytes with kernel keys renamed and their uses not counted: "
            "the source size is not taken as structure"
        )
        return
    c.notes.append(
        f"generated source {before} -> {after} bytes, of which {explained:+d} come from renamed kernel keys: "
        "only the rest counts as structure"
    )


# A build with fewer identities, less source or fewer adjoint kernels does not compile slower; a wall clock that
# says so by little more than the band is load (a 2-core CI runner showed +14% against a band of +-12% for three
# pairs on a backward-off fix). Only a slowdown this many bands wide contradicts a structural win, the same
# margin at which timing alone may decide at 2 pairs per arm.
CONTRADICTION_BANDS = 2.0


def _verdict(c: Comparison, judged: TimingDelta, same_work: bool, cpu: TimingDelta | None = None) -> str:
    """`cpu`: the CPU time of the same builds as `judged`, when recorded; a wall-clock slowdown it does not show
    is the machine's load, not the change, and cannot contradict structure."""
    if c.reasons:
        return INVALID
    if c.structural_loss:
        grown = [_label(k) for k, v in c._moved().items() if v > 0]
        c.reasons.append("structure grew: " + ", ".join(grown))
        return REGRESSED
    if c.structural_win:
        shrunk = [_label(k) for k, v in c._moved().items() if v < 0]
        c.reasons.append("structure shrank: " + ", ".join(shrunk))
        if judged.significant and judged.delta > 0:
            if not judged.spread_seen:  # one run per state: no noise estimate to say the slowdown is real
                c.notes.append(f"timing disagrees from single runs, too few to contradict structure: {judged.line()}")
                return IMPROVED
            if judged.delta < CONTRADICTION_BANDS * judged.band:
                c.notes.append(
                    f"timing slower by less than {CONTRADICTION_BANDS:g}x the noise band, too little to contradict "
                    f"structure: {judged.line()}"
                )
                return IMPROVED
            if cpu is not None and not (cpu.significant and cpu.delta > 0):
                c.notes.append(
                    "wall-clock slower but not the builds' CPU time, so machine load, not the change: "
                    f"{judged.line()}; {cpu.line()}"
                )
                return IMPROVED
            c.contradiction = f"timing contradicts the structural win: {judged.line()}"
            c.reasons.append(c.contradiction)
            return INCONCLUSIVE
        return IMPROVED
    if judged.significant and same_work:
        c.reasons.append(f"the same module identities, built the same way: {judged.line()} is noise, not the change")
        return INCONCLUSIVE
    if judged.significant:
        c.reasons.append(judged.line())
        return IMPROVED if judged.delta < 0 else REGRESSED
    lead = "structure mixed, so timing decides, and " if c.structure_mixed else "no structural change and "
    c.reasons.append(lead + judged.line())
    return INCONCLUSIVE


def _label(field_name: str) -> str:
    """A structure field as a reason says it: "warm builds", not "warm_builds"."""
    return next(m.label for m in STRUCTURE if m.field == field_name)


def _cache_gone(report: Report) -> bool:
    """The cold run's cache directory did not outlive it: what it held (source, LTO files) was never counted."""
    evidence = report.cache_dir_evidence
    return evidence is not None and evidence.cold is not None and not evidence.cold_exists_after


def _invalid(reason: str) -> Comparison:
    return Comparison(INVALID, [reason], None, [], None, [], {}, [], "")


def _delta(metric: Metric, before: Report, after: Report, history: list[Report], source: str) -> TimingDelta:
    """Before -> after of one timing metric, with a noise band from every run of it observed so far."""
    b_summary, a_summary = before.summary, after.summary
    assert b_summary is not None and a_summary is not None  # compare() returned INVALID otherwise
    attr = metric.field
    b, a = getattr(b_summary, attr), getattr(a_summary, attr)
    if metric is COMPILE_ELAPSED and (b_summary.compile_elapsed_na or a_summary.compile_elapsed_na):
        which, why = (
            ("before", b_summary.compile_elapsed_na)
            if b_summary.compile_elapsed_na
            else ("after", a_summary.compile_elapsed_na)
        )
        return TimingDelta(metric.label, b, a, 0.0, 0.0, not_applicable=f"{which}: {why}")
    runs = [*_runs_by_state(attr, before, history), a.values]
    band = estimate_band(runs, b.median, source)
    spread_seen = any(len(values) > 1 for values in runs)
    return TimingDelta(
        metric.label, b, a, round(a.median - b.median, 3), round(band.value, 3), band.how, "", spread_seen
    )


def _runs_by_state(attr: str, before: Report, history: list[Report]) -> list[list[float]]:
    """The metric's runs grouped by the code state they measured: `before` with every earlier run of its own
    state, then the other states. A state is the set of module identities it built (deterministic)."""
    groups: dict[frozenset[tuple[str, str, str]], list[float]] = {}
    for report in (before, *history):
        stat = getattr(report.summary, attr, None)
        if stat is not None:
            groups.setdefault(_state(report), []).extend(stat.values)
    return list(groups.values())


def _state(report: Report) -> frozenset[tuple[str, str, str]]:
    return frozenset((b.module, b.hash, b.device) for b in report.trace.builds if b.status != "error")


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
        return OutputVerdict(None, "output not compared (--allow-nondeterministic-output)", brief="output not compared")
    if model is None:
        if before.output.text_varies:
            return OutputVerdict(None, "the baseline's own output text varies between runs: output not compared")
        model = learn(before.output) if before.output.profile is not None else None
    if model is None:  # reports from before output profiles: bytes decide
        same = before.output.sha256 == after.output.sha256 and after.output.deterministic is not False
        return OutputVerdict(same, "identical" if same else "program output changed")
    return check(model, after.output)


def _grouped(drift: list[OptionDrift]) -> dict[tuple[str, str, str, bool], list[str]]:
    """The kernels of each change, `(option, repr before, repr after, allowed)`: one line for six kernels whose
    enable_backward went True -> False, not six."""
    groups: dict[tuple[str, str, str, bool], list[str]] = {}
    for d in drift:
        groups.setdefault((d.option, repr(d.before), repr(d.after), d.allowed), []).append(d.function)
    return groups


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
