"""Commit messages for kept fixes: a plain-language subject, a body for people, trailers for machines."""

from __future__ import annotations

import textwrap

from warp_fix.apply.evidence import STALE_DOCSTRING
from warp_fix.apply.git import Git
from warp_fix.apply.ledger import Entry, GoneBuild, Numbers, TestSummary, ToCheck, significance
from warp_fix.apply.trailers import Change, CommitTrailers, TrailerCodec
from warp_fix.metrics import STRUCTURE, TIMING, TRAILED, Metric, fmt_ms
from warp_fix.model import Fix
from warp_fix.wording import counted

FALLBACK_NAME = "warp-fix"
FALLBACK_EMAIL = "warp-fix@localhost"
WIDTH = 72
MAX_EVIDENCE = 6  # builds listed as gone; the rest are counted
OUTPUT_RULES_SHOWN = 2  # output lines that may vary, described; the rest are counted (the ledger lists each)
BY_FIELD = {metric.field: metric for metric in (*TIMING, *STRUCTURE)}


def commit_message(fix: Fix, entry: Entry, branch: str) -> str:
    """The commit of a kept fix, as a reviewer reads it: the metric that decided leads the body; then what the
    fix does, the other measurements, the builds that are gone, what the codemod noted, the text left for the
    reviewer to check, the tests and how to roll back; trailers for machines last."""
    numbers = entry.numbers
    assert numbers is not None, "a kept fix was measured"
    body = [_decision(numbers)]
    if fix.description:
        body.append(_wrap(fix.description))
    body.append(_measurements(numbers))
    sections = (
        ("Builds gone:", [_gone_line(g) for g in entry.gone[:MAX_EVIDENCE]] + _more(entry.gone)),
        ("Codemod notes:", [f"{n.file}: {n.message}" for n in entry.notes if n.kind != STALE_DOCSTRING]),
        ("Left for you to check:", [_check_line(point) for point in entry.to_check] + _unplaced(entry)),
    )
    body += [_listed(heading, items) for heading, items in sections if items]
    body.append(_tests_line(entry.tests))
    body.append(_roll_back(branch, entry.files))
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
    return CommitTrailers(
        fix.slug, fix.id, numbers.verdict, numbers.per_arm, changes, numbers.output_summary, numbers.side_by_side
    )


def _decision(n: Numbers) -> str:
    """The first line of the body: the metric(s) the fix was kept on, with their numbers."""
    decided = [line for metric in _deciding(n) if (line := _deciding_line(n, metric))]
    if not decided:
        return _wrap(f"Kept as {n.verdict}: " + "; ".join(n.reasons) + ".")
    return _wrap("Kept for " + "; ".join(decided) + ".")


def _deciding_line(n: Numbers, metric: Metric) -> str:
    """A deciding metric in brief (the list below has no second copy of it)."""
    return _metric_line(n, metric)


def _deciding(n: Numbers) -> list[Metric]:
    return [BY_FIELD[name] for name in n.decided_by if name in BY_FIELD]


def _metric_line(n: Numbers, metric: Metric, standing: bool = True) -> str:
    """`label: before -> after`, a timing with where it stands against its noise band (unless `standing` is
    False: a heading said it once for all) and its runs per arm (the spread and how the band was estimated are
    in the ledger); "" when not measured."""
    if metric.timing:
        timing = n.timing_of(metric)
        if timing is None or timing.not_applicable:
            return timing.record_line() if timing else ""
        runs = f"n={len(timing.before.values)}/{len(timing.after.values)}"
        said = f"{significance(timing, n.side_by_side)}, " if standing else ""
        return f"{metric.label}: {timing.pair()} ms ({said}{runs})"
    if metric.field not in n.structure:
        return ""
    before, after = n.structure[metric.field]
    return f"{metric.label}: {before:,} -> {after:,}"  # a count, or bytes as its label says


def _measurements(n: Numbers) -> str:
    """Every other metric measured, then what the comparison checked besides speed."""
    stop = f" ({n.stop})" if n.stop else ""
    if n.side_by_side:
        lines = [f"Also measured, interleaved with the previous state, n={n.per_arm} per arm{stop}:"]
    else:
        earlier = counted(n.earlier_runs(), "run")
        lines = [f"Also measured, {counted(n.per_arm, 'run')} of this state against {earlier} of the previous one "
                 f"taken earlier in this apply, not side by side{stop}:"]
    deciding = set(_deciding(n))
    others = [m for m in (*TIMING, *STRUCTURE) if m not in deciding]
    still = [m for m in others if not m.timing and _unmoved(n, m)]
    listed = [m for m in others if m not in still]
    lines += [f"- {line}" for metric in listed if (line := _metric_line(n, metric, standing=n.side_by_side))]
    if still:
        lines.append("- unchanged: " + ", ".join(f"{m.label} ({n.structure[m.field][0]:,})" for m in still))
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
    lines += [f"- output {rule}" for rule in n.output_rules[:OUTPUT_RULES_SHOWN]]
    if len(n.output_rules) > OUTPUT_RULES_SHOWN:
        more = len(n.output_rules) - OUTPUT_RULES_SHOWN
        lines.append(f"- output: {counted(more, 'more line')} like these (the ledger lists each)")
    lines += [f"- note: {note}" for note in n.notes]
    return "\n".join(_wrap(line, indent="  " if line.startswith("- ") else "") for line in lines)


def _unmoved(n: Numbers, metric: Metric) -> bool:
    """A count the fix left as it was: one line names them all, the trailers keep each for machines."""
    before_after = n.structure.get(metric.field)
    return before_after is not None and before_after[0] == before_after[1]


def _gone_line(gone: GoneBuild) -> str:
    run = "rebuild" if gone.run == "cold" else "warm-start compile"
    why = f": {gone.why}" if gone.why else ""
    where = f" ({gone.site})" if gone.site and gone.site not in gone.why else ""
    return f"{run} of {gone.module} on {gone.device}, {fmt_ms(gone.module_ms)} ms{why}{where}"


def _more(gone: list[GoneBuild]) -> list[str]:
    return [f"... and {len(gone) - MAX_EVIDENCE} more"] if len(gone) > MAX_EVIDENCE else []


def _check_line(point: ToCheck) -> str:
    """Where, what the docstring says, and why it may be false now (once, when the reason quotes it)."""
    says = "" if point.says in point.why else f'"{point.says}" '
    if point.kind == "comment":
        return f"{point.file}:{point.line} comment {says}({point.why})"
    return f"{point.file}:{point.line} {point.function}(): {says}({point.why})"


def _unplaced(entry: Entry) -> list[str]:
    """The codemod's stale-docstring notes on a function no line of "Left for you to check" places."""
    placed = {(point.file, point.function.rsplit(".", 1)[-1]) for point in entry.to_check}
    return [
        f"{note.file}: {note.message}"
        for note in entry.notes
        if note.kind == STALE_DOCSTRING and (note.file, note.function) not in placed
    ]


def _listed(heading: str, items: list[str]) -> str:
    return "\n".join([heading] + [_wrap(f"- {item}", indent="  ") for item in items])


def _roll_back(branch: str, files: list[str]) -> str:
    where = f" on {branch}" if branch else ""
    log = f" (`warp-fix log {branch}` lists its sha)" if branch else ""
    return _wrap(f"Roll back: `git revert` this commit{where}{log}; it changes only {', '.join(files)}.")


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
