"""Fallback for Warp releases whose objects the tracer cannot hook: builds from Warp's log lines.

It sees less (no block_dim unless debug logging, no native time, no site), and the report says so.
"""

from __future__ import annotations

import re

from warp_fix.report import ModuleBuild

_LINE = re.compile(
    r"^Module (?P<module>\S+) (?:(?P<hash>[0-9a-f]+) )?load on device '(?P<device>[^']*)' "
    r"took (?P<ms>[\d.]+) ms\s*(?:\(block_dim=(?P<block_dim>\d+)\))?\s*\((?P<status>\w+)\)"
)


def builds_from_log(lines: list[str]) -> list[ModuleBuild]:
    builds = []
    for line in lines:
        match = _LINE.match(line)
        if not match:
            continue
        builds.append(
            ModuleBuild(
                seq=len(builds) + 1,
                t_ms=0.0,
                module=match["module"],
                hash=match["hash"] or "",
                device=match["device"],
                block_dim=int(match["block_dim"]) if match["block_dim"] else None,
                status=match["status"],
                module_ms=float(match["ms"]),
                native_ms=0.0,
                options={},
                kernels=[],
                generics=[],
                cache_dir=None,
                site=None,
            )
        )
    return builds
