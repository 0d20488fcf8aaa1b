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
