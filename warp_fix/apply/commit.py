"""Commit messages for kept fixes: a plain-language subject, a body for people, trailers for machines."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from warp_fix.apply.git import Git
from warp_fix.apply.ledger import EditNote, Numbers, TestSummary
from warp_fix.apply.trailers import Change, CommitTrailers, TrailerCodec
from warp_fix.metrics import STRUCTURE, TRAILED, Metric
from warp_fix.model import Fix

FALLBACK_NAME = "warp-fix"
FALLBACK_EMAIL = "warp-fix@localhost"
WIDTH = 72


def commit_message(
    fix: Fix, numbers: Numbers, tests: TestSummary | None, sampling: str, notes: Sequence[EditNote] = ()
) -> str:
    body = [_wrap(fix.description)] if fix.description else []
    if notes:
        body.append(_edit_notes(notes))
    body.append(_measurements(numbers, sampling))
    body.append(_tests_line(tests))
    return "\n\n".join([fix.title.strip().rstrip("."), *body, trailers(fix, numbers)]) + "\n"


def trailers(fix: Fix, numbers: Numbers) -> str:
    return TrailerCodec.encode(commit_trailers(fix, numbers))


def commit_trailers(fix: Fix, numbers: Numbers) -> CommitTrailers:
    """What the commit records for machines: every metric the comparison measured, n/a ones included."""
    changes: dict[Metric, Change | None] = {}
    for metric in TRAILED:
        timing = numbers.timing_of(metric) if metric.timing else None
        if timing is not None:
            changes[metric] = None if timing.not_applicable else Change(timing.before.median, timing.after.median)
        elif metric.field in numbers.structure:
            changes[metric] = Change(*numbers.structure[metric.field])
    return CommitTrailers(fix.slug, fix.id, numbers.verdict, numbers.per_arm, changes, numbers.output_summary)


def _measurements(n: Numbers, sampling: str) -> str:
    lines = [f"Measured against the previous state, interleaved, n={n.per_arm} per arm ({sampling}):"]
    lines += [f"- {t.record_line()}" for t in n.timing]
    for metric in STRUCTURE:
        if metric.field in n.structure:
            before, after = n.structure[metric.field]
            lines.append(f"- {metric.label}: {before} -> {after}")
    launches = {
        True: f"yes, {n.launch_count} launches in the same order and structure",
        False: "NO",
        None: "unverifiable (no launches recorded)",
    }[n.workload_same]
    lines.append(f"- launches preserved: {launches}")
    if n.renames:
        lines.append("- kernel keys renamed: " + ", ".join(f"{a} -> {b}" for a, b in n.renames))
    output = {True: "yes", False: "NO", None: "not compared"}[n.output_same]
    lines.append(f"- program output preserved: {output}" + (f", {n.output_detail}" if n.output_detail else ""))
    lines += [f"- output {rule}" for rule in n.output_rules]
    lines += [f"- note: {note}" for note in n.notes]
    return "\n".join(_wrap(line, indent="  ") if len(line) > WIDTH else line for line in lines)


def _edit_notes(notes: Sequence[EditNote]) -> str:
    """What the edit left or cleaned up that the diff does not show, file by file."""
    lines = ["Codemod notes:"] + [f"- {note.file}: {note.message}" for note in notes]
    return "\n".join(_wrap(line, indent="  ") if len(line) > WIDTH else line for line in lines)


def _tests_line(tests: TestSummary | None) -> str:
    if tests is None:
        return "Tests: none configured (gated on launches, output and options only)."
    return _wrap(f"Tests: `{tests.command}` passed (exit {tests.exit_code}, {tests.seconds:.1f} s).")


def _wrap(text: str, indent: str = "") -> str:
    return "\n".join(
        textwrap.fill(p, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
        for p in text.strip().split("\n")
    )


def identity_env(git: Git) -> dict[str, str]:
    """The repo's configured identity is used as is; without one, warp-fix's, for this commit only."""
    name = git.run("config", "user.name", check=False)
    email = git.run("config", "user.email", check=False)
    if name and email:
        return {}
    return {
        "GIT_AUTHOR_NAME": name or FALLBACK_NAME,
        "GIT_AUTHOR_EMAIL": email or FALLBACK_EMAIL,
        "GIT_COMMITTER_NAME": name or FALLBACK_NAME,
        "GIT_COMMITTER_EMAIL": email or FALLBACK_EMAIL,
    }


def commit_files(git: Git, files: list[str], message: str) -> str:
    """Commit exactly these files (not whatever else the tests left behind); returns the new sha.

    Hooks and signing are skipped: the commit is gated by warp-fix's own measurements and tests,
    and a hook or pinentry prompt must not stall an unattended run.
    """
    git.run("add", "--", *files)
    git.run(
        "-c",
        "commit.gpgsign=false",
        "commit",
        "-q",
        "--no-verify",
        "-F",
        "-",
        "--",
        *files,
        env=identity_env(git),
        stdin=message,
    )
    return git.run("rev-parse", "HEAD")
