"""Module hashes that change from one process to the next, found by comparing the cold and warm runs.

The probe starts the warm run under another PYTHONHASHSEED than the cold run (unless the command's own
environment pins one, which is then what production uses too). A module built in both runs under two hashes
has an identity that depends on the process, typically on Python's salted `hash()` or on set order: no
kernel cache, shared or baked, is ever reused for it. The generated sources of both builds are still in the
sample's private Warp cache; the first line that differs, and the Python line Warp's codegen comment names
above it, say where the process leaks in.
"""

from __future__ import annotations

import re
from pathlib import Path

from warp_fix.report import HashDrift, ModuleBuild, Site, Trace

# the seeds of the two runs of a sample: fixed, so a drift reproduces; different, so a salted hash moves
COLD_HASH_SEED = "1"
WARM_HASH_SEED = "2"
# Warp's codegen comment above each generated statement: `// <python text>   <L 17>`
_LINE_COMMENT = re.compile(r"//.*<L (\d+)>\s*$")


def hash_seeds(base_env: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The cold and warm runs' seed settings; none when the command's environment pins its own seed."""
    if "PYTHONHASHSEED" in base_env:
        return {}, {}
    return {"PYTHONHASHSEED": COLD_HASH_SEED}, {"PYTHONHASHSEED": WARM_HASH_SEED}


def hash_drifts(cold: Trace, warm: Trace, warp_cache: Path) -> list[HashDrift]:
    """Each module the warm run compiled under a hash the cold run never built it under, once per module."""
    cold_hashes: dict[str, set[str]] = {}
    for build in cold.builds:
        cold_hashes.setdefault(build.module, set()).add(build.hash)
    found: dict[str, HashDrift] = {}
    for build in warm.builds:
        if build.status != "compiled" or build.module in found or build.module not in cold_hashes:
            continue
        if build.hash in cold_hashes[build.module]:
            continue
        twin = _cold_twin(cold.builds, build)
        found[build.module] = _drift(twin, build, warp_cache)
    return list(found.values())


def _cold_twin(builds: list[ModuleBuild], warm: ModuleBuild) -> ModuleBuild:
    """The cold build of the same module the warm one stands for: same device and block size where there is one."""
    same = [b for b in builds if b.module == warm.module]
    return next((b for b in same if b.device == warm.device and b.block_dim == warm.block_dim), same[0])


def _drift(cold: ModuleBuild, warm: ModuleBuild, warp_cache: Path) -> HashDrift:
    cold_lines, warm_lines = _generated(warp_cache, cold), _generated(warp_cache, warm)
    number = next(
        (i for i, (a, b) in enumerate(zip(cold_lines, warm_lines, strict=False)) if a != b),
        min(len(cold_lines), len(warm_lines)),
    )
    found = bool(cold_lines) and bool(warm_lines)
    keys = sorted({k.key for k in cold.kernel_sources}, key=len, reverse=True)
    kernel, python_line = _origin(cold_lines[: number + 1], keys) if found else ("", 0)
    return HashDrift(
        module=cold.module,
        device=cold.device,
        block_dim=cold.block_dim,
        cold_hash=cold.hash,
        warm_hash=warm.hash,
        generated_line=number + 1 if found else 0,
        cold_text=cold_lines[number].strip() if found and number < len(cold_lines) else "",
        warm_text=warm_lines[number].strip() if found and number < len(warm_lines) else "",
        kernel=kernel,
        site=_site(cold, kernel, python_line),
    )


def _generated(warp_cache: Path, build: ModuleBuild) -> list[str]:
    """The generated C++/CUDA source of a build, from its cache entry `wp_<module>_<hash7>/`."""
    for entry in warp_cache.rglob(f"wp_{build.module}_{build.hash[:7]}"):
        for source in sorted([*entry.glob("*.cpp"), *entry.glob("*.cu")]):
            return source.read_text(errors="replace").splitlines()
    return []


def _origin(lines: list[str], keys: list[str]) -> tuple[str, int]:
    """The kernel whose generated code holds the last line given (the nearest line above naming its key: its
    argument struct or entry function) and the Python line of the nearest codegen comment `<L n>` between."""
    python_line = 0
    for line in reversed(lines):
        if not python_line and (match := _LINE_COMMENT.search(line)):
            python_line = int(match.group(1))
        key = next((k for k in keys if k in line), None)
        if key is not None:
            return key, python_line
    return "", 0


def _site(build: ModuleBuild, kernel: str, python_line: int) -> Site | None:
    """The Python line that produced the generated line: its codegen comment's (a statement of the kernel); else,
    for a line outside the kernel's body (its name, its arguments), where the kernel object was made."""
    source = next((k for k in build.kernel_sources if k.key == kernel), None)
    if source is None:
        return None
    if not python_line and source.created is not None:
        return source.created
    return Site(file=source.file, line=python_line or source.line, function=source.function)
