"""Interleaved A/B measurement: one `measure(samples=1)` per arm in turn, folded into two Reports.

Alternating A, B, A, B spreads machine drift over both arms instead of biasing one of them.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from warp_fix.apply.budget import Step, decisive, next_step
from warp_fix.compare import Comparison
from warp_fix.metrics import TIMING, fmt_ms
from warp_fix.probe import measure
from warp_fix.probe.measure import timing_stats
from warp_fix.probe.output import merge_profiles
from warp_fix.report import Output, Report, Summary

Progress = Callable[[str], None]
Judge = Callable[[Report, Report], Comparison]


@dataclass
class ProbeClock:
    """Counts the probe runs apply spends and the seconds spent inside measure()."""

    calls: int = 0
    seconds: float = 0.0
    calls_by_verdict: dict[str, int] = field(default_factory=dict)

    def measure(
        self,
        command: list[str],
        cwd: Path,
        samples: int,
        timeout: float | None,
        label: str,
        kernel_timing: bool = False,
    ) -> Report:
        start = time.perf_counter()
        try:
            return measure(
                command, cwd, samples=samples, timeout=timeout, label=label, kernel_timing=kernel_timing
            )
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - start

    def charge(self, verdict: str, calls: int) -> None:
        self.calls_by_verdict[verdict] = self.calls_by_verdict.get(verdict, 0) + calls


@dataclass
class ArmsResult:
    before: Report
    after: Report
    comparison: Comparison
    per_arm: int
    stop: Step
    side_by_side: bool = True  # False: the code without the fix is its earlier runs in this apply, reused


def measure_interleaved(
    command: list[str],
    accepted_cwd: Path,
    candidate_cwd: Path,
    judge: Judge,
    budget: int,
    clock: ProbeClock,
    timeout: float | None = None,
    progress: Progress | None = None,
    reuse: Report | None = None,
    kernel_timing: bool = False,
    expected_ms: float = 0.0,
    seconds: float | None = None,
) -> ArmsResult:
    """A, B, A, B ... until the sampling rule says stop. Raises ProbeError if an arm fails to run.

    `reuse` is an earlier measurement of the accepted state. It stands in for the first A only while
    deterministic facts decide; when timing decides it is replaced by a fresh A taken right after B.
    `expected_ms` (the plan's estimate) and `seconds` (the time budget per fix) feed the sampling rule.
    """
    started = time.perf_counter()
    say = progress or (lambda _text: None)
    before: list[Report] = [reuse] if reuse is not None else []
    after: list[Report] = []
    reused = reuse is not None
    while True:
        if len(before) == len(after):
            say(f"  run {len(after) + 1} without the fix")
            before.append(clock.measure(command, accepted_cwd, 1, timeout, "accepted", kernel_timing))
        say(
            f"  run {len(after) + 1} with the fix"
            + (" (without it: the figures of the code as it stands are reused)" if reused else "")
        )
        after.append(clock.measure(command, candidate_cwd, 1, timeout, "candidate", kernel_timing))
        comparison = judge(merge_reports(before), merge_reports(after))
        if reused and not decisive(comparison):
            say("  timing decides: the code without the fix is measured again, right after")
            before = [clock.measure(command, accepted_cwd, 1, timeout, "accepted", kernel_timing)]
            reused = False
            comparison = judge(merge_reports(before), merge_reports(after))
        left = None if seconds is None else seconds - (time.perf_counter() - started)
        step = next_step(comparison, len(after), budget, kernel_timing, expected_ms, left)
        if not step.more:
            if reuse is not None and not reused:
                note = drift_note(reuse, merge_reports(before), comparison)
                comparison.notes += [note] if note else []
            return ArmsResult(
                merge_reports(before), merge_reports(after), comparison, len(after), step, side_by_side=not reused
            )


def drift_note(earlier: Report, now: Report, comparison: Comparison, code: str = "the code without the fix") -> str:
    """The same code measured twice in one apply, further apart than the noise band: say so with both figures,
    so that two numbers for one state read as the machine's speed moving, not as a contradiction. The verdict
    keeps judging the runs taken side by side; "" when the two agree within the band."""
    judged = next((t for t in comparison.timing if t.metric == comparison.judged_on), None)
    metric = next((m for m in TIMING if m.label == comparison.judged_on), None)
    if judged is None or metric is None or judged.not_applicable or earlier.summary is None or now.summary is None:
        return ""
    then, later = getattr(earlier.summary, metric.field, None), getattr(now.summary, metric.field, None)
    if then is None or later is None or abs(later.median - then.median) <= judged.band:
        return ""
    return (
        f"{code} ran at {fmt_ms(then.median)} ms of {metric.label} when measured earlier in this apply and at "
        f"{fmt_ms(later.median)} ms in the runs beside it, more than the noise band (±{fmt_ms(judged.band)} ms) "
        "apart: the machine's speed moved, so the verdict rests on the runs taken side by side"
    )


def merge_reports(reports: list[Report]) -> Report:
    """Single-sample Reports of one arm -> one Report with every sample and a recomputed summary.

    Structure and trace come from the first report (they are deterministic); output counts as
    deterministic only if every run printed the same bytes, and its profile spans every run.
    """
    first = reports[0]
    if len(reports) == 1:
        return first
    samples = [dataclasses.replace(s, index=i) for i, s in enumerate(x for r in reports for x in r.samples)]
    good = [s for s in samples if s.ok]
    hashes = {r.output.sha256 for r in reports}
    deterministic = (
        None if not good else (len(hashes) == 1 and all(r.output.deterministic is not False for r in reports))
    )
    profiled = [(r.output.profile, r.output.head) for r in reports if r.output.profile is not None]
    profile = merge_profiles([p for p, _ in profiled], [h for _, h in profiled]) if profiled else None
    output: Output = dataclasses.replace(first.output, deterministic=deterministic, profile=profile)
    return dataclasses.replace(
        first,
        samples=samples,
        summary=_summary(first.summary, good),
        output=output,
        warnings=sorted({w for r in reports for w in r.warnings}),
    )


def _summary(first: Summary | None, good) -> Summary | None:
    if first is None or not good:
        return first
    return dataclasses.replace(first, **timing_stats(good))
