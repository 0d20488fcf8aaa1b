"""Rules that hold only from a given Warp release on, with the evidence for the release named.

A report records the Warp version the run used (`Report.warp_version`); a mechanism whose verdict
depends on Warp's behaviour asks `since(...)` here rather than assuming the newest release. docs/warp-releases.md
lists each rule, its release and how it was verified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class VersionRule:
    """A behaviour of Warp that holds from release `since` on (and not before)."""

    behaviour: str
    since: tuple[int, int]
    evidence: str

    @property
    def release(self) -> str:
        return f"{self.since[0]}.{self.since[1]}"


# force_load/load_module(max_workers=N) load modules on a thread pool. Before 1.17 the pool's futures were
# never collected, so a failed concurrent CPU load was reported as a success and the launch then failed with
# "Failed to find module"; 1.17 collects every load's result (read in each release's `force_load`).
SAFE_PARALLEL_CPU_LOADS = VersionRule(
    "concurrent first loads on the CPU report their failures",
    (1, 17),
    "force_load collects each parallel load's result from 1.17 on (earlier releases drop them)",
)

# Before 1.13 a build's options do not carry `use_precompiled_headers`: CPU builds have no precompiled header at
# all (build_cpu takes none), and CUDA's (1.11-1.12) follows warp.config at compile time, outside the module's
# options the tracer reads (read in each release's build.py and Module options).
PRECOMPILED_HEADER_OPTION = VersionRule(
    "a build's resolved options say whether it used precompiled headers",
    (1, 13),
    "Module options carry use_precompiled_headers from 1.13 on; CPU builds had no precompiled header before",
)


def parse_release(version: str) -> tuple[int, int] | None:
    """(major, minor) of a Warp version string ("1.12.1", "1.19.0.dev3"); None when it is not one."""
    match = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def holds(rule: VersionRule, warp_version: str) -> bool:
    """Whether the rule applies to this Warp; an unknown version gets the older, conservative behaviour."""
    release = parse_release(warp_version)
    return release is not None and release >= rule.since
