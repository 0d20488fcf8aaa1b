"""Plan: the ordered fixes chosen from the Findings, each with its codemod and safety class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SAFE = "safe"
CONSENT = "consent"
ADVISORY = "advisory"


@dataclass
class Fix:
    id: str  # "F1", "F2", ... in plan order
    slug: str  # mechanism slug (findings.SLUGS)
    title: str  # plain-language commit subject
    description: str
    safety: str  # SAFE | CONSENT | ADVISORY
    codemod: str | None  # name in codemods.REGISTRY; None for advisory-only fixes
    args: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # repo-relative paths it edits
    lines: list[str] = field(default_factory=list)  # "path:line" it changes
    expected: str = ""  # e.g. "removes 3 of 4 builds; ~520 ms of measured cold module work"
    expected_builds_removed: int = 0
    expected_ms: float = 0.0
    allow_options: list[str] = field(default_factory=list)  # options it may change by design
    # Trades build time for kernel time: apply measures steady-state kernel time on both arms and, without
    # consent, offers the fix with both numbers instead of declining it unmeasured.
    measure_kernels: bool = False


@dataclass
class NotProposed:
    slug: str
    reason: str


@dataclass
class Plan:
    command: list[str]
    fixes: list[Fix] = field(default_factory=list)
    not_proposed: list[NotProposed] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # mechanisms looked at (for the clean case)
    findings: list = field(default_factory=list)  # the Findings the fixes answer
    warnings: list[str] = field(default_factory=list)  # e.g. files the scan could not parse


# --- planning -----------------------------------------------------------------------------------------------

# Order of WARP_FACTS: stop cache destruction first, then ordering/option fixes, then module layout.
ORDER = (
    "cache-discarded",
    "late-module-options",
    "config-after-import",
    "kernel-after-load",
    "late-overloads",
    "concurrent-cpu-load",
    "precompiled-header",
    "unused-backward",
    "unique-on-stable",
    "granular-modules",
    "block-dim-spread",
    "serial-builds",
    "mathdx-lto",
    "unroll-budget",
)


def make_plan(report, root, command: list[str] | None = None, index=None) -> Plan:
    """Report (+ a scan of `root`) -> findings -> ordered fixes. Returns the Plan; findings on `plan.findings`."""
    from pathlib import Path

    from warp_fix.diagnose import diagnose_all
    from warp_fix.proposals import propose
    from warp_fix.scan import scan_repository

    index = index if index is not None else scan_repository(Path(root))
    findings = diagnose_all(report, index)
    plan = Plan(command=list(command or report.command))
    plan.findings = findings
    plan.warnings = list(index.warnings)
    by_slug = {f.slug: f for f in findings}
    taken: set[tuple] = set()
    for slug in ORDER:
        finding = by_slug[slug]
        plan.checked.append(slug)
        if finding.status != "fired":
            plan.not_proposed.append(NotProposed(slug, f"{finding.status}: {finding.reason}"))
            continue
        for item in propose(finding, report, index):
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
