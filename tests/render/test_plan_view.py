"""The plan's three views (terminal, Markdown, HTML) give the same answer: never "nothing to fix" under a finding
shown as fired, the warnings first, and no findings table for a run that built nothing."""

from __future__ import annotations

from rich.console import Console

from warp_fix.mechanisms import _situation as case
from warp_fix.model import RULED_OUT, Finding, Plan
from warp_fix.plan import make_plan
from warp_fix.render.html import render_report_html
from warp_fix.render.plan_view import plan_markdown, print_plan


def fired_without_fix():
    """The warm run compiles, but no statement of the repository discards the cache: fired, nothing to edit."""
    inputs = case.run(builds=[case.build("app")], warm_builds=1, warm_module_ms=100.0)
    return make_plan(inputs.report, case.ROOT, index=inputs.index)


def test_a_fired_finding_without_a_fix_is_answered_in_the_same_view():
    plan = fired_without_fix()
    assert not plan.fixes and any(f.status == "fired" for f in plan.findings)
    console = Console(record=True, width=200)
    print_plan(plan, console)
    text = console.export_text()
    assert "Nothing to fix" not in text
    assert "No fix proposed" in text and "no statement in the repository" in text
    markdown = plan_markdown(plan)
    assert "Nothing to fix" not in markdown and "no statement in the repository" in markdown
    page = render_report_html(case.run(builds=[case.build("app")], warm_builds=1).report, plan)
    assert "Nothing to fix" not in page and "No fix proposed for" in page
    assert "no statement in the repository" in page


def test_a_clean_plan_still_says_nothing_to_fix():
    plan = Plan(
        command=["python", "app.py"],
        checked=["cache-discarded"],
        findings=[Finding("cache-discarded", RULED_OUT, "cache thrown away", "the warm run compiled nothing")],
    )
    assert "Nothing to fix: checked 1 mechanism; none calls for a change." in plan_markdown(plan)


def test_only_fired_findings_reasons_are_listed_as_not_proposed():
    """A ruled-out mechanism's NotProposed carries the status as a field: its reason is not repeated below the table,
    whatever its wording."""
    plan = fired_without_fix()
    ruled_out = [n for n in plan.not_proposed if n.status == RULED_OUT]
    assert ruled_out and not any(n.reason.startswith("ruled-out") for n in ruled_out)
    markdown = plan_markdown(plan)
    assert not any(f"`{n.slug}`: {n.reason}" in markdown for n in ruled_out)


def built_nothing_with_a_warning() -> Plan:
    return Plan(
        command=["python", "app.py"],
        checked=["cache-discarded", "unused-backward"],
        findings=[Finding("cache-discarded", RULED_OUT, "cache thrown away", "the warm run compiled nothing")],
        warnings=["1 file could not be parsed: tools/broken.py"],
        built_nothing=True,
    )


def test_markdown_carries_the_warnings_and_the_built_nothing_answer():
    markdown = plan_markdown(built_nothing_with_a_warning())
    assert "> **warning:** 1 file could not be parsed: tools/broken.py" in markdown
    assert markdown.rstrip().endswith("Nothing to fix: none of the 2 mechanisms had a build to look at.")
    assert "### Findings" not in markdown


def test_the_html_page_of_a_run_that_built_nothing_has_no_findings_table():
    report = case.run(builds=[]).report
    page = render_report_html(report, built_nothing_with_a_warning())
    assert 'id="findings"' not in page
    assert "warning: 1 file could not be parsed" in page
    assert "none of the 2 mechanisms had a build to look at" in page


def test_a_pipe_in_a_reason_cannot_break_the_markdown_table():
    plan = Plan(
        command=["python", "app.py"],
        checked=["cache-discarded"],
        findings=[Finding("cache-discarded", RULED_OUT, "cache thrown away", "options {a | b}\nsecond line")],
    )
    row = next(line for line in plan_markdown(plan).splitlines() if line.startswith("| cache thrown away"))
    assert row == "| cache thrown away | ruled-out | options {a \\| b} second line |"
