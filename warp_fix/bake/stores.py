"""`bake push/pull URL`: archives in a shared store through fsspec (file://, memory://, s3://, gs://, ...).

Credentials are the user's own, as fsspec finds them. A push never leaves a partial archive under the
final name: it uploads to a temporary name and renames (an object store's put is atomic already), then
writes the archive's sha256 beside it (`<archive>.sha256`). A pull downloads to a temporary file,
refuses an archive that does not match that digest (an interrupted or concurrent push, a splice) or
does not verify, and only then renames: a bad archive leaves nothing. A signature (`<archive>.sig`)
travels with the archive when there is one.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from warp_fix.bake.archive import ArchiveReader, destination, sha256_file
from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import Manifest
from warp_fix.bake.modes import file_mode
from warp_fix.bake.signing import SIGNATURE_SUFFIX, signature_path

ARCHIVE_SUFFIX = ".tar.gz"
DIGEST_SUFFIX = ".sha256"


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
    """Verify the archive, then upload it (and its signature), each under a temporary name renamed into place."""
    manifest = ArchiveReader(archive).verify()
    digest = sha256_file(archive)
    target = remote_path(url, archive.name)
    fs, path = _filesystem(target)
    try:
        parent = path.rsplit("/", 1)[0]
        if parent:
            fs.makedirs(parent, exist_ok=True)
        _put_atomic(fs, lambda temp: fs.put_file(str(archive), temp), path)
        if signature_path(archive).is_file():
            _put_atomic(fs, lambda temp: fs.put_file(str(signature_path(archive)), temp), path + SIGNATURE_SUFFIX)
        line = f"{digest}  {path.rsplit('/', 1)[-1]}\n".encode()
        _put_atomic(fs, lambda temp: fs.pipe_file(temp, line), path + DIGEST_SUFFIX)
    except OSError as exc:
        raise BakeError(f"cannot write {target}: {exc}") from None
    return target, manifest


def _put_atomic(fs, write: Callable[[str], None], path: str) -> None:
    """`write` to a name of its own, then rename: readers see the old file or the whole new one, never a part."""
    temp = f"{path}.{uuid.uuid4().hex}.partial"
    try:
        write(temp)
        fs.mv(temp, path)
    except BaseException:
        with suppress(OSError):
            fs.rm_file(temp)
        raise


def pull(url: str, out: str) -> tuple[Path, Manifest]:
    """Download to a temp file beside the destination, check its digest and every checksum, then rename."""
    fs, path = _filesystem(url)
    if not fs.exists(path):
        raise BakeError(f"no archive at {url}")
    expected = _digest(fs, path, url)
    target = destination(out, path.rsplit("/", 1)[-1])
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=".warp-bake-pull-", suffix=ARCHIVE_SUFFIX, dir=target.parent)
    except OSError as exc:
        raise BakeError(f"cannot write {target}: {exc.strerror or exc}") from None
    os.close(handle)
    signature = Path(temp + SIGNATURE_SUFFIX)
    try:
        try:
            fs.get_file(path, temp)
            if fs.exists(path + SIGNATURE_SUFFIX):
                fs.get_file(path + SIGNATURE_SUFFIX, str(signature))
        except OSError as exc:
            raise BakeError(f"cannot read {url}: {exc}") from None
        if sha256_file(Path(temp)) != expected:
            raise BakeError(f"refused {url}: its bytes do not match its digest {url}{DIGEST_SUFFIX} (a push was "
                            "interrupted, raced or tampered with)")
        manifest = ArchiveReader(Path(temp), name=url).verify()
        os.chmod(temp, file_mode())
        if signature.is_file():
            os.chmod(signature, file_mode())
            os.replace(signature, signature_path(target))
        os.replace(temp, target)
    except OSError as exc:
        raise BakeError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        Path(temp).unlink(missing_ok=True)
        signature.unlink(missing_ok=True)
    return target, manifest


def _digest(fs, path: str, url: str) -> str:
    try:
        text = fs.cat_file(path + DIGEST_SUFFIX).decode(errors="replace")
    except (OSError, FileNotFoundError):
        raise BakeError(
            f"refused {url}: no digest beside it ({url}{DIGEST_SUFFIX}): push archives with warp-fix bake push"
        ) from None
    words = text.split()
    if not words or len(words[0]) != 64:
        raise BakeError(f"refused {url}: {url}{DIGEST_SUFFIX} holds no sha256")
    return words[0].lower()
