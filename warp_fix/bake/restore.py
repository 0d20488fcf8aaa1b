"""`warp-fix bake restore ARCHIVE`: verify everything, then place the entries where the user's run looks.

Order: the signature when one is required, every checksum (no write), the expected key, the environment
(no write), the target cache's state (no write, under a lock that serialises restores into one cache);
only then a staging directory beside the entries, moved into place. A refusal, or a failure while
writing (a full disk, a read-only cache), leaves the cache as it was: all or nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.archive import DEFAULT_MAX_BYTES, ArchiveReader, sha256_file
from warp_fix.bake.environment import Applicable, applicable, probe_machine, refusals
from warp_fix.bake.errors import BakeError
from warp_fix.bake.layout import RECORDS_DIR
from warp_fix.bake.manifest import Manifest, ManifestError
from warp_fix.bake.modes import directory_mode


@dataclass(frozen=True)
class RestoreResult:
    root: Path  # the versioned cache root the entries went to
    manifest: Manifest
    written: int  # files placed
    kept: int  # files the cache already held, byte-identical (--merge)
    wall_ms: float
    environment_ms: float  # of wall_ms: reading this machine's environment
    environment_remembered: bool  # read from an earlier Warp start on the same fingerprint, not a new one
    archive_key: str = ""  # the archive's own key: the manifest's unless --partial left entries out
    differences: tuple[str, ...] = ()  # with --partial: each environment field that differs, archive against here
    skipped: tuple[tuple[str, str, str], ...] = ()  # with --partial: (module, full hash, why) of each entry left out

    def to_json(self) -> dict[str, object]:
        return {
            "cache": str(self.root),
            "key": self.manifest.key,
            "archive_key": self.archive_key or self.manifest.key,
            "differences": list(self.differences),
            "skipped": [{"module": module, "hash": h, "reason": why} for module, h, why in self.skipped],
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
    max_bytes: int | None = None,
    allowed_signers: Path | None = None,
    partial: bool = False,
) -> RestoreResult:
    """Verify, then place the archive's entries; with `partial`, an environment that differs places the entries
    that still apply (environment.applicable) and names the rest, instead of refusing the whole archive."""
    start = time.perf_counter()
    if allowed_signers is not None:
        from warp_fix.bake.signing import check_signature

        check_signature(archive, allowed_signers)
    reader = ArchiveReader(archive, max_bytes=max_bytes or DEFAULT_MAX_BYTES)
    manifest = reader.verify()
    if expect_key and not manifest.key.startswith(expect_key):
        raise BakeError(f"refused: key mismatch: archive {manifest.key}, expected {expect_key}")
    probe_start = time.perf_counter()
    machine = probe_machine(python, cache, recheck_environment)
    environment_ms = (time.perf_counter() - probe_start) * 1000.0
    problems = refusals(manifest, machine.environment)
    if problems and not partial:
        raise BakeError(f"refused {archive.name}: " + "; ".join(problems))
    part = applicable(manifest, machine.environment) if problems else Applicable(manifest, ())
    root = machine.kernel_cache_dir
    kept: set[str] = set()
    written = 0
    if part.manifest.modules:
        with _restore_lock(root):
            kept = _files_already_there(root, part.manifest, merge)
            written = _place(reader, root, manifest, part.manifest, kept)
    wall_ms = (time.perf_counter() - start) * 1000.0
    return RestoreResult(
        root,
        part.manifest,
        written,
        len(kept),
        wall_ms,
        environment_ms,
        machine.remembered,
        archive_key=manifest.key,
        differences=tuple(problems),
        skipped=part.skipped,
    )


@contextmanager
def _restore_lock(root: Path) -> Iterator[None]:
    """One restore at a time into a cache: a second waits, then finds what the first placed (and --merge keeps it).

    The lock is on the folder that holds the versioned root (a directory can be flock'ed), so no lock file
    is left beside Warp's entries. Where there is no `flock` (Windows), restores are not serialised.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(root.parent, os.O_RDONLY)
    except OSError as exc:
        raise BakeError(f"cannot write the cache {root}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def _record(root: Path, manifest: Manifest) -> Path:
    return root / RECORDS_DIR / f"{manifest.key}.json"


def _files_already_there(root: Path, manifest: Manifest, merge: bool) -> set[str]:
    """The manifest's files the cache holds byte-identical; refuse what a restore would have to overwrite.

    A cache this very archive was restored into (its record is there, the same) takes it again without
    --merge: a container's second start restores into the cache its first start left.
    """
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise BakeError(f"refused: the cache {root} is not a directory")
    if not root.is_dir() or not any(root.iterdir()):
        return set()
    again = _same_record(root, manifest)
    if not merge and not again:
        count = sum(1 for _ in root.iterdir())
        raise BakeError(f"refused: the cache {root} already holds {count} entries: pass --merge to add to it")
    for top in sorted({item.path.split("/")[0] for item in manifest.files} | {RECORDS_DIR}):
        place = root / top
        if place.is_symlink() or (place.exists() and not place.is_dir()):
            raise BakeError(f"refused: {place} is a link or a file, not a directory: restore writes only into folders")
    same = set()
    for item in manifest.files:
        path = root / item.path
        if not path.exists() and not path.is_symlink():
            continue
        if path.is_symlink() or not path.is_file() or sha256_file(path) != item.sha256:
            raise BakeError(f"refused: the cache holds a different {item.path}; restore never overwrites an entry")
        same.add(item.path)
    return same


def _same_record(root: Path, manifest: Manifest) -> bool:
    """Whether the cache holds this manifest's record; a different record under its key is refused."""
    record = _record(root, manifest)
    if not record.exists() and not record.is_symlink():
        return False
    try:
        if not record.is_symlink() and record.is_file() and record.read_text() == manifest.dumps():
            return True
    except (OSError, UnicodeDecodeError):
        pass
    raise BakeError(
        f"refused: the cache holds a different record {record} for key {manifest.key}: restore never replaces one "
        "(remove it if the cache is yours to reset)"
    )


def _place(reader: ArchiveReader, root: Path, archived: Manifest, manifest: Manifest, kept: set[str]) -> int:
    """Extract into a staging dir on the cache's file system, then move `manifest`'s files (the archived one's, or
    those of its entries that apply here) into place; on failure, nothing stays."""
    fresh = not root.exists()
    try:
        parent = root.parent if fresh else root
        parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".warp-fix-restore-", dir=parent))
    except OSError as exc:
        raise BakeError(f"cannot write the cache {root}: {exc.strerror or exc}") from None
    try:
        os.chmod(stage, directory_mode())  # Warp's mode for the folder it becomes, not mkdtemp's 0700
        if reader.extract(stage) != archived:  # the file was replaced since it was verified
            raise BakeError(f"refused {reader.name}: it changed while it was being restored")
        _leave_out(stage, archived, manifest)
        record = _record(stage, manifest)
        record.parent.mkdir(exist_ok=True)
        record.write_text(manifest.dumps())
        if fresh:
            os.rename(stage, root)
            return len(manifest.files)
        return _Placement(stage, root).move(manifest, kept)
    except OSError as exc:
        raise BakeError(f"cannot write the cache {root}: {exc.strerror or exc}; nothing was restored") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _leave_out(stage: Path, archived: Manifest, manifest: Manifest) -> None:
    """Remove from the stage the files of the entries `manifest` (a part of `archived`) does not hold."""
    wanted = {item.path for item in manifest.files}
    for item in archived.files:
        if item.path not in wanted:
            (stage / item.path).unlink()
    for top in {item.path.split("/")[0] for item in archived.files} - {path.split("/")[0] for path in wanted}:
        shutil.rmtree(stage / top, ignore_errors=True)


class _Placement:
    """Renames from the stage into the cache, undone in reverse when one fails."""

    def __init__(self, stage: Path, root: Path) -> None:
        self.stage, self.root = stage, root
        self.done: list[tuple[Path, Path]] = []  # (source, target) renamed so far
        self.made: list[Path] = []  # folders created in the cache

    def move(self, manifest: Manifest, kept: set[str]) -> int:
        """Whole directories where the cache has none; else file by file, binaries before .meta; the record last."""
        try:
            return self._move(manifest, kept)
        except OSError:
            self._undo()
            raise

    def _move(self, manifest: Manifest, kept: set[str]) -> int:
        moved = 0
        for top in sorted({item.path.split("/")[0] for item in manifest.files}):
            if not (self.root / top).exists():
                self._rename(self.stage / top, self.root / top)
                moved += sum(1 for item in manifest.files if item.path.split("/")[0] == top)
        for item in sorted(manifest.files, key=lambda f: (f.kind == "meta", f.path)):
            source, target = self.stage / item.path, self.root / item.path
            if item.path in kept or not source.exists():
                continue
            self._folder(target.parent)
            self._rename(source, target)
            moved += 1
        record = _record(self.stage, manifest)
        if not _record(self.root, manifest).exists():
            self._folder(self.root / RECORDS_DIR)
            self._rename(record, _record(self.root, manifest))
        return moved

    def _folder(self, folder: Path) -> None:
        missing = [p for p in (folder, *folder.parents) if p.is_relative_to(self.root) and not p.exists()]
        for path in reversed(missing):
            path.mkdir()
            self.made.append(path)

    def _rename(self, source: Path, target: Path) -> None:
        os.rename(source, target)
        self.done.append((source, target))

    def _undo(self) -> None:
        for source, target in reversed(self.done):
            try:
                os.rename(target, source)
            except OSError:
                _remove(target)
        for folder in reversed(self.made):
            with suppress(OSError):
                folder.rmdir()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def restored_manifests(root: Path) -> list[Manifest]:
    """The manifests earlier restores left in this cache."""
    folder = root / RECORDS_DIR
    manifests = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            manifests.append(Manifest.loads(path.read_bytes()))
        except ManifestError as exc:
            raise BakeError(f"{path}: {exc}") from None
    return manifests
