"""The archive: a gzip'd tar of `manifest.json` then `cache/<path>` per file, reproducible byte for byte.

Reading verifies before anything is kept: the manifest must be closed (bake/layout.py), every member a
regular file the manifest lists, with its size (checked in the member's header, before its bytes are
read) and sha256; nothing may be missing or extra. Members are streamed, never held whole in memory, and
the entries a manifest declares may not exceed a limit the user can raise.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import tempfile
import zlib
from pathlib import Path
from typing import BinaryIO

from warp_fix.bake.errors import BakeError
from warp_fix.bake.layout import layout_fault
from warp_fix.bake.manifest import MANIFEST_NAME, ArtifactFile, Manifest, ManifestError
from warp_fix.bake.modes import file_mode

CACHE_PREFIX = "cache/"
DEFAULT_MAX_BYTES = 2 << 30  # entries a manifest may declare unless the user raises it (--max-bytes)
MANIFEST_MAX_BYTES = 64 << 20  # a manifest larger than this is not one bake made
_CHUNK = 1 << 20
_READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError)


def archive_name(manifest: Manifest) -> str:
    """The default file name: content-addressed by the manifest's key."""
    return f"warp-bake-{manifest.key}.tar.gz"


def destination(out: str | os.PathLike[str] | None, name: str) -> Path:
    """`--out`: a folder when it ends in `/` or is one (created when missing; `name` goes inside), else the file.

    `..` is resolved here, as the shell would, so that `--out a/../b/` is `b/` whether or not `a` exists.
    """
    if out is None:
        return Path.cwd() / name
    text = os.fspath(out)
    path = Path(os.path.abspath(text))
    if text.endswith(("/", os.sep)) or path.is_dir():
        return path / name
    return path


def write_archive(target: Path, manifest: Manifest, root: Path) -> int:
    """Write atomically (temp file + rename) with the mode Warp gives its files; returns the size in bytes."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=".warp-bake-", dir=target.parent)
    except OSError as exc:
        raise BakeError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        os.fchmod(handle, file_mode())
        with (
            os.fdopen(handle, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed,
            tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            _add(tar, MANIFEST_NAME, manifest.dumps().encode())
            for item in manifest.files:
                _add(tar, CACHE_PREFIX + item.path, (root / item.path).read_bytes())
        os.replace(temp, target)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise BakeError(f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target.stat().st_size


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 0
    tar.addfile(info, io.BytesIO(data))


class ArchiveReader:
    """One archive read in a stream; `name` is what messages call it (the URL of a pull, not its temp file)."""

    def __init__(self, archive: Path, name: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.archive, self.name, self.max_bytes = archive, name or str(archive), max_bytes

    def manifest(self) -> Manifest:
        """The manifest alone (the first member), without reading the rest."""
        with self._open() as tar:
            return self._manifest(tar)

    def verify(self) -> Manifest:
        """Read every member and check it against the manifest; raise BakeError naming the first fault."""
        return self._walk(None)

    def extract(self, into: Path) -> Manifest:
        """Write each verified file under `into` (a staging directory the caller renames or removes)."""
        return self._walk(into)

    def _walk(self, into: Path | None) -> Manifest:
        with self._open() as tar:
            manifest = self._manifest(tar)
            expected = {CACHE_PREFIX + item.path: item for item in manifest.files}
            seen: set[str] = set()
            while (member := self._next(tar)) is not None:
                item = expected.get(member.name)
                if item is None or member.name in seen or not member.isfile():
                    raise BakeError(f"{self.name} holds {member.name}, which its manifest does not list")
                if member.size != item.size:
                    raise BakeError(
                        f"{self.name}: {item.path} is {member.size:,} bytes in the archive, "
                        f"{item.size:,} in its manifest (corrupt or tampered)"
                    )
                self._member(tar, member, item, into)
                seen.add(member.name)
            if missing := sorted(set(expected) - seen):
                lacking = missing[0][len(CACHE_PREFIX) :]
                raise BakeError(f"{self.name} lacks {lacking} (truncated?), listed in its manifest")
        return manifest

    def _member(self, tar: tarfile.TarFile, member: tarfile.TarInfo, item: ArtifactFile, into: Path | None) -> None:
        """Stream one member through sha256 (and into its file under `into`): never whole in memory."""
        digest = hashlib.sha256()
        sink: BinaryIO | None = None
        if into is not None:
            path = into / item.path
            path.parent.mkdir(parents=True, exist_ok=True)
            sink = path.open("xb")
        try:
            source = tar.extractfile(member)
            while chunk := self._chunk(source):
                digest.update(chunk)
                if sink is not None:
                    sink.write(chunk)  # an OSError here is the staging file system's: the caller says so
        finally:
            if sink is not None:
                sink.close()
        if digest.hexdigest() != item.sha256:
            raise BakeError(f"{self.name}: checksum mismatch for {item.path} (corrupt or tampered)")

    def _chunk(self, source: BinaryIO | None) -> bytes:
        try:
            return source.read(_CHUNK) if source is not None else b""
        except _READ_ERRORS as exc:
            raise BakeError(f"{self.name} is truncated or corrupt ({type(exc).__name__}: {exc})") from None

    def _manifest(self, tar: tarfile.TarFile) -> Manifest:
        member = self._next(tar)
        if member is None or member.name != MANIFEST_NAME or not member.isfile():
            raise BakeError(f"{self.name} is not a warp-fix bake archive: it does not start with {MANIFEST_NAME}")
        if member.size > MANIFEST_MAX_BYTES:
            raise BakeError(f"{self.name}: its manifest is {member.size:,} bytes, not one bake made")
        try:
            handle = tar.extractfile(member)
            manifest = Manifest.loads(handle.read() if handle is not None else b"")
        except _READ_ERRORS as exc:
            raise BakeError(f"{self.name} is truncated or corrupt ({type(exc).__name__}: {exc})") from None
        except ManifestError as exc:
            raise BakeError(f"{self.name}: {exc}") from None
        if fault := layout_fault(manifest):
            raise BakeError(f"refused {self.name}: {fault}")
        declared = sum(item.size for item in manifest.files)
        if declared > self.max_bytes:
            raise BakeError(
                f"refused {self.name}: its manifest declares {declared:,} bytes of entries, over the limit of "
                f"{self.max_bytes:,} (--max-bytes raises it)"
            )
        return manifest

    def _open(self) -> tarfile.TarFile:
        if not self.archive.is_file():
            raise BakeError(f"archive not found: {self.name}")
        try:
            return tarfile.open(self.archive, mode="r:gz")
        except _READ_ERRORS as exc:
            raise BakeError(f"{self.name} is not a readable gzip'd tar archive ({exc})") from None

    def _next(self, tar: tarfile.TarFile) -> tarfile.TarInfo | None:
        try:
            return tar.next()
        except _READ_ERRORS as exc:
            raise BakeError(f"{self.name} is truncated or corrupt ({type(exc).__name__}: {exc})") from None


def read_manifest(archive: Path) -> Manifest:
    return ArchiveReader(archive).manifest()


def verify_archive(archive: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Manifest:
    return ArchiveReader(archive, max_bytes=max_bytes).verify()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
