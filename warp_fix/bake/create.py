"""`warp-fix bake -- COMMAND`: run cold in a private cache, keep exactly what the run built, archive it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from warp_fix.bake.archive import archive_name, destination, write_archive
from warp_fix.bake.collect import entries_from_builds, lto_files
from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import MANIFEST_FORMAT, Manifest
from warp_fix.bake.run import TracedRun, cold_run
from warp_fix.report import ModuleBuild

if TYPE_CHECKING:
    from warp_fix.bake.incremental import Incremental


@dataclass(frozen=True)
class BakeResult:
    archive: Path
    manifest: Manifest
    archive_bytes: int
    entry_bytes: int  # the bytes of the files a run needs (what the archive packs)
    run_wall_ms: float
    incremental: Incremental | None = None  # with --from: carried over, built, dropped against that archive

    def to_json(self) -> dict[str, object]:
        return {
            "archive": str(self.archive),
            "archive_bytes": self.archive_bytes,
            "entry_bytes": self.entry_bytes,
            "run_wall_ms": self.run_wall_ms,
            "manifest": self.manifest.to_json(),
            "incremental": self.incremental.to_json() if self.incremental is not None else None,
        }


def bake(
    command: list[str],
    cwd: Path,
    out: str | None,
    archs: list[int],
    timeout: float | None,
    signing_key: Path | None = None,
    previous: Path | None = None,
) -> BakeResult:
    """Bake `command`'s cache; `out` is a file, a directory (`DIR/` or an existing one: content-addressed name
    inside it) or None (cwd). With `signing_key`, the archive is signed (`<archive>.sig`, bake/signing.py).
    With `previous` (an archive), the run starts from its entries: an incremental bake (bake/incremental.py)."""
    if signing_key is not None and not signing_key.is_file():
        raise BakeError(f"signing key not found: {signing_key}")
    start = None
    if previous is not None:
        from warp_fix.bake.incremental import Previous

        start = Previous.read(previous)
    with cold_run(command, cwd, timeout, archs, start.seed if start else None) as (run, root):
        manifest = manifest_of(run, root, command)
        target = destination(out, archive_name(manifest))
        size = write_archive(target, manifest, root)
    incremental = None
    if start is not None:
        from warp_fix.bake.incremental import compare

        incremental = compare(start, run, manifest, str(root))
    if signing_key is not None:
        from warp_fix.bake.signing import sign

        sign(target, signing_key)
    entry_bytes = sum(f.size for f in manifest.files)
    return BakeResult(target, manifest, size, entry_bytes, run.process.wall_ms, incremental)


def manifest_of(run: TracedRun, root: Path, command: list[str]) -> Manifest:
    if run.aot_errors:
        raise BakeError(f"--arch: {run.aot_errors[0]}")
    if run.environment is None:
        raise BakeError("the run wrote no environment record (its Warp process did not exit normally)")
    builds = [*run.trace.builds, *aot_builds(run.aot_artifacts)]
    if not any(b.status != "error" for b in builds):
        raise BakeError("the command built no Warp module: there is nothing to bake")
    aot_paths = {f"{a['directory']}/{a['file']}" for a in run.aot_artifacts}
    modules = entries_from_builds(root, builds, aot_paths)
    lto = tuple(lto_files(root))
    return Manifest(MANIFEST_FORMAT, run.environment, tuple(modules), lto, tuple(command), run.hash_seed)


def aot_builds(artifacts: tuple[dict, ...]) -> list[ModuleBuild]:
    """The identities `--arch` compiled, as builds, so that they are collected like the run's own."""
    return [
        ModuleBuild(
            seq=0,
            t_ms=0.0,
            module=str(a["module"]),
            hash=str(a["hash"]),
            device="cuda",
            block_dim=a["block_dim"],
            status="aot",
            module_ms=0.0,
            native_ms=0.0,
            options=dict(a["options"]),
            kernels=list(a["kernels"]),
            generics=[],
            cache_dir=None,
            site=None,
        )
        for a in artifacts
    ]
