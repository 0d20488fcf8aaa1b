"""Plan: every mechanism's finding, and the fixes of the fired ones in the registry's fix order.

What a mechanism detects and proposes lives in its own file under `warp_fix/mechanisms/`; this module only
runs them, orders the fixes, numbers them, drops a codemod call another mechanism already proposed, and joins
the fixes of one mechanism that make the same edit on different items into one fix (apply commits one fix as
one commit): moving four factories' kernels into one module is one commit, not four.
"""

from __future__ import annotations

from pathlib import Path

from warp_fix.mechanisms import FIX_ORDER, Inputs, diagnose_all
from warp_fix.model import FIRED, Fix, NotProposed, Plan
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
    plan.warnings = _nothing_built(report) + [w for w in report.warnings if w not in index.warnings] + index.warnings
    by_slug = {f.slug: f for f in findings}
    taken: set[tuple] = set()
    for mechanism in FIX_ORDER:
        finding = by_slug[mechanism.SLUG]
        plan.checked.append(mechanism.SLUG)
        if finding.status != FIRED:
            plan.not_proposed.append(NotProposed(mechanism.SLUG, finding.reason, finding.status))
            continue
        proposals = list(mechanism.propose(finding, inputs))
        declined = [item for item in proposals if isinstance(item, NotProposed)]
        plan.not_proposed += declined
        kept = 0
        for item in group_fixes([item for item in proposals if isinstance(item, Fix)]):
            key = (item.codemod, repr(sorted(item.args.items())))
            if item.codemod and key in taken:
                continue
            taken.add(key)
            item.id = f"F{len(plan.fixes) + 1}"
            plan.fixes.append(item)
            kept += 1
        if not kept and not declined:  # a fired finding always says what is done about it, in the same view
            why = "its edit is an earlier fix's" if proposals else "no fix of the code applies"
            plan.not_proposed.append(NotProposed(mechanism.SLUG, f"fired ({finding.reason}), but {why}"))
    return plan


def _nothing_built(report: Report) -> list[str]:
    """A run that built no module gives every mechanism nothing to look at: say so before the table says it is
    clean (a script that exits early on this device, a command that never reaches Warp)."""
    if report.trace.builds:
        return []
    said = next((line.strip() for line in report.output.head.splitlines() if line.strip()), "")
    said = f" (its output begins: {said[:100]!r})" if said else ""
    return [f"the run built no Warp module{said}: there was nothing to diagnose"]


# The argument that takes a list, per codemod: fixes that differ only in it are one edit.
LIST_ARGUMENTS = {"drop_unique": "names", "merge_modules": "kernels", "kernels_to_module_scope": "kernels"}
# Codemods that edit one place per call: a mechanism's fixes for one target module become one fix, one call per place.
ONE_PLACE_PER_CALL = {"kernels_to_module_scope", "call_site_argument"}


def group_fixes(fixes: list[Fix]) -> list[Fix]:
    """One Fix per (mechanism, codemod, target module): list arguments join the first fix's, places its `each`."""
    return join_places(join_lists(fixes))


def join_lists(fixes: list[Fix]) -> list[Fix]:
    """One Fix per (mechanism, codemod, target file and module): the list arguments of the others join the first."""
    grouped: list[Fix] = []
    first_of: dict[tuple, Fix] = {}
    for fix in fixes:
        list_argument = LIST_ARGUMENTS.get(fix.codemod or "")
        if list_argument is None or not isinstance(fix.args.get(list_argument), list):
            grouped.append(fix)
            continue
        rest = repr(sorted((k, v) for k, v in fix.args.items() if k != list_argument))
        first = first_of.setdefault((fix.slug, fix.codemod, rest), fix)
        if first is fix:
            grouped.append(fix)
            continue
        first.args[list_argument] += [v for v in fix.args[list_argument] if v not in first.args[list_argument]]
        _absorb(first, fix)
        first.expected_builds_removed = max(first.expected_builds_removed, fix.expected_builds_removed)
    return grouped


def join_places(fixes: list[Fix]) -> list[Fix]:
    """Fixes of one mechanism that make a one-place edit for the same target module (its `module` argument, else
    the file) become one: four factories moved into one module are one commit, not four.

    Example: kernels_to_module_scope for make_a() and make_b() of sim.py -> one fix, `args = {"each": [{...
    "factory": "make_a"}, {... "factory": "make_b"}]}`, titled "<make_a's title> (+1 more: make_b())".
    """
    joined: list[Fix] = []
    first_of: dict[tuple, Fix] = {}
    for fix in fixes:
        if fix.codemod not in ONE_PLACE_PER_CALL or "each" in fix.args:
            joined.append(fix)
            continue
        first = first_of.setdefault((fix.slug, fix.codemod, fix.args.get("module") or fix.args.get("file")), fix)
        if first is fix:
            joined.append(fix)
            continue
        if "each" not in first.args:
            first.args = {"each": [first.args]}
        first.args["each"].append(fix.args)
        _absorb(first, fix)
        first.expected_builds_removed = max(first.expected_builds_removed, fix.expected_builds_removed)
        first.expected_ms = max(first.expected_ms, fix.expected_ms)  # each names its finding's whole cost
        others = [_place(args) for args in first.args["each"][1:]]
        first.title = f"{first.title.split(' (+')[0]} (+{len(others)} more: {', '.join(others)})"
    return joined


def _absorb(first: Fix, fix: Fix) -> None:
    first.files = sorted({*first.files, *fix.files})
    first.lines += [line for line in fix.lines if line not in first.lines]
    first.description = f"{first.description} {fix.description}"


def _place(args: dict) -> str:
    """A place as a reader finds it: the factory, or the call site."""
    return f"{args['factory']}()" if args.get("factory") else f"{args.get('file')}:{args.get('line')}"
