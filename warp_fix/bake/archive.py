"""The archive: a gzip'd tar of `manifest.json` then `cache/<path>` per file, reproducible byte for byte.

Reading verifies before anything is written: every member must be a regular file the manifest lists,
with its size and sha256; nothing may be missing or extra; paths may not leave the cache root.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import MANIFEST_NAME, ArtifactFile, Manifest, ManifestError

CACHE_PREFIX = "cache/"
_READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError)


def archive_name(manifest: Manifest) -> str:
    """The default file name: content-addressed by the manifest's key."""
    return f"warp-bake-{manifest.key}.tar.gz"


def write_archive(destination: Path, manifest: Manifest, root: Path) -> int:
    """Write atomically (temp file + rename); returns the archive's size in bytes."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".warp-bake-", dir=destination.parent)
    try:
        with (
            os.fdopen(handle, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed,
            tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            _add(tar, MANIFEST_NAME, manifest.dumps().encode())
            for item in manifest.files:
                _add(tar, CACHE_PREFIX + item.path, (root / item.path).read_bytes())
        os.replace(temp, destination)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return destination.stat().st_size


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 0
    tar.addfile(info, io.BytesIO(data))


def read_manifest(archive: Path) -> Manifest:
    """The manifest alone (the first member), without reading the rest."""
    with _open(archive) as tar:
        member = _next(tar, archive)
        if member is None or member.name != MANIFEST_NAME or not member.isfile():
            raise BakeError(f"{archive} is not a warp-fix bake archive: it does not start with {MANIFEST_NAME}")
        return _manifest(tar, member, archive)


def verify_archive(archive: Path) -> Manifest:
    """Read every member and check it against the manifest; raise BakeError naming the first fault."""
    return _walk(archive, lambda item, data: None)


def extract_archive(archive: Path, into: Path) -> Manifest:
    """Write each verified file under `into` (a staging directory the caller renames or removes)."""

    def write(item: ArtifactFile, data: bytes) -> None:
        path = into / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    return _walk(archive, write)


def _walk(archive: Path, sink: Callable[[ArtifactFile, bytes], None]) -> Manifest:
    with _open(archive) as tar:
        first = _next(tar, archive)
        if first is None or first.name != MANIFEST_NAME or not first.isfile():
            raise BakeError(f"{archive} is not a warp-fix bake archive: it does not start with {MANIFEST_NAME}")
        manifest = _manifest(tar, first, archive)
        expected = {CACHE_PREFIX + item.path: item for item in manifest.files}
        seen: set[str] = set()
        while (member := _next(tar, archive)) is not None:
            item = expected.get(member.name)
            if item is None or member.name in seen or not member.isfile():
                raise BakeError(f"{archive} holds {member.name}, which its manifest does not list")
            data = _read(tar, member, archive)
            if len(data) != item.size or hashlib.sha256(data).hexdigest() != item.sha256:
                raise BakeError(f"{archive}: checksum mismatch for {item.path} (corrupt or tampered)")
            sink(item, data)
            seen.add(member.name)
        missing = sorted(set(expected) - seen)
        if missing:
            raise BakeError(f"{archive} lacks {missing[0][len(CACHE_PREFIX) :]} (truncated?), listed in its manifest")
    return manifest


def _manifest(tar: tarfile.TarFile, member: tarfile.TarInfo, archive: Path) -> Manifest:
    try:
        manifest = Manifest.loads(_read(tar, member, archive))
    except ManifestError as exc:
        raise BakeError(f"{archive}: {exc}") from None
    for item in manifest.files:
        path = PurePosixPath(item.path)
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise BakeError(f"{archive}: the manifest names a path outside the cache: {item.path}")
    return manifest


def _open(archive: Path) -> tarfile.TarFile:
    if not archive.is_file():
        raise BakeError(f"archive not found: {archive}")
    try:
        return tarfile.open(archive, mode="r:gz")
    except _READ_ERRORS as exc:
        raise BakeError(f"{archive} is not a readable gzip'd tar archive ({exc})") from None


def _next(tar: tarfile.TarFile, archive: Path) -> tarfile.TarInfo | None:
    try:
        return tar.next()
    except _READ_ERRORS as exc:
        raise BakeError(f"{archive} is truncated or corrupt ({type(exc).__name__}: {exc})") from None


def _read(tar: tarfile.TarFile, member: tarfile.TarInfo, archive: Path) -> bytes:
    try:
        handle = tar.extractfile(member)
        return handle.read() if handle is not None else b""
    except _READ_ERRORS as exc:
        raise BakeError(f"{archive} is truncated or corrupt ({type(exc).__name__}: {exc})") from None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
