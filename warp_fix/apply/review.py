"""`warp-fix log`: the commits of a branch made by apply, with the deltas their trailers carry."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from warp_fix.apply.commit import TRAILER_PREFIX
from warp_fix.apply.errors import ApplyError
from warp_fix.apply.git import Git
from warp_fix.apply.ledger import load_ledger_json
from warp_fix.apply.worktree import UserRepo

DELTA = re.compile(r"^\s*(-?[\d.]+)\s*->\s*(-?[\d.]+)")
# Ledger names -> the trailer keys `log` shows them under.
STRUCTURE_KEYS = {
    "identities": "Identities",
    "generated_source_bytes": "Source-Bytes",
    "warm_builds": "Warm-Builds",
    "lto_artifacts": "LTO-Artifacts",
}
TIMING_KEYS = {"cold module work": "Cold-Module-Ms", "compile elapsed": "Compile-Elapsed-Ms"}
SEP = "\x1f"
END = "\x1e"


@dataclass
class CommitRow:
    sha: str
    subject: str
    files: list[str]
    trailers: dict[str, str]  # "Mechanism" -> "late-module-options" (prefix dropped)

    @property
    def by_warp_fix(self) -> bool:
        return "Mechanism" in self.trailers

    def delta(self, key: str) -> tuple[float, float] | None:
        match = DELTA.match(self.trailers.get(key, ""))
        return (float(match.group(1)), float(match.group(2))) if match else None


@dataclass
class BranchLog:
    branch: str
    base: str
    base_source: str  # "ledger" | "--base" | "merge-base with <ref>"
    rows: list[CommitRow] = field(default_factory=list)
    ledger_total: dict | None = None
    ledger_commits: list[str] = field(default_factory=list)  # the commits apply kept, per its ledger

    @property
    def ours(self) -> list[CommitRow]:
        return [r for r in self.rows if r.by_warp_fix]

    @property
    def foreign(self) -> list[CommitRow]:
        return [r for r in self.rows if not r.by_warp_fix]

    def totals(self) -> dict[str, tuple[float, float]]:
        """The branch's totals: apply's own measurement of the head against the base when it covers exactly
        these commits (the figures apply printed), else chained from the commits' trailers."""
        measured = self._measured_totals()
        return measured if measured is not None else self._chained_totals()

    def totals_source(self) -> str:
        """Which measurement the totals come from, in words, for the line that prints them."""
        if self._measured_totals() is not None:
            per_arm = (self.ledger_total or {}).get("per_arm")
            return f"measured by apply: branch head against its base, interleaved, n={per_arm} per arm"
        why = " (the apply ledger does not cover these commits)" if self.ledger_total else ""
        return f"chained from the commits' trailers: each timing delta against its predecessor, summed{why}"

    def _measured_totals(self) -> dict[str, tuple[float, float]] | None:
        total = self.ledger_total
        if not total or [r.sha for r in self.ours] != self.ledger_commits:
            return None
        totals: dict[str, tuple[float, float]] = {}
        structure = total.get("structure", {})
        for field_name, key in STRUCTURE_KEYS.items():
            if field_name in structure:
                before, after = structure[field_name]
                totals[key] = (float(before), float(after))
        for timing in total.get("timing", []):
            key = TIMING_KEYS.get(timing["metric"])
            if key and not timing.get("not_applicable"):
                totals[key] = (timing["before_ms"], timing["after_ms"])
        return totals

    def _chained_totals(self) -> dict[str, tuple[float, float]]:
        """Identities etc. chain (first before -> last after); timings sum the per-commit deltas."""
        totals: dict[str, tuple[float, float]] = {}
        for key in STRUCTURE_KEYS.values():
            deltas = [d for r in self.ours if (d := r.delta(key))]
            if deltas:
                totals[key] = (deltas[0][0], deltas[-1][1])
        for key in TIMING_KEYS.values():
            deltas = [d for r in self.ours if (d := r.delta(key))]
            if deltas:
                totals[key] = (deltas[0][0], deltas[0][0] + sum(a - b for b, a in deltas))
        return totals

    def to_json(self) -> dict:
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
                    "trailers": r.trailers,
                }
                for r in self.rows
            ],
            "totals": {k: list(v) for k, v in self.totals().items()},
            "totals_source": self.totals_source(),
            "ledger_total": self.ledger_total,
        }


def branch_log(cwd: Path, branch: str | None = None, base: str | None = None) -> BranchLog:
    repo = UserRepo.discover(cwd)
    git = repo.git
    name = branch or repo.head_ref
    if not name:
        raise ApplyError("HEAD is detached: name the branch, e.g. warp-fix log wf/startup")
    if not repo.branch_exists(name):
        raise ApplyError(f"no branch {name}")
    ledger = load_ledger_json(repo.ledger_dir(), name)
    start, source = _base(git, repo, name, base, ledger)
    shas = git.run("rev-list", "--reverse", f"{start}..refs/heads/{name}").split()
    log = BranchLog(name, start, source, [_row(git, sha) for sha in shas])
    if ledger and ledger.get("total"):
        log.ledger_total = ledger["total"]
        log.ledger_commits = [e["commit"] for e in ledger.get("entries", []) if e.get("outcome") == "kept"]
    return log


def _base(git: Git, repo: UserRepo, name: str, base: str | None, ledger: dict | None) -> tuple[str, str]:
    if base:
        return git.run("merge-base", base, f"refs/heads/{name}"), f"merge-base with {base}"
    if ledger and ledger.get("base_commit") and git.ok("cat-file", "-e", ledger["base_commit"] + "^{commit}"):
        return ledger["base_commit"], f"recorded by apply ({ledger.get('base_ref') or 'detached HEAD'})"
    if repo.head_ref != name:
        return git.run(
            "merge-base", "HEAD", f"refs/heads/{name}"
        ), f"merge-base with {repo.head_ref or 'HEAD'}"
    raise ApplyError(f"cannot tell where {name} started (no apply ledger): pass --base REF")


def _row(git: Git, sha: str) -> CommitRow:
    raw = git.run("show", "-s", f"--format=%s{SEP}%(trailers:only,unfold){END}", sha)
    subject, _, trailer_text = raw.rstrip(END).partition(SEP)
    trailers = {}
    for line in trailer_text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.startswith(TRAILER_PREFIX):
            trailers[key[len(TRAILER_PREFIX) :]] = value.strip()
    files = git.run("diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha).splitlines()
    return CommitRow(sha, subject, files, trailers)
