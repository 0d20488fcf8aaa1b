"""The Ledger: what apply kept, dropped and declined, with numbers; saved as JSON and Markdown.

It lives under the git directory (`.git/warp-fix/<branch>.json|.md`), never in the user's tree.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warp_fix.compare import Comparison, TimingDelta
from warp_fix.metrics import (
    COLD_CPU,
    COLD_MODULE,
    COMPILE_ELAPSED,
    KERNEL,
    STRUCTURE,
    TIMING,
    WARM_MODULE,
    Metric,
    fmt_ms,
)
from warp_fix.output_model import OutputModelRecord
from warp_fix.report import Stat
from warp_fix.wording import counted

KEPT = "kept"
DROPPED = "dropped"
DECLINED = "declined"
OFFERED = "offered"  # measured both ways on a candidate, not committed: it needs the user's consent
LEDGER_VERSION = 2  # 2: the numbers keep the comparison's own field names and timing records


@dataclass
class Numbers:
    """A comparison as the ledger, the commit and `log` show it: its fields, under its own names, and how
    apply sampled it."""

    verdict: str
    reasons: list[str]
    structure: dict[str, tuple[int, int]]  # by Metric.field
    timing: list[TimingDelta]
    workload_same: bool | None
    output_same: bool | None
    renames: list[tuple[str, str]]
    notes: list[str]
    output_detail: str = ""
    output_summary: str = ""
    output_rules: list[str] = field(default_factory=list)
    per_arm: int = 0
    launch_count: int = 0
    stop: str = ""  # why sampling stopped
    decided_by: list[str] = field(default_factory=list)  # Metric.field of what the verdict rests on, first first
    side_by_side: bool = True  # False: "before" is earlier runs of the same code, reused (counts decided)

    @classmethod
    def of(
        cls, comparison: Comparison, per_arm: int, launch_count: int, stop: str = "", side_by_side: bool = True
    ) -> Numbers:
        return cls(
            verdict=comparison.verdict,
            reasons=list(comparison.reasons),
            structure=dict(comparison.structure),
            timing=list(comparison.timing),
            workload_same=comparison.workload_same,
            output_same=comparison.output_same,
            renames=list(comparison.renames),
            notes=list(comparison.notes),
            output_detail=comparison.output_detail,
            output_summary=comparison.output_summary,
            output_rules=list(comparison.output_rules),
            per_arm=per_arm,
            launch_count=launch_count,
            stop=stop,
            decided_by=decided_by(comparison),
            side_by_side=side_by_side,
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Numbers:
        return cls(
            **{
                **data,
                "structure": {name: (before, after) for name, (before, after) in data["structure"].items()},
                "timing": [_timing_from_json(t) for t in data["timing"]],
                "renames": [(old, new) for old, new in data["renames"]],
            }
        )

    def timing_of(self, metric: Metric) -> TimingDelta | None:
        return next((t for t in self.timing if t.metric == metric.label), None)

    def change(self, metric: Metric) -> tuple[float, float] | None:
        """Before and after of any metric; None when it was not compared or means nothing here."""
        if not metric.timing:
            return self.structure.get(metric.field)
        t = self.timing_of(metric)
        return None if t is None or t.not_applicable else (t.before.median, t.after.median)

    def summary(self) -> str:
        """One line for a person deciding: the structure that changed, then each timing with its significance
        (a change inside the noise band says so: it is no regression, nor a win). A timing that means nothing
        here (n/a) is left out: the trailers and the JSON ledger keep it, with why."""
        parts = [self.structure_line()] if self.structure_line() else []
        cpu = self.timing_of(COLD_CPU)
        for metric in (COLD_MODULE, COLD_CPU, COMPILE_ELAPSED, KERNEL, WARM_MODULE):
            t = self.timing_of(metric)
            if t and not t.not_applicable:
                load = metric is COLD_MODULE and t.significant and t.delta > 0 and cpu and not cpu.significant
                said = "; the builds' CPU time did not move: machine load" if load else ""
                parts.append(f"{metric.label} {t.pair()} ms ({significance(t, self.side_by_side)}{said})")
        if self.output_detail and self.output_detail != "identical":
            parts.append(f"output {self.output_detail}")
        return "; ".join(parts) + f"; {self.runs()}"

    def runs(self) -> str:
        """How many runs the timings stand on: per arm when side by side; else this state's and the previous
        state's reused runs, which are often more (the baseline grows as fixes are judged against it)."""
        if self.side_by_side:
            return f"n={self.per_arm} per arm"
        earlier = counted(self.earlier_runs(), "earlier run")
        return f"{counted(self.per_arm, 'run')} against {earlier} of the previous state"

    def earlier_runs(self) -> int:
        counts = [len(t.before.values) for t in self.timing if not t.not_applicable]
        return max(counts, default=self.per_arm)

    def structure_line(self) -> str:
        """The counts that changed ("identities 5 -> 3, warm builds 5 -> 0"), or "" when none did."""
        moved = [(m, self.structure[m.field]) for m in STRUCTURE if m.field in self.structure]
        return ", ".join(f"{m.label} {b:,} -> {a:,}" for m, (b, a) in moved if a != b)

    def headline(self) -> str:
        """What the verdict rests on, in brief: the deciding metrics' before -> after, a timing with its
        significance. Against reused runs the counts lead: they decided, and the timing makes no claim."""
        parts = []
        names = self.decided_by
        if not self.side_by_side:
            names = sorted(names, key=lambda name: any(m.field == name for m in TIMING))
        for name in names:
            metric = next((m for m in (*TIMING, *STRUCTURE) if m.field == name), None)
            change = self.change(metric) if metric else None
            if metric and change:
                unit = f" {metric.unit}" if metric.unit == "ms" else ""
                before, after = (metric.format(v) if metric.timing else f"{v:,.0f}" for v in change)
                timing = self.timing_of(metric) if metric.timing else None
                said = f" ({significance(timing, self.side_by_side)})" if timing else ""
                parts.append(f"{metric.label} {before} -> {after}{unit}{said}")
        return ", ".join(parts)


def significance(t: TimingDelta, side_by_side: bool = True) -> str:
    """A timing change against its noise band, in words; a slowdown from one run per arm is said to be too few
    runs to call a regression (apply makes no timing verdict from them either). Against earlier runs reused
    for the code without the fix (the counts decided), no claim: the machine's speed may have moved since."""
    if not side_by_side:
        return "not measured side by side"
    if t.significant:
        said = f"{'+' if t.delta > 0 else ''}{fmt_ms(t.delta)} ms, beyond the ±{fmt_ms(t.band)} ms noise band"
        if t.delta > 0 and min(len(t.before.values), len(t.after.values)) < 2:
            said += ", but from one run each: too few to call it a regression (raise --samples)"
        return said
    return f"inside the ±{fmt_ms(t.band)} ms noise band: not significant"


def decided_by(comparison: Comparison) -> list[str]:
    """The metrics a verdict rests on, the one a reader should see first leading: the warm run's module work
    when only warm builds changed (a kept cache), else the counts that shrank (structure decides before
    timing), else the timing metric it was judged on."""
    judged = next((m for m in TIMING if m.label == comparison.judged_on), None)
    shrunk = comparison.shrunk if comparison.structural_win else []
    if judged is WARM_MODULE:
        return [WARM_MODULE.field, *shrunk]
    if shrunk:
        return shrunk
    return [judged.field] if judged else []


def _timing_from_json(data: dict[str, Any]) -> TimingDelta:
    return TimingDelta(**{**data, "before": Stat(**data["before"]), "after": Stat(**data["after"])})


@dataclass
class TestSummary:
    __test__ = False  # not a pytest test class

    command: str
    passed: bool
    exit_code: int | None
    seconds: float
    tail: str = ""


@dataclass(frozen=True)
class EditNote:
    """What a codemod's edit made stale and left, or cleaned up on the side: the diff does not show it, so the
    commit body says it (e.g. "imports left unused removed: atexit")."""

    file: str  # relative to the repository root
    kind: str  # "unused-parameter" | "stale-docstring" | "removed-import" | "removed-helper" | "kept-helper"
    # | "emptied-function" | "removed-comment" | "removed-binding"
    message: str
    function: str = ""  # the function it is about (its docstring, its parameter), when it is about one


@dataclass(frozen=True)
class GoneBuild:
    """A build the fix removed, as the accepted run recorded it: the evidence a commit body shows."""

    module: str
    device: str
    module_ms: float
    run: str  # "cold": a rebuild of a module already built | "warm": rebuilt although its cache was kept
    why: str  # the recorded reasons it was built, "" when the run recorded none
    site: str  # "file:line in function" of user code that triggered it, "" when not recorded


@dataclass(frozen=True)
class ToCheck:
    """Text the change may have made false: a docstring of a function whose body the edit changed, or a
    comment right above the lines it changed."""

    file: str  # relative to the repository root
    line: int  # of the docstring (or comment) in the committed file
    function: str  # dotted within the file: "Solver.run" ("" for a comment at module scope)
    says: str  # the docstring's first line, or the comment's text
    why: str  # what the edit did to the function: "body changed", or the codemod's note
    kind: str = "docstring"  # or "comment"


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
    notes: list[EditNote] = field(default_factory=list)  # from the codemod, for the commit body
    gone: list[GoneBuild] = field(default_factory=list)  # the builds the fix removed, for the commit body
    to_check: list[ToCheck] = field(default_factory=list)  # text the change may have made false

    def brief_reason(self) -> str:
        """The reason in brief, for a person reading the summary: a timing it quotes in full (medians, band, how
        the band was estimated) is said as inside or beyond its noise band; the numbers beside it have the figures."""
        reason = self.reason
        for t in self.numbers.timing if self.numbers else ():
            reason = reason.replace(t.line(), f"{t.metric} {'beyond' if t.significant else 'inside'} its noise band")
        return reason

    def estimate(self) -> str:
        """The fix's expected effect, said to be untested once ("(untested estimate)" ends most of them)."""
        if not self.expected or "untested estimate" in self.expected:
            return self.expected
        return f"untested estimate: {self.expected}"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        numbers, tests = data["numbers"], data["tests"]
        return cls(
            **{
                **data,
                "numbers": Numbers.from_json(numbers) if numbers else None,
                "tests": TestSummary(**tests) if tests else None,
                "notes": [EditNote(**note) for note in data["notes"]],
                "gone": [GoneBuild(**gone) for gone in data.get("gone", [])],
                "to_check": [ToCheck(**point) for point in data.get("to_check", [])],
            }
        )


@dataclass
class Baseline:
    """The baseline measurement in brief: medians and counts apply started from."""

    cold_module_ms: float
    compile_elapsed_ms: float | None  # None: not applicable (see compile_elapsed_na)
    compile_elapsed_na: str
    identities: int
    generated_source_bytes: int
    warm_builds: int
    samples: int
    output_deterministic: bool | None


@dataclass(frozen=True)
class Remaining:
    """The cold start left once no redundant build remains: every identity built once, on every fresh machine.
    `warp-fix bake` builds them once and restores them verified."""

    identities: int
    cold_module_ms: float
    baked: str = ""  # what the last `bake verify` of the command measured, for these identities or other code

    def line(self, command: list[str]) -> str:
        one = self.identities == 1
        return (
            f"no redundant build left: {self.identities} module {'identity' if one else 'identities'}, "
            f"{self.cold_module_ms:,.0f} ms of cold module work, built once on every fresh machine; "
            f"`warp-fix bake -- {shlex.join(command)}` builds {'it' if one else 'them'} once and restores "
            f"{'it' if one else 'them'} verified in CI and deployment (docs/bake.md)"
            + (f"; {self.baked}" if self.baked else "")
        )


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
    baseline: Baseline | None = None
    total: Numbers | None = None
    total_note: str = ""
    warnings: list[str] = field(default_factory=list)
    probe_calls: int = 0
    probe_calls_by_verdict: dict[str, int] = field(default_factory=dict)
    probe_seconds: float = 0.0
    test_seconds: float = 0.0
    total_seconds: float = 0.0
    version: int = LEDGER_VERSION
    output_model: OutputModelRecord | None = None  # what every candidate's output was held to
    remaining: Remaining | None = None  # set when the accepted state rebuilds nothing: what bake would remove

    def of(self, outcome: str) -> list[Entry]:
        return [e for e in self.entries if e.outcome == outcome]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ledger:
        """The one reader of a saved ledger (ValueError when it was written by another version)."""
        if data.get("version") != LEDGER_VERSION:
            raise ValueError(f"ledger version {data.get('version')}, not {LEDGER_VERSION}")
        total, baseline = data["total"], data["baseline"]
        return cls(
            **{
                **data,
                "entries": [Entry.from_json(entry) for entry in data["entries"]],
                "total": Numbers.from_json(total) if total else None,
                "baseline": Baseline(**baseline) if baseline else None,
                "output_model": OutputModelRecord.from_json(data["output_model"]) if data.get("output_model") else None,
                "remaining": Remaining(**data["remaining"]) if data.get("remaining") else None,
            }
        )


def ledger_paths(ledger_dir: Path, branch: str) -> tuple[Path, Path]:
    base = ledger_dir / branch  # branch names may hold "/": they become sub-directories, like refs
    return base.with_name(base.name + ".json"), base.with_name(base.name + ".md")


def save_ledger(ledger: Ledger, ledger_dir: Path) -> tuple[Path, Path]:
    json_path, md_path = ledger_paths(ledger_dir, ledger.branch or "dry-run")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(ledger.to_json(), indent=1, default=str) + "\n")
    md_path.write_text(ledger_markdown(ledger))
    return json_path, md_path


def load_ledger(ledger_dir: Path, branch: str) -> Ledger | None:
    """The branch's saved ledger; None when there is none, or none this version can read."""
    return read_ledger(ledger_paths(ledger_dir, branch)[0])


def read_ledger(path: Path) -> Ledger | None:
    """A ledger saved as JSON (by apply, or by `apply --json`); None when absent or unreadable."""
    try:
        return Ledger.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError):
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
            result = e.numbers.summary() if e.numbers else e.estimate()
            commit = f" ({e.commit[:10]})" if e.commit else ""
            again = f", again after {e.retry_of}" if e.retry_of else ""
            lines.append(f"| {e.fix_id}{commit}{again} | {e.slug} | {e.title} | {result} | {_cell(e.reason)} |")
    lines += ["", "## Total", ""]
    if ledger.total:
        lines.append(f"- {ledger.total.summary()}")
        lines += [f"- {t.record_line()}" for t in ledger.total.timing]
    if ledger.total_note:
        lines.append(f"- {ledger.total_note}")
    if ledger.remaining:
        lines.append(f"- {ledger.remaining.line(ledger.command)}")
    return "\n".join(lines) + "\n"


def output_model_lines(model: OutputModelRecord | None) -> list[str]:
    """The output model as Markdown: what every candidate's output was held to."""
    if model is None:
        return []
    lines = ["", "## Output", "", f"- {model.summary}"]
    lines += [f"- {rule.rule}" for rule in model.rules]
    hidden = model.tolerant + model.ignored - len(model.rules)
    if hidden > 0:
        lines.append(f"- ... and {hidden} more")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
