"""The lines each bake action prints: plain text, one fact per line, for terminals and CI logs alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warp_fix.wording import counted

if TYPE_CHECKING:  # each action's view loads only its own result type's module
    from warp_fix.bake.create import BakeResult
    from warp_fix.bake.incremental import Incremental
    from warp_fix.bake.manifest import Manifest
    from warp_fix.bake.restore import RestoreResult
    from warp_fix.bake.verify import VerifyResult


def _kib(size: int) -> str:
    return f"{size / 1024:,.1f} KiB"


def _targets(manifest: Manifest) -> str:
    binaries = sorted({t.binary + (" (aot)" if t.origin == "aot" else "") for m in manifest.modules for t in m.targets})
    return ", ".join(binaries) or "none"


def bake_lines(result: BakeResult) -> list[str]:
    manifest = result.manifest
    return [
        f"baked {len(manifest.modules)} module identities ({_targets(manifest)}), {len(manifest.lto)} LTO files",
        f"archive: {result.archive} ({_kib(result.archive_bytes)}; entries {_kib(result.entry_bytes)})",
        f"key: {manifest.key}",
        f"environment: Warp {manifest.environment.warp_version}, CPU key {manifest.environment.cpu_key or '-'}, "
        f"CUDA {manifest.environment.cuda_toolkit or '-'}, Python {manifest.environment.python}",
        *(incremental_lines(result.incremental) if result.incremental is not None else ()),
    ]


def incremental_lines(incremental: Incremental) -> list[str]:
    """Against the archive the bake started from: what carried over, each build and why, what was dropped."""
    lines = [
        f"from {incremental.previous.name} (key {incremental.previous_key}): "
        f"{len(incremental.carried)} carried over, {len(incremental.built)} built, "
        f"{len(incremental.dropped)} dropped ({_kib(incremental.dropped_bytes)} no process loaded)"
    ]
    if incremental.environment_changes:
        lines.append(f"  environment changed: {'; '.join(incremental.environment_changes)}")
    lines += [f"  {built.line()}" for built in incremental.built]
    lines += [f"  {dropped.line()}" for dropped in incremental.dropped]
    return lines


def restore_lines(result: RestoreResult) -> list[str]:
    kept = f", {result.kept} already there" if result.kept else ""
    return [
        f"restored {len(result.manifest.modules)} module identities into {result.root}: "
        f"{result.written} files written{kept} ({result.wall_ms:,.0f} ms)",
        f"key: {result.manifest.key}",
        f"environment: {_environment_source(result)} ({result.environment_ms:,.0f} ms)",
        *_partial_lines(result),
    ]


def _partial_lines(result: RestoreResult) -> list[str]:
    """With --partial, when the environment differs: each field, then each entry left out and why."""
    if not result.differences:
        return []
    lines = [f"archive key {result.archive_key} differs here: {'; '.join(result.differences)}"]
    if result.skipped:
        lines.append(f"left out {counted(len(result.skipped), 'entry', 'entries')} that do not apply here:")
        lines += [f"  {module} {module_hash[:7]}: {why}" for module, module_hash, why in result.skipped]
    return lines


def _environment_source(result: RestoreResult) -> str:
    if result.environment_remembered:
        return "remembered from an earlier Warp start on this machine (--recheck-environment reads it again)"
    return "read with one Warp start, and remembered for this machine's fingerprint"


def verify_lines(result: VerifyResult) -> list[str]:
    against = ", ".join(result.manifests) or "no manifest"
    if not result.misses and not result.unnamed:
        return [f"bake verify: ok: nothing compiled, {counted(result.cache_hits, 'module')} from the cache ({against})"]
    lines = []
    if result.misses:
        compiled = counted(len(result.misses), "module")
        lines += [f"bake verify: {compiled} compiled on {result.cache_dir} (against {against}):"]
        lines += [f"  {miss.line()}" for miss in result.misses]
    if result.unnamed:
        loaded = counted(len(result.unnamed), "module")
        lines += [f"bake verify: {loaded} loaded from {result.cache_dir} that no manifest names ({against}):"]
        lines += [f"  {unnamed.line()}" for unnamed in result.unnamed]
    return lines
