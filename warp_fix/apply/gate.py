"""Which planned fixes apply may try: safety class, --allow, --only and protected paths."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from warp_fix.model import ADVISORY, CONSENT, SAFE, Fix


@dataclass(frozen=True)
class Gate:
    allow: frozenset[str] = frozenset()  # consent slugs the user opted into
    only: frozenset[str] = frozenset()  # fix ids or slugs; empty: all
    protected: tuple[str, ...] = ()  # "path/glob" or "path::function"

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
        hit = self.protected_hit(fix.files, [name for place in fix.places for name in place.function_names])
        return f"touches protected {hit}" if hit else None

    def offers_only(self, fix: Fix) -> bool:
        """A trade-off fix without consent: measured both ways on a candidate, offered, never committed."""
        return fix.safety == CONSENT and fix.measure_kernels and fix.slug not in self.allow

    def protected_hit(self, files: Iterable[str], functions: Iterable[str] = ()) -> str | None:
        """The first protected entry matched by these repo-relative files (and function names)."""
        names = set(functions)
        for path in files:
            for entry in self.protected:
                pattern, _, function = entry.partition("::")
                if _path_matches(path, pattern) and (not function or function in names):
                    return entry
        return None


def _path_matches(path: str, pattern: str) -> bool:
    path = path.replace("\\", "/").removeprefix("./")
    pattern = pattern.replace("\\", "/").removeprefix("./").rstrip("/")
    return fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/")
