"""`warp-fix log`: the commits of a branch made by apply, with the deltas their trailers carry."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warp_fix.apply.errors import ApplyError
from warp_fix.apply.git import Git
from warp_fix.apply.ledger import KEPT, Entry, Ledger, Numbers, load_ledger, significance
from warp_fix.apply.trailers import CommitTrailers, TrailerCodec
from warp_fix.apply.worktree import UserRepo
from warp_fix.compare import TimingDelta
from warp_fix.metrics import STRUCTURE, TIMING, Metric

SEP = "\x1f"
END = "\x1e"
# What `log` totals: every metric a commit records, sizes first.
TOTALLED = tuple(metric for metric in (*STRUCTURE, *TIMING) if metric.trailer)


@dataclass
class CommitRow:
    sha: str
    subject: str
    files: list[str]
    trailers: CommitTrailers | None  # None: a commit apply did not make

    @property
    def by_warp_fix(self) -> bool:
        return self.trailers is not None

    def change(self, metric: Metric) -> tuple[float, float] | None:
        change = self.trailers.changes.get(metric) if self.trailers else None
        return (change.before, change.after) if change else None

    def text(self, metric: Metric) -> str:
        return self.trailers.text(metric) if self.trailers else ""


@dataclass
class BranchLog:
    branch: str
    base: str
    base_source: str  # "ledger" | "--base" | "merge-base with <ref>"
    rows: list[CommitRow] = field(default_factory=list)
    ledger_total: Numbers | None = None
    ledger_commits: list[str] = field(default_factory=list)  # the commits apply kept, per its ledger
    headlines: dict[str, str] = field(default_factory=dict)  # sha -> what the fix was kept for, per the ledger
    # sha -> the timing metrics (labels) its own measurement left inside their noise band, per the ledger
    inside_band: dict[str, set[str]] = field(default_factory=dict)
    # what apply decided when it kept nothing: it made no branch, and its ledger is all there is to review
    decided_without_branch: list[Entry] | None = None

    @property
    def ours(self) -> list[CommitRow]:
        return [r for r in self.rows if r.by_warp_fix]

    @property
    def foreign(self) -> list[CommitRow]:
        return [r for r in self.rows if not r.by_warp_fix]

    def totals(self) -> dict[Metric, tuple[float, float]]:
        """The branch's totals: apply's own measurement of the head against the base when it covers exactly
        these commits (the figures apply printed), else chained from the commits' trailers."""
        measured = self._measured_totals()
        return measured if measured is not None else self._chained_totals()

    def totals_source(self) -> str:
        """Which measurement the totals come from, in words, for the line that prints them."""
        if self.ledger_total is not None and self._measured_totals() is not None:
            how = "interleaved" if self.ledger_total.side_by_side else "the base's runs from earlier reused"
            return f"measured by apply: branch head against its base, {how}, n={self.ledger_total.per_arm} per arm"
        why = " (the apply ledger does not cover these commits)" if self.ledger_total else ""
        return f"chained from the commits' trailers: each timing delta against its predecessor, summed{why}"

    def shown_totals(self) -> dict[Metric, tuple[float, float]]:
        """The totals worth a reader's eye: a count that was 0 before and after (no LTO in a CPU run) says nothing."""
        return {m: pair for m, pair in self.totals().items() if m.timing or pair != (0.0, 0.0)}

    def total_significance(self, metric: Metric) -> str:
        """A measured timing total against its noise band, in words; "" for a count or chained totals."""
        timing = self.measured_timing(metric) if metric.timing else None
        if timing is None or timing.not_applicable or self.ledger_total is None:
            return ""
        return significance(timing, self.ledger_total.side_by_side)

    def measured_timing(self, metric: Metric) -> TimingDelta | None:
        """The timing total apply measured, with its noise band; None when the totals are chained."""
        if self.ledger_total is None or self._measured_totals() is None:
            return None
        return self.ledger_total.timing_of(metric)

    def _measured_totals(self) -> dict[Metric, tuple[float, float]] | None:
        total = self.ledger_total
        if not total or [r.sha for r in self.ours] != self.ledger_commits:
            return None
        return {
            metric: (float(change[0]), float(change[1]))
            for metric in TOTALLED
            if (change := total.change(metric)) is not None
        }

    def _chained_totals(self) -> dict[Metric, tuple[float, float]]:
        """Sizes chain (first before -> last after); timings sum the per-commit deltas."""
        totals: dict[Metric, tuple[float, float]] = {}
        for metric in TOTALLED:
            deltas = [d for r in self.ours if (d := r.change(metric))]
            if not deltas:
                continue
            first = deltas[0][0]
            totals[metric] = (first, first + sum(a - b for b, a in deltas)) if metric.timing else (first, deltas[-1][1])
        return totals

    def to_json(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "base": self.base,
            "base_source": self.base_source,
            "commits": [
                {
                    "sha": r.sha,
                    "subject": r.subject,
                    "files": r.files,
                    "by_warp_fix": r.by_warp_fix,
                    "trailers": TrailerCodec.fields(r.trailers) if r.trailers else {},
                }
                for r in self.rows
            ],
            "totals": {metric.trailer: list(v) for metric, v in self.totals().items()},
            "totals_source": self.totals_source(),
            "ledger_total": dataclasses.asdict(self.ledger_total) if self.ledger_total else None,
            "decided_without_branch": [
                {"fix": e.fix_id, "slug": e.slug, "title": e.title, "outcome": e.outcome, "reason": e.reason}
                for e in self.decided_without_branch or ()
            ] if self.decided_without_branch is not None else None,
        }


def branch_log(cwd: Path, branch: str | None = None, base: str | None = None) -> BranchLog:
    repo = UserRepo.discover(cwd)
    git = repo.git
    name = branch or repo.head_ref
    if not name:
        raise ApplyError("HEAD is detached: name the branch, e.g. warp-fix log wf/startup")
    ledger = load_ledger(repo.ledger_dir(), name)
    if not repo.branch_exists(name):
        if ledger is None:
            raise ApplyError(f"no branch {name}")
        # apply kept nothing, so it made no branch: what it decided is the review (a scripted apply-then-log goes on)
        base = ledger.base_commit
        return BranchLog(name, base, f"recorded by apply ({ledger.base_ref or 'detached HEAD'})",
                         decided_without_branch=list(ledger.entries))
    start, source = _base(git, repo, name, base, ledger)
    shas = git.run("rev-list", "--reverse", f"{start}..refs/heads/{name}").split()
    log = BranchLog(name, start, source, [_row(git, sha) for sha in shas])
    if ledger:
        attach_ledger(log, ledger)
    return log


def attach_ledger(log: BranchLog, ledger: Ledger) -> None:
    """What apply's ledger adds to the commits: its measured total, what each fix was kept for, and which of
    each commit's timings its own measurement left inside the noise band."""
    if ledger.total:
        log.ledger_total = ledger.total
        log.ledger_commits = [e.commit for e in ledger.of(KEPT) if e.commit]
    log.headlines = {e.commit: e.numbers.headline() for e in ledger.of(KEPT) if e.commit and e.numbers}
    log.inside_band = {
        e.commit: {t.metric for t in e.numbers.timing if not t.not_applicable and not t.significant}
        for e in ledger.of(KEPT)
        if e.commit and e.numbers
    }


def _base(git: Git, repo: UserRepo, name: str, base: str | None, ledger: Ledger | None) -> tuple[str, str]:
    if base:
        return git.run("merge-base", base, f"refs/heads/{name}"), f"merge-base with {base}"
    if ledger and ledger.base_commit and git.ok("cat-file", "-e", ledger.base_commit + "^{commit}"):
        return ledger.base_commit, f"recorded by apply ({ledger.base_ref or 'detached HEAD'})"
    if repo.head_ref != name:
        return git.run("merge-base", "HEAD", f"refs/heads/{name}"), f"merge-base with {repo.head_ref or 'HEAD'}"
    raise ApplyError(f"cannot tell where {name} started (no apply ledger): pass --base REF")


def _row(git: Git, sha: str) -> CommitRow:
    raw = git.run("show", "-s", f"--format=%s{SEP}%(trailers:only,unfold){END}", sha)
    subject, _, trailer_text = raw.rstrip(END).partition(SEP)
    files = git.run("diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha).splitlines()
    return CommitRow(sha, subject, files, TrailerCodec.decode(trailer_text))
