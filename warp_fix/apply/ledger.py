"""The Ledger: what apply kept, dropped and declined, with numbers; saved as JSON and Markdown.

It lives under the git directory (`.git/warp-fix/<branch>.json|.md`), never in the user's tree.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warp_fix.compare import KERNEL_METRIC, Comparison, fmt_ms

KEPT = "kept"
DROPPED = "dropped"
DECLINED = "declined"
OFFERED = "offered"  # measured both ways on a candidate, not committed: it needs the user's consent
LEDGER_VERSION = 1


@dataclass
class TimingNumbers:
    metric: str
    before_ms: float
    before_mad: float
    after_ms: float
    after_mad: float
    n_before: int
    n_after: int
    delta_ms: float
    band_ms: float
    significant: bool
    band_how: str = ""  # which runs the band was estimated from, and their spread
    not_applicable: str = ""  # why the metric means nothing for this comparison

    def line(self) -> str:
        if self.not_applicable:
            return f"{self.metric}: n/a ({self.not_applicable})"
        verdict = "" if self.significant else ", inside the noise band"
        how = f" {self.band_how}" if self.band_how else ""
        return (
            f"{self.metric}: {fmt_ms(self.before_ms)} -> {fmt_ms(self.after_ms)} ms "
            f"(median of n={self.n_before}/{self.n_after}, "
            f"MAD {fmt_ms(self.before_mad)}/{fmt_ms(self.after_mad)} ms, "
            f"noise band ±{fmt_ms(self.band_ms)} ms{how}{verdict})"
        )

    def pair(self) -> str:
        """`before -> after` in ms, or n/a: what the commit trailer and the short summaries show."""
        return "n/a" if self.not_applicable else f"{fmt_ms(self.before_ms)} -> {fmt_ms(self.after_ms)}"


@dataclass
class Numbers:
    """A comparison reduced to what the ledger, the commit and `log` show."""

    verdict: str
    reasons: list[str]
    structure: dict[str, tuple[int, int]]
    timing: list[TimingNumbers]
    per_arm: int
    launches_preserved: bool | None
    launch_count: int
    output_preserved: bool | None
    renames: list[tuple[str, str]]
    notes: list[str]
    stop: str = ""  # why sampling stopped
    output: str = ""  # the output verdict: "identical", "within learned tolerance (...)", or what changed
    output_rules: list[str] = field(default_factory=list)  # the tolerant and ignored numbers, described

    @classmethod
    def of(cls, comparison: Comparison, per_arm: int, launch_count: int, stop: str = "") -> Numbers:
        timing = [
            TimingNumbers(
                t.metric,
                t.before.median,
                t.before.mad,
                t.after.median,
                t.after.mad,
                len(t.before.values),
                len(t.after.values),
                t.delta,
                t.band,
                t.significant,
                t.band_how,
                t.not_applicable,
            )
            for t in comparison.timing
        ]
        return cls(
            comparison.verdict,
            list(comparison.reasons),
            dict(comparison.structure),
            timing,
            per_arm,
            comparison.workload_same,
            launch_count,
            comparison.output_same,
            list(comparison.renames),
            list(comparison.notes),
            stop,
            comparison.output_detail,
            list(comparison.output_rules),
        )

    def timing_of(self, metric: str) -> TimingNumbers | None:
        return next((t for t in self.timing if t.metric == metric), None)

    def summary(self) -> str:
        parts = []
        ids = self.structure.get("identities")
        if ids:
            parts.append(f"identities {ids[0]} -> {ids[1]}")
        for metric in ("cold module work", "compile elapsed", KERNEL_METRIC):
            t = self.timing_of(metric)
            if t and t.not_applicable:
                parts.append(f"{metric} n/a")
            elif t:
                parts.append(f"{metric} {t.pair()} ms (±{fmt_ms(t.band_ms)})")
        if self.output and self.output != "identical":
            parts.append(f"output {self.output}")
        return "; ".join(parts) + f"; n={self.per_arm} per arm"


@dataclass
class TestSummary:
    __test__ = False  # not a pytest test class

    command: str
    passed: bool
    exit_code: int | None
    seconds: float
    tail: str = ""


@dataclass
class Entry:
    fix_id: str
    slug: str
    title: str
    safety: str
    outcome: str  # KEPT | DROPPED | DECLINED | OFFERED
    reason: str
    files: list[str] = field(default_factory=list)
    commit: str | None = None
    numbers: Numbers | None = None
    tests: TestSummary | None = None
    expected: str = ""  # the planner's untested estimate (shown for declined fixes, labelled)
    retry_of: str = ""  # the id of this fix's dropped try, when a later kept fix changed its module


@dataclass
class Ledger:
    branch: str | None
    base_commit: str
    base_ref: str | None
    command: list[str]
    cwd: str  # relative to the repository root
    sampling_rule: str
    status: str = "running"  # running | complete | interrupted | failed | dry-run
    entries: list[Entry] = field(default_factory=list)
    baseline: dict[str, Any] = field(default_factory=dict)
    total: Numbers | None = None
    total_note: str = ""
    warnings: list[str] = field(default_factory=list)
    probe_calls: int = 0
    probe_calls_by_verdict: dict[str, int] = field(default_factory=dict)
    probe_seconds: float = 0.0
    test_seconds: float = 0.0
    total_seconds: float = 0.0
    version: int = LEDGER_VERSION
    output_model: dict[str, Any] | None = None  # OutputModel.to_json(): what candidates' output must match

    def of(self, outcome: str) -> list[Entry]:
        return [e for e in self.entries if e.outcome == outcome]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def ledger_paths(ledger_dir: Path, branch: str) -> tuple[Path, Path]:
    base = ledger_dir / branch  # branch names may hold "/": they become sub-directories, like refs
    return base.with_name(base.name + ".json"), base.with_name(base.name + ".md")


def save_ledger(ledger: Ledger, ledger_dir: Path) -> tuple[Path, Path]:
    json_path, md_path = ledger_paths(ledger_dir, ledger.branch or "dry-run")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(ledger.to_json(), indent=1, default=str) + "\n")
    md_path.write_text(ledger_markdown(ledger))
    return json_path, md_path


def load_ledger_json(ledger_dir: Path, branch: str) -> dict[str, Any] | None:
    path, _ = ledger_paths(ledger_dir, branch)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def ledger_markdown(ledger: Ledger) -> str:
    lines = [
        f"# warp-fix apply: {ledger.branch}",
        "",
        f"- command: `{' '.join(ledger.command)}` (in `{ledger.cwd or '.'}`)",
        f"- base: {ledger.base_ref or 'detached HEAD'} at {ledger.base_commit[:12]}; status: {ledger.status}",
        f"- sampling: {ledger.sampling_rule}",
        f"- probe runs: {ledger.probe_calls} ({ledger.probe_seconds:.0f} s), "
        f"tests {ledger.test_seconds:.0f} s, "
        f"total {ledger.total_seconds:.0f} s",
        "",
    ]
    for warning in ledger.warnings:
        lines.append(f"> warning: {warning}")
    lines += output_model_lines(ledger.output_model)
    sections = (("Kept", KEPT), ("Offered (needs consent)", OFFERED), ("Dropped", DROPPED), ("Declined", DECLINED))
    for title, outcome in sections:
        entries = ledger.of(outcome)
        if not entries:
            continue
        lines += [
            "",
            f"## {title}",
            "",
            "| fix | mechanism | what | result | reason |",
            "|---|---|---|---|---|",
        ]
        for e in entries:
            result = (
                e.numbers.summary()
                if e.numbers
                else (f"untested estimate: {e.expected}" if e.expected else "")
            )
            commit = f" ({e.commit[:10]})" if e.commit else ""
            again = f", again after {e.retry_of}" if e.retry_of else ""
            lines.append(f"| {e.fix_id}{commit}{again} | {e.slug} | {e.title} | {result} | {_cell(e.reason)} |")
    lines += ["", "## Total", ""]
    if ledger.total:
        lines.append(f"- {ledger.total.summary()}")
        lines += [f"- {t.line()}" for t in ledger.total.timing]
    if ledger.total_note:
        lines.append(f"- {ledger.total_note}")
    return "\n".join(lines) + "\n"


def output_model_lines(model: dict[str, Any] | None) -> list[str]:
    """The output model as Markdown: what every candidate's output was held to."""
    if model is None:
        return []
    lines = ["", "## Output", "", f"- {model['summary']}"]
    lines += [f"- {rule['rule']}" for rule in model["rules"]]
    hidden = model["tolerant"] + model["ignored"] - len(model["rules"])
    if hidden > 0:
        lines.append(f"- ... and {hidden} more")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
