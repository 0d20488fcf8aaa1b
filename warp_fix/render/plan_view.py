"""The plan as a terminal table and as Markdown fit for a pull-request description."""

from __future__ import annotations

import json

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from warp_fix.model import FIRED, Finding, NotProposed, Plan
from warp_fix.wording import counted

STATUS_STYLE = {"fired": "bold red", "ruled-out": "green", "not-applicable": "dim"}


def print_plan(plan: Plan, console: Console) -> None:
    for warning in plan.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if built_nothing(plan):
        console.print(answer(plan), highlight=False)
        return
    table = Table(title="Findings (every mechanism checked)")
    for column in ("mechanism", "status", "reason"):
        table.add_column(column)
    for finding in plan.findings:
        style = STATUS_STYLE.get(finding.status, "")
        table.add_row(escape(finding.title), f"[{style}]{finding.status}[/]", escape(finding.reason))
    console.print(table)
    if not plan.fixes:
        console.print(answer(plan), style="yellow" if _fired(plan) else "green", highlight=False)
    for fix in plan.fixes:
        console.print(f"[bold]{fix.id}[/] \\[{fix.safety}] {escape(fix.title)}  [dim]({fix.slug})[/]")
        console.print(f"    {fix.description}", markup=False)
        if fix.codemod:
            console.print(f"    codemod {fix.codemod} {json.dumps(fix.args_json())}", markup=False)
        if fix.lines or fix.files:
            console.print(f"    changes {', '.join(fix.lines or fix.files)}", markup=False)
        console.print(f"    expected: {fix.expected}", markup=False)
    for item in declined(plan):
        console.print(f"[dim]not proposed ({item.slug}): {escape(item.reason)}[/]")


def plan_markdown(plan: Plan) -> str:
    """The terminal's answer as a pull-request description: warnings first, `|` escaped in table cells."""
    lines = ["## warp-fix plan", "", f"Command: `{' '.join(plan.command)}`", ""]
    if plan.warnings:
        lines += [f"> **warning:** {warning}" for warning in plan.warnings] + [""]
    if built_nothing(plan):
        return "\n".join(lines + [answer(plan)]) + "\n"
    lines += ["### Findings", "", "| mechanism | status | reason |", "|---|---|---|"]
    lines += [f"| {_cell(f.title)} | {f.status} | {_cell(f.reason)} |" for f in plan.findings]
    lines += ["", "### Fixes", ""]
    if not plan.fixes:
        lines.append(answer(plan))
    for fix in plan.fixes:
        lines.append(
            f"- **{fix.id}** `{fix.safety}` {fix.title} (`{fix.slug}`): {fix.description} "
            f"Expected: {fix.expected}."
            + (f" Changes {', '.join(fix.lines or fix.files)}." if fix.files else "")
        )
    if declined(plan):
        lines += ["", "### Not proposed", ""] + [f"- `{n.slug}`: {n.reason}" for n in declined(plan)]
    return "\n".join(lines) + "\n"


def answer(plan: Plan) -> str:
    """The sentence every view gives where the fixes would be, when there is none: never "nothing to fix" under a
    finding shown as fired."""
    if built_nothing(plan):
        return f"Nothing to fix: none of the {len(plan.checked)} mechanisms had a build to look at."
    fired = _fired(plan)
    if fired:
        return f"No fix proposed for {counted(len(fired), 'fired finding')}; why, for each, follows."
    return f"Nothing to fix: checked {counted(len(plan.checked), 'mechanism')}; none calls for a change."


def built_nothing(plan: Plan) -> bool:
    """The run built no module: a findings table would only list mechanisms with nothing to look at."""
    return plan.built_nothing and not plan.fixes and not _fired(plan)


def declined(plan: Plan) -> list[NotProposed]:
    """Why fired findings got no fix; ruled-out and not-applicable mechanisms are in the findings table."""
    return [n for n in plan.not_proposed if n.status == FIRED]


def _fired(plan: Plan) -> list[Finding]:
    return [f for f in plan.findings if f.status == FIRED]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
