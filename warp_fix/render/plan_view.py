"""The plan as a terminal table and as Markdown fit for a pull-request description."""

from __future__ import annotations

import json

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from warp_fix.model import FIRED, NotProposed, Plan
from warp_fix.wording import counted

STATUS_STYLE = {"fired": "bold red", "ruled-out": "green", "not-applicable": "dim"}


def print_plan(plan: Plan, console: Console) -> None:
    for warning in plan.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if plan.built_nothing and not plan.fixes and not any(f.status == FIRED for f in plan.findings):
        console.print(f"Nothing to fix: none of the {len(plan.checked)} mechanisms had a build to look at.",
                      highlight=False)  # fmt: skip
        return
    table = Table(title="Findings (every mechanism checked)")
    for column in ("mechanism", "status", "reason"):
        table.add_column(column)
    for finding in plan.findings:
        style = STATUS_STYLE.get(finding.status, "")
        table.add_row(escape(finding.title), f"[{style}]{finding.status}[/]", escape(finding.reason))
    console.print(table)
    fired = [f for f in plan.findings if f.status == "fired"]
    if not plan.fixes and fired:
        console.print(f"[yellow]No fix proposed[/] for {counted(len(fired), 'fired finding')}; why, for each:")
    elif not plan.fixes:
        console.print(
            f"[green]Nothing to fix:[/] checked {len(plan.checked)} mechanisms; none calls for a change."
        )
    for fix in plan.fixes:
        console.print(f"[bold]{fix.id}[/] \\[{fix.safety}] {escape(fix.title)}  [dim]({fix.slug})[/]")
        console.print(f"    {fix.description}", markup=False)
        if fix.codemod:
            console.print(f"    codemod {fix.codemod} {json.dumps(fix.args_json())}", markup=False)
        if fix.lines or fix.files:
            console.print(f"    changes {', '.join(fix.lines or fix.files)}", markup=False)
        console.print(f"    expected: {fix.expected}", markup=False)
    for item in _declined(plan):
        console.print(f"[dim]not proposed ({item.slug}): {escape(item.reason)}[/]")


def plan_markdown(plan: Plan) -> str:
    lines = [
        "## warp-fix plan",
        "",
        f"Command: `{' '.join(plan.command)}`",
        "",
        "### Findings",
        "",
        "| mechanism | status | reason |",
        "|---|---|---|",
    ]
    lines += [f"| {f.title} | {f.status} | {f.reason} |" for f in plan.findings]
    lines += ["", "### Fixes", ""]
    fired = [f for f in plan.findings if f.status == "fired"]
    if not plan.fixes and fired:
        lines.append(f"No fix proposed for {counted(len(fired), 'fired finding')}: see Not proposed.")
    elif not plan.fixes:
        lines.append(f"Nothing to fix: {len(plan.checked)} mechanisms checked.")
    for fix in plan.fixes:
        lines.append(
            f"- **{fix.id}** `{fix.safety}` {fix.title} (`{fix.slug}`): {fix.description} "
            f"Expected: {fix.expected}."
            + (f" Changes {', '.join(fix.lines or fix.files)}." if fix.files else "")
        )
    extra = _declined(plan)
    if extra:
        lines += ["", "### Not proposed", ""] + [f"- `{n.slug}`: {n.reason}" for n in extra]
    return "\n".join(lines) + "\n"


def _declined(plan: Plan) -> list[NotProposed]:
    """Why fired findings got no fix; ruled-out and not-applicable mechanisms are in the findings table."""
    return [n for n in plan.not_proposed if n.status == FIRED]
