"""Plan: every mechanism's finding, and the fixes of the fired ones in the registry's fix order.

What a mechanism detects and proposes lives in its own file under `warp_fix/mechanisms/`; this module only
runs them, orders the fixes, numbers them, drops a codemod call another mechanism already proposed, and joins
the fixes of one mechanism that make the same edit on different items into one fix (apply commits one fix as
one commit): moving four factories' kernels into one module is one commit, not four.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from codemods.specs import CodemodArgs
from warp_fix.config import load_config
from warp_fix.mechanisms import FIX_ORDER, Inputs, diagnose_all
from warp_fix.model import FIRED, Fix, NotProposed, Plan, Safety
from warp_fix.report import Report
from warp_fix.scan import KeptIndex, SourceIndex, scan_repository
from warp_fix.scope import Scope


def make_plan(
    report: Report,
    root: str | Path,
    command: list[str] | None = None,
    index: SourceIndex | None = None,
    protected: tuple[str, ...] | None = None,
) -> Plan:
    """Report (+ a scan of `root`) -> findings -> ordered fixes. Returns the Plan; findings on `plan.findings`.

    `protected` paths (default: `[tool.warp-fix] protected` of the repository's pyproject.toml) join the one
    Scope of this plan, so a fix that would edit them is not proposed, with the reason. The scan keeps its index in
    the repository's warp-fix folder when `root` is a repository's top folder, so the next plan (and apply's
    re-plans) re-read only the files that changed."""
    index = index if index is not None else scan_repository(Path(root), kept=KeptIndex.of_repository(Path(root)))
    if protected is None:
        protected = load_config(Path(root), Path(root)).protected
    inputs = Inputs(report, index, Scope(report, index, protected))
    findings = diagnose_all(inputs)
    plan = Plan(command=list(command or report.command))
    plan.findings = findings
    plan.built_nothing = not report.trace.builds
    plan.warnings = _nothing_built(report) + [w for w in report.warnings if w not in index.warnings] + index.warnings
    by_slug = {f.slug: f for f in findings}
    taken: set[tuple] = set()
    for mechanism in FIX_ORDER:
        finding = by_slug[mechanism.SLUG]
        plan.checked.append(mechanism.SLUG)
        if finding.status != FIRED:
            plan.not_proposed.append(NotProposed(mechanism.SLUG, finding.reason, finding.status))
            continue
        proposals = [within_scope(item, inputs.scope) for item in mechanism.propose(finding, inputs)]
        declined = [item for item in proposals if isinstance(item, NotProposed)]
        plan.not_proposed += declined
        kept = 0
        for item in group_fixes([item for item in proposals if isinstance(item, Fix)]):
            key = (item.codemod, repr(item.places))
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


def within_scope(item: Fix | NotProposed, scope: Scope) -> Fix | NotProposed:
    """A fix lowered to the ceiling the scope sets for what it edits and the modules it changes; not proposed,
    with the scope's reason, where the scope allows no edit (an installed package, optional or generated code,
    a protected path)."""
    if not isinstance(item, Fix):
        return item
    functions = [name for place in item.places for name in place.function_names]
    ceiling = scope.ceiling(item.files, functions, item.targets)
    if ceiling.safety is None:
        verdict = ceiling.verdict
        reason = verdict.reason if verdict is not None else "outside the project's code"
        return NotProposed(item.slug, f"{item.title}: not proposed, {ceiling.what} is {reason}")
    lowered = Safety(item.safety).at_most(ceiling.safety)
    if lowered is not item.safety and ceiling.verdict is not None:
        item.description += f" Needs consent: {ceiling.what} is {ceiling.verdict.reason}."
    item.safety = lowered
    return item


def _nothing_built(report: Report) -> list[str]:
    """A run that built no module gives every mechanism nothing to look at: say so before the table says it is
    clean (a script that exits early on this device, a command that never reaches Warp)."""
    if report.trace.builds:
        return []
    said = next((line.strip() for line in report.output.head.splitlines() if line.strip()), "")
    said = f" (its output begins: {said[:100]!r})" if said else ""
    return [f"the run built no Warp module{said}: there was nothing to diagnose"]


def group_fixes(fixes: list[Fix]) -> list[Fix]:
    """One Fix per (mechanism, codemod, target module): list arguments join the first fix's, places its places."""
    return join_places(join_lists(fixes))


def join_lists(fixes: list[Fix]) -> list[Fix]:
    """One Fix per (mechanism, codemod, place but its list): the list of the others joins the first's.

    The list is the one its codemod declares (`JOINS_LIST`): drop_unique's names, for example.
    """
    grouped: list[Fix] = []
    first_of: dict[tuple, Fix] = {}
    for fix in fixes:
        place = _only_place(fix)
        if place is None or place.JOINS_LIST is None:
            grouped.append(fix)
            continue
        rest = repr(replace(place, **{place.JOINS_LIST: []}))
        first = first_of.setdefault((fix.slug, fix.codemod, rest), fix)
        if first is fix:
            grouped.append(fix)
            continue
        joined = first.places[0]
        items = list(getattr(joined, place.JOINS_LIST))
        items += [item for item in getattr(place, place.JOINS_LIST) if item not in items]
        first.places = (replace(joined, **{place.JOINS_LIST: items}),)
        _absorb(first, fix)
        first.expected_builds_removed = max(first.expected_builds_removed, fix.expected_builds_removed)
    return grouped


def join_places(fixes: list[Fix]) -> list[Fix]:
    """Fixes of one mechanism that make a one-place edit (`ONE_PLACE_PER_CALL`) for the same target module (the
    module its place names, else the file) become one: four factories moved into one module are one commit.

    Example: kernels_to_module_scope for make_a() and make_b() of sim.py -> one fix of two places, titled
    "<make_a's title> (+1 more: make_b())".
    """
    joined: list[Fix] = []
    first_of: dict[tuple, Fix] = {}
    for fix in fixes:
        place = _only_place(fix)
        if place is None or not place.ONE_PLACE_PER_CALL:
            joined.append(fix)
            continue
        first = first_of.setdefault((fix.slug, fix.codemod, fix.safety, place.joins_on()), fix)
        if first is fix:
            joined.append(fix)
            continue
        first.places += fix.places
        _absorb(first, fix)
        first.expected_builds_removed = max(first.expected_builds_removed, fix.expected_builds_removed)
        first.expected_ms = max(first.expected_ms, fix.expected_ms)  # each names its finding's whole cost
    for fix in first_of.values():  # its title named only its first place until now
        fix.title = joined_title(fix.title, fix.places)
    return joined


def joined_title(title: str, places: tuple[CodemodArgs, ...]) -> str:
    """The first place's title, and where the others are: "Move ... (+2 more: make_b(), make_c())"."""
    others = [place.where() for place in places[1:]]
    return f"{title} (+{len(others)} more: {', '.join(others)})" if others else title


def _only_place(fix: Fix) -> CodemodArgs | None:
    return fix.places[0] if len(fix.places) == 1 else None


def _absorb(first: Fix, fix: Fix) -> None:
    first.files = sorted({*first.files, *fix.files})
    first.lines += [line for line in fix.lines if line not in first.lines]
    first.targets += [module for module in fix.targets if module not in first.targets]
    first.description = f"{first.description} {fix.description}"
