"""The CI guard: did the cold-start structure (or, on request, the timing) grow against a committed baseline?

Pure functions over two Reports, so the verdict is testable without running Warp; `warp-fix check` in
cli.py measures, calls `check_reports`, prints `result_lines` and maps `CheckResult.exit_code`.
Structure (identities, generated source, LTO artifacts, warm builds) is deterministic, so one sample
is enough for it; timing is noisy and judged only with `--timing`, against the baseline's noise band.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from warp_fix.compare import STRUCTURE, recorded
from warp_fix.config import ProjectConfig, load_config
from warp_fix.probe.stats import noise_band
from warp_fix.report import Report, Stat
from warp_fix.wording import counted

TIMING_METRIC = "cold_module_ms"
MIN_TIMING_SAMPLES = 3
LABELS = {
    "identities": "compiled module identities",
    "generated_source_bytes": "generated source bytes",
    "lto_artifacts": "LTO artifacts",
    "lto_builds": "MathDx LTO builds",
    "warm_builds": "warm builds (cache not reused)",
    TIMING_METRIC: "cold module work (ms)",
}


@dataclass(frozen=True)
class Change:
    """One metric, baseline vs current; `band` is set for timing (a change inside it is noise)."""

    metric: str
    before: float
    after: float
    band: float | None = None

    @property
    def delta(self) -> float:
        return self.after - self.before

    def line(self) -> str:
        sign = "+" if self.delta >= 0 else ""
        label = LABELS.get(self.metric, self.metric)
        text = f"{label}: {self.before:,.0f} -> {self.after:,.0f} ({sign}{self.delta:,.0f})"
        return text + (f", noise band ±{self.band:,.0f}" if self.band is not None else "")


@dataclass
class CheckResult:
    grew: list[Change]  # each one fails the check
    shrank: list[Change]  # a gain the baseline does not lock in yet
    rebuilds: list[str]  # the current run's "why rebuilt" lines
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # reports that cannot be compared: fails the check

    @property
    def passed(self) -> bool:
        return not self.grew and not self.problems

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, **asdict(self)}


def check_reports(baseline: Report, current: Report, timing: bool = False) -> CheckResult:
    """Fail when any structure metric grows, or (with `timing`) cold module work grows beyond the noise band."""
    rebuilds = [rebuild.line() for rebuild in current.rebuilds]
    problems = _unusable(baseline, "baseline") + _unusable(current, "current")
    if problems:
        return CheckResult([], [], rebuilds, problems=problems)
    changes = structure_changes(baseline, current)
    notes = workload_notes(baseline, current)
    if timing:
        changes.append(timing_change(baseline.summary.cold_module_ms, current.summary.cold_module_ms))
        notes += timing_notes(baseline, current)
    grew = [c for c in changes if _grew(c)]
    shrank = [c for c in changes if _shrank(c)]
    return CheckResult(grew, shrank, rebuilds, notes)


def structure_changes(baseline: Report, current: Report) -> list[Change]:
    return [
        Change(metric.field, getattr(baseline.summary, metric.field), getattr(current.summary, metric.field))
        for metric in STRUCTURE
        if recorded(metric, baseline, current)
    ]


def timing_change(before: Stat, after: Stat) -> Change:
    return Change(TIMING_METRIC, before.median, after.median, round(noise_band(before), 3))


def workload_notes(baseline: Report, current: Report) -> list[str]:
    """A changed workload explains growth; it does not excuse it, but the reader should know."""
    notes = []
    if list(baseline.command) != list(current.command):
        notes.append(f"the baseline measured a different command: {' '.join(baseline.command)}")
    b, c = baseline.trace, current.trace
    if b.launch_count != c.launch_count or (b.launch_digest and c.launch_digest and b.launch_digest != c.launch_digest):
        notes.append(
            f"the workload changed (launches {b.launch_count} -> {c.launch_count} or their structure): "
            "if that is intended, rewrite the baseline with --update"
        )
    if baseline.warp_version != current.warp_version:
        notes.append(f"Warp version differs: baseline {baseline.warp_version}, now {current.warp_version}")
    return notes


def timing_notes(baseline: Report, current: Report) -> list[str]:
    counts = (len(baseline.summary.cold_module_ms.values), len(current.summary.cold_module_ms.values))
    if min(counts) >= MIN_TIMING_SAMPLES:
        return []
    return [
        f"timing judged on {counts[0]}/{counted(counts[1], 'sample')}: use --samples {MIN_TIMING_SAMPLES} or more "
        "(for the baseline too) for a band that reflects the machine's noise"
    ]


def result_lines(result: CheckResult, baseline_path: str) -> list[str]:
    """The human summary: verdict, what grew or shrank, notes, then why each module was rebuilt."""
    verdict = "passed" if result.passed else "FAILED"
    lines = [f"warp-fix check: {verdict} against {baseline_path}"]
    lines += [f"  problem: {text}" for text in result.problems]
    lines += [f"  grew: {change.line()}" for change in result.grew]
    lines += [f"  shrank: {change.line()}" for change in result.shrank]
    if result.shrank and result.passed:
        lines.append("  lock the gain in: rerun with --update and commit the baseline")
    lines += [f"  note: {text}" for text in result.notes]
    if result.rebuilds:
        lines.append("why rebuilt (this run):")
        lines += [f"  {line}" for line in result.rebuilds]
    return lines


def project_defaults(cwd: Path) -> ProjectConfig:
    """`[tool.warp-fix]` of the project measured, searched up to its git root (raises ConfigError)."""
    cwd = Path(cwd).resolve()
    return load_config(cwd, _git_root(cwd))


def _git_root(start: Path) -> Path | None:
    return next((d for d in (start, *start.parents) if (d / ".git").exists()), None)


def _unusable(report: Report, which: str) -> list[str]:
    if report.summary is not None:
        return []
    advice = ": rewrite it with --update" if which == "baseline" else ""
    return [f"the {which} report has no successful sample{advice}"]


def _grew(change: Change) -> bool:
    return change.delta > (change.band or 0)


def _shrank(change: Change) -> bool:
    return -change.delta > (change.band or 0)
