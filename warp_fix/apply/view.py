"""Terminal views (rich) of the apply ledger and of `warp-fix log`.

Every text that comes from data (commands, paths, config keys such as `[tool.warp-fix]`, dtypes such as
`array[float32]`) is escaped: rich would read square brackets as markup and drop them.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from warp_fix.apply.ledger import DECLINED, DROPPED, KEPT, OFFERED, Entry, Ledger, Numbers, significance
from warp_fix.apply.review import BranchLog, CommitRow
from warp_fix.apply.trailers import NOT_APPLICABLE
from warp_fix.metrics import COLD_MODULE, COMPILE_ELAPSED, IDENTITIES, KERNEL, Metric, fmt_ms
from warp_fix.wording import counted

STYLE = {KEPT: "green", OFFERED: "magenta", DROPPED: "yellow", DECLINED: "dim", "planned": "cyan"}


def print_ledger(ledger: Ledger, console: Console, files=None, shown: Collection[str] = ()) -> None:
    """The ledger as a table and a summary; a warning already among the `shown` progress lines is not repeated."""
    dry = ledger.status == "dry-run"
    table = Table(title="warp-fix apply --dry-run" if dry else f"warp-fix apply → {escape(ledger.branch or '')}")
    table.add_column("fix", no_wrap=True)
    table.add_column("outcome", no_wrap=True)
    table.add_column("measured", ratio=2, overflow="fold")
    table.add_column("what / why", ratio=3, overflow="fold")
    for entry in ledger.entries:
        table.add_row(*_row(entry))
    if ledger.entries:  # nothing to fix: the note under the table says so, an empty table would not
        console.print(table)
    for warning in ledger.warnings:
        if f"warning: {warning}" in shown:
            continue
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
    if ledger.output_model and ledger.output_model.lenient:
        console.print(f"output: {escape(ledger.output_model.summary)}", highlight=False)
    if ledger.total:
        console.print(f"[bold]total vs baseline:[/] {escape(total_line(ledger.total))}", highlight=False)
    if ledger.total_note:
        console.print(f"[dim]{escape(ledger.total_note)}[/]", highlight=False)
    if ledger.remaining:
        console.print(ledger.remaining.line(ledger.command), markup=False, highlight=False)
    kept = len(ledger.of(KEPT))
    if not dry:
        console.print(
            f"{kept} kept, {len(ledger.of(OFFERED))} offered, {len(ledger.of(DROPPED))} dropped, "
            f"{len(ledger.of(DECLINED))} declined; "
            f"{counted(ledger.probe_calls, 'measurement')} ({ledger.probe_seconds:.0f} s), "
            f"tests {ledger.test_seconds:.0f} s, "
            f"total {ledger.total_seconds:.0f} s",
            highlight=False,
        )
    if files:
        console.print(f"[dim]ledger: {escape(str(files[1]))} (and .json)[/]", highlight=False)
    if kept and ledger.branch:
        console.print(f"review: warp-fix log {ledger.branch}", markup=False, highlight=False)


def total_line(total: Numbers) -> str:
    """The branch against its base for a person deciding: the structural change first, then each timing with
    its significance, so a change inside the noise band never reads as a regression (or a win)."""
    return total.summary() if total.structure_line() else f"no structural change; {total.summary()}"


def interrupted_lines(ledger: Ledger, files: tuple[Path, Path] | None) -> list[str]:
    """What an interrupted apply left behind, for the lines under `warp-fix: interrupted`."""
    kept = len(ledger.of(KEPT))
    if not kept:
        return [f"no fix was kept before the interrupt: no branch was left ({ledger.branch} is free again)"]
    commits = counted(kept, "measured commit")
    lines = [f"branch {ledger.branch} was kept with {commits}: the fixes kept before the interrupt"]
    if files:
        lines.append(f"ledger: {files[1]} (and .json)")
    lines += [
        f"review it: warp-fix log {ledger.branch}",
        f"delete it: git branch -D {ledger.branch}",
    ]
    return lines


def _row(entry: Entry) -> list[str]:
    outcome = f"[{STYLE.get(entry.outcome, '')}]{entry.outcome}[/]"
    fix = escape(entry.fix_id + (f" {entry.commit[:8]}" if entry.commit else ""))
    why = entry.brief_reason()
    if entry.numbers is None and entry.expected:
        why += f"; {entry.estimate()}"
    what = f"{escape(entry.title)}\n[dim]{escape(why)}[/]"
    n = entry.numbers
    if n is None:
        return [fix, outcome, "", what]
    headline = n.headline() if entry.outcome == KEPT else ""
    figures = {
        IDENTITIES: _pair(n.structure.get(IDENTITIES.field)),
        COLD_MODULE: _ms(n, COLD_MODULE),
        COMPILE_ELAPSED: _ms(n, COMPILE_ELAPSED),
        KERNEL: _ms(n, KERNEL),
    }
    lines = [
        f"kept for {headline}" if headline else "",
        *_cell_lines(headline, figures),
        f"output {n.output_summary}" if n.output_detail and n.output_detail != "identical" else "",
        f"{n.runs()}, {n.verdict}",
    ]
    return [fix, outcome, escape("\n".join(line for line in lines if line)), what]


def _cell_lines(headline: str, figures: dict[Metric, str]) -> list[str]:
    """A measured cell's figure lines: each metric once (none the "kept for" line already gives), and only
    where it has a figure that moved or was timed (the ledger keeps unchanged counts and n/a)."""
    return [f"{metric.label} {text}" for metric, text in figures.items() if text and metric.label not in headline]


def _pair(pair) -> str:
    return f"{pair[0]} → {pair[1]}" if pair and pair[0] != pair[1] else ""


def _ms(numbers: Numbers, metric: Metric) -> str:
    t = numbers.timing_of(metric)
    if t is None or t.not_applicable:
        return ""
    return f"{fmt_ms(t.before.median)} → {fmt_ms(t.after.median)} ms ({significance(t, numbers.side_by_side)})"


def print_log(log: BranchLog, console: Console) -> None:
    """The branch's commits in three columns that fit a 100-column terminal without splitting a word: the
    commit, what it changed (subject, mechanism, files) and what it measured against its predecessor."""
    if log.decided_without_branch is not None:
        _print_nothing_kept(log, console, log.decided_without_branch)
        return
    commits = counted(len(log.rows), "commit")
    table = Table(title=escape(f"{log.branch}: {commits} since {log.base[:10]} ({log.base_source})"))
    table.add_column("commit", no_wrap=True)
    table.add_column("what", ratio=2, overflow="fold")
    table.add_column("measured", ratio=3, overflow="fold")
    for row in log.rows:
        by = row.trailers.mechanism if row.trailers else "not made by warp-fix"
        what = f"{escape(row.subject)}\n[dim]{escape(by)}: {escape(', '.join(row.files))}[/]"
        table.add_row(row.sha[:10], what, escape(_commit_measured(log, row)))
    console.print(table)
    totals = log.shown_totals()
    if totals:
        text = ", ".join(_total(log, m, before, after) for m, (before, after) in totals.items())
        console.print(
            f"totals over {counted(len(log.ours), 'warp-fix commit')} ({log.totals_source()}): {text}",
            markup=False,
            highlight=False,
        )
    if log.foreign:
        foreign = counted(len(log.foreign), "commit")
        console.print(f"{foreign} not made by warp-fix (no Warp-Fix trailers)", highlight=False)


def _print_nothing_kept(log: BranchLog, console: Console, decided: list[Entry]) -> None:
    """The review of an apply that kept nothing: it made no branch, so its ledger says what it decided."""
    console.print(
        f"{log.branch}: apply kept no fix, so there is no branch; it decided {counted(len(decided), 'fix', 'fixes')} "
        f"(from {log.base[:10]}):",
        markup=False, highlight=False,
    )
    for entry in decided:
        console.print(f"  {entry.fix_id} {entry.outcome}: {entry.title} ({entry.brief_reason()})",
                      markup=False, highlight=False)


def _commit_measured(log: BranchLog, row: CommitRow) -> str:
    """What the fix was kept for, then its recorded counts and timings; "" for a commit warp-fix did not make."""
    if row.trailers is None:
        return ""
    headline = log.headlines.get(row.sha, "")
    figures = {metric: _recorded(log, row, metric) for metric in (IDENTITIES, COLD_MODULE, COMPILE_ELAPSED)}
    return "\n".join(([f"kept for {headline}"] if headline else []) + _cell_lines(headline, figures))


def _recorded(log: BranchLog, row: CommitRow, metric: Metric) -> str:
    """A commit's recorded figure for its cell: a timing against its band, a count that moved; "" otherwise."""
    text = row.text(metric)
    if not text or text == NOT_APPLICABLE:
        return ""
    if metric.timing:
        return _timing_cell(log, row, text, metric)
    change = row.change(metric)
    return text if change is None or change[0] != change[1] else ""


def _timing_cell(log: BranchLog, row: CommitRow, text: str, metric: Metric) -> str:
    """A commit's timing in ms, against its noise band when apply's ledger says how its own measurement fell;
    no claim when the code without the fix was its earlier runs, reused."""
    if row.trailers is not None and not row.trailers.side_by_side:
        return f"{text} ms (not measured side by side)"
    measured = log.inside_band.get(row.sha)
    if measured is None:  # not in apply's ledger: as the commit records it
        return f"{text} ms"
    side = "inside" if metric.label in measured else "beyond"
    return f"{text} ms ({side} its noise band)"


def _total(log: BranchLog, metric: Metric, before: float, after: float) -> str:
    """A total as `log` prints it; a measured timing says when it is inside its noise band."""
    unit = " ms" if metric.unit == "ms" else ""  # counts and bytes: the label names the unit
    low, high = (metric.format(v) if metric.timing else f"{v:,.0f}" for v in (before, after))
    said = log.total_significance(metric)
    return f"{metric.label} {low} -> {high}{unit}" + (f" ({said})" if said else "")
