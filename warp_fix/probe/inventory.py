"""Counts what a run left in the kernel caches it actually used: generated source and LTO artifacts."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from warp_fix.report import Trace

SOURCE_SUFFIXES = (".cpp", ".cu")
LTO_SUFFIXES = (".lto", ".ltoir")


@dataclass
class CacheInventory:
    generated_source_bytes: int
    lto_artifacts: int
    outside_dirs: list[str]  # cache dirs the application chose outside the private space


def take_inventory(trace: Trace, sandbox_root: Path, since: float) -> CacheInventory:
    """Only module directories of builds in this trace count, so a shared cache adds nothing stale."""
    identifiers = {f"wp_{b.module}_{b.hash[:7]}" for b in trace.builds if b.status != "error"}
    cache_dirs = {b.cache_dir for b in trace.builds if b.cache_dir}
    root = str(sandbox_root)
    source_bytes = 0
    lto = 0
    outside = []
    for cache_dir in sorted(cache_dirs):
        if not os.path.isdir(cache_dir):
            continue
        inside = os.path.realpath(cache_dir).startswith(root + os.sep)
        if not inside:
            outside.append(cache_dir)
        for identifier in identifiers:
            module_dir = Path(cache_dir) / identifier
            if module_dir.is_dir():
                source_bytes += sum(
                    f.stat().st_size for f in module_dir.iterdir() if f.name.endswith(SOURCE_SUFFIXES)
                )
        lto_dir = Path(cache_dir) / "lto"
        if lto_dir.is_dir():
            for path in lto_dir.rglob("*"):
                if (
                    path.is_file()
                    and path.name.endswith(LTO_SUFFIXES)
                    and (inside or path.stat().st_mtime >= since)
                ):
                    lto += 1
    return CacheInventory(source_bytes, lto, outside)
