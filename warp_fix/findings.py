"""Findings: the diagnosis of one mechanism, joined over the Report and the SourceIndex."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FIRED = "fired"
RULED_OUT = "ruled-out"
NOT_APPLICABLE = "not-applicable"

# Stable slugs, in the order of WARP_FACTS.md's table, plus the config trap.
SLUGS = (
    "kernel-after-load",
    "cache-discarded",
    "late-module-options",
    "config-after-import",
    "granular-modules",
    "block-dim-spread",
    "late-overloads",
    "mathdx-lto",
    "concurrent-cpu-load",
    "unique-on-stable",
    "unused-backward",
    "unroll-budget",
    "precompiled-header",
    "serial-builds",
)


@dataclass
class Evidence:
    """One fact behind a finding: a runtime event or a static site."""

    kind: str  # "runtime" | "static"
    detail: str
    file: str | None = None
    line: int | None = None


@dataclass
class Finding:
    slug: str
    status: str  # FIRED | RULED_OUT | NOT_APPLICABLE
    title: str  # plain language, e.g. "options set after the module's first build"
    reason: str  # one line: why fired / what ruled it out
    evidence: list[Evidence] = field(default_factory=list)
    cost_ms: float = 0.0  # measured cold module work of the extra builds it causes
    extra_builds: int = 0
    details: dict[str, Any] = field(default_factory=dict)  # mechanism-specific facts (ceiling, modules...)
