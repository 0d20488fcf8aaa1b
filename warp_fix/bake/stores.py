"""`bake push/pull URL`: archives in a shared store through fsspec (file://, memory://, s3://, gs://, ...).

Credentials are the user's own, as fsspec finds them. A pulled archive is verified in full before it
replaces anything locally.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from warp_fix.bake.archive import verify_archive
from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import Manifest

ARCHIVE_SUFFIX = ".tar.gz"


def _filesystem(url: str):
    try:
        import fsspec
    except ImportError:
        raise BakeError(
            "bake push/pull need fsspec: pip install fsspec (and s3fs, gcsfs, ... for those stores)"
        ) from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise BakeError(f"cannot open store {url}: {exc}") from None


def remote_path(url: str, archive_name: str) -> str:
    """A URL ending in .tar.gz names the file; anything else is a folder the archive goes into."""
    return url if url.endswith(ARCHIVE_SUFFIX) else url.rstrip("/") + "/" + archive_name


def push(archive: Path, url: str) -> tuple[str, Manifest]:
    """Verify the archive, then upload it; returns where it went."""
    manifest = verify_archive(archive)
    target = remote_path(url, archive.name)
    fs, path = _filesystem(target)
    try:
        parent = path.rsplit("/", 1)[0]
        if parent:
            fs.makedirs(parent, exist_ok=True)
        fs.put_file(str(archive), path)
    except OSError as exc:
        raise BakeError(f"cannot write {target}: {exc}") from None
    return target, manifest


def pull(url: str, out: Path) -> tuple[Path, Manifest]:
    """Download to a temp file beside `out`, verify every checksum, then rename; a bad archive leaves nothing."""
    fs, path = _filesystem(url)
    if not fs.exists(path):
        raise BakeError(f"no archive at {url}")
    destination = out / path.rsplit("/", 1)[-1] if out.is_dir() else out
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".warp-bake-pull-", suffix=ARCHIVE_SUFFIX, dir=destination.parent)
    os.close(handle)
    try:
        try:
            fs.get_file(path, temp)
        except OSError as exc:
            raise BakeError(f"cannot read {url}: {exc}") from None
        manifest = verify_archive(Path(temp))
        os.replace(temp, destination)
    finally:
        Path(temp).unlink(missing_ok=True)
    return destination, manifest
