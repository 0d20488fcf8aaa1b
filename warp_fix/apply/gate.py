"""Which planned fixes apply may try: safety class, --allow and --only (protected paths are the plan's scope)."""

from __future__ import annotations

from dataclasses import dataclass

from warp_fix.model import ADVISORY, CONSENT, SAFE, Fix


@dataclass(frozen=True)
class Gate:
    allow: frozenset[str] = frozenset()  # consent slugs the user opted into
    only: frozenset[str] = frozenset()  # fix ids or slugs; empty: all

    def decline_reason(self, fix: Fix) -> str | None:
        """None if the fix may be tried; otherwise why it is declined, in one line."""
        if self.only and fix.id not in self.only and fix.slug not in self.only:
            return "not selected by --only"
        if fix.safety == ADVISORY or fix.codemod is None:
            return "advisory: reported, never applied"
        if fix.safety == CONSENT and fix.slug not in self.allow and not fix.measure_kernels:
            return f"needs consent: rerun with --allow {fix.slug}"
        if fix.safety not in (SAFE, CONSENT):
            return f"unknown safety class {fix.safety!r}"
        return None

    def offers_only(self, fix: Fix) -> bool:
        """A trade-off fix without consent: measured both ways on a candidate, offered, never committed."""
        return fix.safety == CONSENT and fix.measure_kernels and fix.slug not in self.allow
