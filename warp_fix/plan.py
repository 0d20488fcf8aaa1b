"""Plan: every mechanism's finding, and the fixes of the fired ones in the registry's fix order.

What a mechanism detects and proposes lives in its own file under `warp_fix/mechanisms/`; this module only
runs them, orders the fixes, numbers them and drops a codemod call another mechanism already proposed.
"""

from __future__ import annotations

from pathlib import Path

from warp_fix.mechanisms import FIX_ORDER, Inputs, diagnose_all
from warp_fix.model import FIRED, NotProposed, Plan
from warp_fix.report import Report
from warp_fix.scan import SourceIndex, scan_repository


def make_plan(
    report: Report, root: str | Path, command: list[str] | None = None, index: SourceIndex | None = None
) -> Plan:
    """Report (+ a scan of `root`) -> findings -> ordered fixes. Returns the Plan; findings on `plan.findings`."""
    index = index if index is not None else scan_repository(Path(root))
    findings = diagnose_all(report, index)
    inputs = Inputs(report, index)
    plan = Plan(command=list(command or report.command))
    plan.findings = findings
    plan.warnings = list(index.warnings)
    by_slug = {f.slug: f for f in findings}
    taken: set[tuple] = set()
    for mechanism in FIX_ORDER:
        finding = by_slug[mechanism.SLUG]
        plan.checked.append(mechanism.SLUG)
        if finding.status != FIRED:
            plan.not_proposed.append(NotProposed(mechanism.SLUG, f"{finding.status}: {finding.reason}"))
            continue
        proposals = list(mechanism.propose(finding, inputs))
        if not proposals:  # a fired finding always says what is done about it, in the same view
            proposals = [NotProposed(mechanism.SLUG, f"fired ({finding.reason}), but no fix of the code applies")]
        for item in proposals:
            if isinstance(item, NotProposed):
                plan.not_proposed.append(item)
                continue
            key = (item.codemod, repr(sorted(item.args.items())))
            if item.codemod and key in taken:
                continue
            taken.add(key)
            item.id = f"F{len(plan.fixes) + 1}"
            plan.fixes.append(item)
    return plan
