"""`warp-fix bake restore ARCHIVE`: verify everything, then place the entries where the user's run looks.

Order: every checksum (no write), the expected key, the environment (no write), the target cache's state
(no write); only then a staging directory beside the entries, renamed into place. A refusal writes nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.archive import extract_archive, sha256_file, verify_archive
from warp_fix.bake.environment import probe_machine, refusals
from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import Manifest, ManifestError

MANIFESTS_DIR = ".warp-fix-bake"  # restored manifests, which `bake verify` reads when none is given


@dataclass(frozen=True)
class RestoreResult:
    root: Path  # the versioned cache root the entries went to
    manifest: Manifest
    written: int  # files placed
    kept: int  # files the cache already held, byte-identical (--merge)
    wall_ms: float
    environment_ms: float  # of wall_ms: reading this machine's environment
    environment_remembered: bool  # read from an earlier Warp start on the same fingerprint, not a new one

    def to_json(self) -> dict[str, object]:
        return {
            "cache": str(self.root),
            "key": self.manifest.key,
            "written": self.written,
            "kept": self.kept,
            "wall_ms": self.wall_ms,
            "environment_ms": self.environment_ms,
            "environment_remembered": self.environment_remembered,
        }


def restore(
    archive: Path,
    cache: Path | None,
    merge: bool,
    python: str | None = None,
    expect_key: str | None = None,
    recheck_environment: bool = False,
) -> RestoreResult:
    start = time.perf_counter()
    manifest = verify_archive(archive)
    if expect_key and not manifest.key.startswith(expect_key):
        raise BakeError(f"refused: key mismatch: archive {manifest.key}, expected {expect_key}")
    probe_start = time.perf_counter()
    machine = probe_machine(python, cache, recheck_environment)
    environment_ms = (time.perf_counter() - probe_start) * 1000.0
    problems = refusals(manifest, machine.environment)
    if problems:
        raise BakeError(f"refused {archive.name}: " + "; ".join(problems))
    root = machine.kernel_cache_dir
    kept = _files_already_there(root, manifest, merge)
    written = _place(archive, root, kept)
    _keep_manifest(root, manifest)
    wall_ms = (time.perf_counter() - start) * 1000.0
    return RestoreResult(root, manifest, written, len(kept), wall_ms, environment_ms, machine.remembered)


def _files_already_there(root: Path, manifest: Manifest, merge: bool) -> set[str]:
    """The manifest's files the cache holds byte-identical; refuse a non-empty cache without --merge."""
    if not root.is_dir() or not any(root.iterdir()):
        return set()
    if not merge:
        count = sum(1 for _ in root.iterdir())
        raise BakeError(f"refused: the cache {root} already holds {count} entries: pass --merge to add to it")
    same = set()
    for item in manifest.files:
        path = root / item.path
        if not path.exists():
            continue
        if not path.is_file() or sha256_file(path) != item.sha256:
            raise BakeError(f"refused: the cache holds a different {item.path}; restore never overwrites an entry")
        same.add(item.path)
    return same


def _place(archive: Path, root: Path, kept: set[str]) -> int:
    """Extract into a staging dir on the cache's file system, then rename into place."""
    fresh = not root.exists()
    parent = root.parent if fresh else root
    parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".warp-fix-restore-", dir=parent))
    try:
        manifest = extract_archive(archive, stage)
        if fresh:
            os.rename(stage, root)
            return len(manifest.files)
        return _move_missing(stage, root, manifest, kept)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _move_missing(stage: Path, root: Path, manifest: Manifest, kept: set[str]) -> int:
    """Whole directories where the cache has none (atomic); else file by file, binaries before .meta."""
    moved = 0
    for top in sorted({item.path.split("/")[0] for item in manifest.files}):
        if not (root / top).exists():
            os.rename(stage / top, root / top)
            moved += sum(1 for item in manifest.files if item.path.split("/")[0] == top)
    for item in sorted(manifest.files, key=lambda f: (f.kind == "meta", f.path)):
        source, target = stage / item.path, root / item.path
        if item.path in kept or not source.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, target)
        moved += 1
    return moved


def _keep_manifest(root: Path, manifest: Manifest) -> None:
    folder = root / MANIFESTS_DIR
    folder.mkdir(exist_ok=True)
    (folder / f"{manifest.key}.json").write_text(manifest.dumps())


def restored_manifests(root: Path) -> list[Manifest]:
    """The manifests earlier restores left in this cache."""
    folder = root / MANIFESTS_DIR
    manifests = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            manifests.append(Manifest.loads(path.read_bytes()))
        except ManifestError as exc:
            raise BakeError(f"{path}: {exc}") from None
    return manifests
