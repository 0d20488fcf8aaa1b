"""How many interleaved samples a candidate gets: the sampling rule, in one place.

Structure (identities, generated source bytes, LTO artifacts, warm builds), the launch record, the
output and the effective options are deterministic: one sample per arm settles them, and timing
only has to agree in direction. A claim that rests on timing alone needs a median and a MAD, so it
gets at least MIN_TIMING_SAMPLES per arm and at most the `--samples` budget, stopping early once the
difference is far outside the noise band or far inside it. The rule is sequential: a difference of at
least LARGE_EFFECT x the band is decided at 2 per arm; a fix whose expected effect is under half the band
is stopped at 2 per arm unless the difference already exceeds the band; a time budget per fix stops it
too. `benchmarks/sequential_rule.py` measures its error rates by simulation (docs/apply.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from warp_fix.compare import INCONCLUSIVE, INVALID, NO_EFFECT, Comparison, TimingDelta
from warp_fix.metrics import KERNEL
from warp_fix.wording import counted

MIN_TIMING_SAMPLES = 3  # a median and a MAD need three values (docs/compile-model.md, measurement rules)
CLEARLY_OUTSIDE = 2.0  # |delta| > 2 x band: more samples will not change the verdict
CLEARLY_INSIDE = 0.5  # |delta| < band / 2: more samples will not make it significant
LARGE_EFFECT = 2.0  # |delta| >= 2 x a band that rests on repeated runs: decided at 2 per arm
EARLIEST = 2  # the fewest pairs per arm any timing verdict rests on
# A deterministic structural win is overturned by timing only when the contradiction stands over this many
# interleaved pairs: on a loaded 2-core machine three pairs showed a +7% slowdown for a fix that removes a build.
CONTRADICTION_SAMPLES = 5
# The plan's baseline, whatever --samples (which counts per arm): two cold+warm pairs show output
# nondeterminism early and give the noise band a spread to start from.
BASELINE_SAMPLES = 2

RULE_TEXT = (
    "the accepted state's latest measurement (the baseline, or the candidate that became it) is reused "
    "and 1 candidate sample is taken; if deterministic facts decide (structure changed, or the "
    "workload/output/options moved) that is all; otherwise timing decides: the reused sample is replaced by a"
    " fresh interleaved one and pairs continue to at least 3 and at most "
    "--samples per arm (or the time budget per fix), stopping early when the difference is > 2x or < 0.5x"
    " the noise band; at 2 per arm a difference of at least 2x the band decides, and a fix whose expected"
    " effect is under half the band stops unless the difference already exceeds the band; any other "
    "timing verdict from fewer than 3 samples per arm counts as inconclusive; a fix that trades build "
    "time for kernel time gets at least 3 per arm (within --samples) whatever decides, since its kernel "
    "time is a timing claim; a structural win that timing contradicts by at least 2x the noise band is measured "
    "afresh to at least 5 per arm (more if --samples allows) and dropped if the contradiction stands; the "
    "noise band comes from every run of the accepted state so far (baseline included) and the candidate's, "
    "and is never tighter than half their spread"
)


@dataclass(frozen=True)
class Step:
    more: bool  # take another A,B pair
    why: str


def structure_changed(comparison: Comparison) -> bool:
    """Structure moved one way (a mixed move, e.g. one more module but far less source, is for timing)."""
    return comparison.structural_win or comparison.structural_loss


def contradicted(comparison: Comparison) -> bool:
    """Structure says better, timing says worse beyond the noise band: more samples must settle it."""
    return comparison.verdict != INVALID and bool(comparison.contradiction)


def contradiction_budget(budget: int) -> int:
    """Pairs per arm before a contradiction drops a structural win: CONTRADICTION_SAMPLES, more than a timing
    claim's MIN_TIMING_SAMPLES, whatever --samples. Structure is a deterministic fact; a few slow runs on a busy
    machine must not overturn it, while a timing-only verdict from fewer pairs is only inconclusive, never acted on."""
    return max(budget, CONTRADICTION_SAMPLES)


def judged_delta(comparison: Comparison) -> TimingDelta | None:
    return next((t for t in comparison.timing if t.metric == comparison.judged_on), None)


def decisive(comparison: Comparison) -> bool:
    """Deterministic facts settle it: more samples cannot change the verdict."""
    return comparison.verdict == INVALID or (structure_changed(comparison) and not contradicted(comparison))


def next_step(
    comparison: Comparison,
    per_arm: int,
    budget: int,
    kernel_claim: bool = False,
    expected_ms: float = 0.0,
    seconds_left: float | None = None,
) -> Step:
    """After `per_arm` interleaved pairs: measure another pair, or stop (and why).

    `kernel_claim`: the steady-state kernel time is reported with the verdict, and it is a timing claim
    even when structure settles the startup verdict. `expected_ms`: the plan's estimate of the fix's effect
    (0: none). `seconds_left`: what remains of the time budget per fix (None: no time budget).
    """
    if comparison.verdict == INVALID:
        return Step(False, "decisive: the workload, output or effective options moved")
    if comparison.verdict == NO_EFFECT:
        return Step(False, "decisive: the options it sets reached no module's build")
    if contradicted(comparison):
        if per_arm >= contradiction_budget(budget):
            return Step(False, f"structure and timing disagree after {per_arm} per arm: not kept")
        return Step(True, "timing contradicts the structural win beyond the noise band: more samples")
    if kernel_claim and per_arm < min(MIN_TIMING_SAMPLES, budget):
        return Step(True, f"steady-state kernel time is a timing claim: needs {MIN_TIMING_SAMPLES} per arm")
    if structure_changed(comparison):
        return Step(False, f"decisive: structure changed; {_timing_beside_structure(comparison)}")
    if per_arm >= budget:
        return Step(False, f"timing decides; sample budget spent ({budget} per arm)")
    if seconds_left is not None and seconds_left <= 0:
        return Step(False, f"timing decides; time budget per fix spent at {per_arm} per arm")
    delta = judged_delta(comparison)
    if delta is None:
        return Step(False, "no timing to judge")
    if per_arm >= EARLIEST and large(delta):
        return Step(False, f"timing decides: difference at least {LARGE_EFFECT:g}x the noise band at {per_arm} per arm")
    if per_arm >= EARLIEST and 0 < expected_ms < CLEARLY_INSIDE * delta.band and abs(delta.delta) <= delta.band:
        return Step(
            False,
            f"timing decides: the expected effect (~{expected_ms:.0f} ms) is under half the noise band "
            f"(±{delta.band:.0f} ms); more runs would not show it",
        )
    if per_arm < MIN_TIMING_SAMPLES:
        return Step(True, f"timing decides: needs {MIN_TIMING_SAMPLES} per arm")
    if abs(delta.delta) > CLEARLY_OUTSIDE * delta.band:
        return Step(False, "timing decides: difference clearly outside the noise band")
    if abs(delta.delta) < CLEARLY_INSIDE * delta.band:
        return Step(False, "timing decides: difference clearly inside the noise band")
    return Step(True, "timing decides: difference near the noise band")


def large(delta: TimingDelta) -> bool:
    """Far enough outside a band that rests on repeated runs to be decided at EARLIEST per arm."""
    return delta.spread_seen and not delta.not_applicable and abs(delta.delta) >= LARGE_EFFECT * delta.band > 0


def _timing_beside_structure(comparison: Comparison) -> str:
    """What timing says next to a structural verdict, without claiming it confirms what it does not."""
    judged = judged_delta(comparison)
    if judged is None or judged.not_applicable:
        said = "no timing to judge"
    elif judged.delta <= 0:
        said = f"{judged.metric} agrees"
    else:
        said = f"{judged.metric} is slower, inside its noise band"
    worse = [t.metric for t in comparison.timing if t is not judged and t.significant and t.delta > 0]
    if worse:
        said += f"; {', '.join(worse)} slower beyond its band (reported, not judged)"
    return said


def effective_verdict(comparison: Comparison, per_arm: int) -> tuple[str, str]:
    """The verdict apply acts on, and why: a timing-only verdict from < 3 samples per arm is inconclusive."""
    verdict = comparison.verdict
    if contradicted(comparison):
        return INCONCLUSIVE, f"structure and timing disagree after {counted(per_arm, 'sample')} per arm"
    if verdict in (INVALID, NO_EFFECT) or structure_changed(comparison) or per_arm >= MIN_TIMING_SAMPLES:
        return verdict, verdict.lower()
    judged = judged_delta(comparison)
    if verdict != INCONCLUSIVE and per_arm >= EARLIEST and judged is not None and large(judged):
        return verdict, f"{verdict.lower()}: at least {LARGE_EFFECT:g}x the noise band at {per_arm} per arm"
    if verdict == INCONCLUSIVE:
        return verdict, "inconclusive"
    return INCONCLUSIVE, (
        f"timing-only {verdict.lower()} from {counted(per_arm, 'sample')} per arm: a timing claim needs "
        f"{MIN_TIMING_SAMPLES} per arm, or {EARLIEST} when at least {LARGE_EFFECT:g}x the band (raise --samples)"
    )


def kernel_time_win(comparison: Comparison, per_arm: int) -> str:
    """Why a fix measured both ways wins on its kernels alone, or "" when it does not.

    Start-up inconclusive (not slower beyond its band, structure not grown) and the steady-state kernel
    time faster beyond a band that rests on repeated runs: the program is faster at no measured start-up
    cost. A split that moves an f32 GEMM off MathDx is the case: one LTO build less, one module more.
    """
    if comparison.verdict != INCONCLUSIVE or contradicted(comparison) or comparison.structural_loss:
        return ""
    kernel = next((t for t in comparison.timing if t.metric == KERNEL.label), None)
    if per_arm < MIN_TIMING_SAMPLES or kernel is None or not kernel.spread_seen:
        return ""
    if not (kernel.significant and kernel.delta < 0):
        return ""
    judged = judged_delta(comparison)
    if judged is not None and judged.significant and judged.delta > 0:
        return ""
    return f"kernels faster at no measured start-up cost: {kernel.line()}"
