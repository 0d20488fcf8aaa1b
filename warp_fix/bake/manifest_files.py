"""Reading a manifest the user names: a manifest.json file, or the one inside an archive (checked whole:
a manifest is only as good as the archive that carries it)."""

from __future__ import annotations

from pathlib import Path

from warp_fix.bake.archive import ArchiveReader
from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import Manifest, ManifestError


def load_manifest(manifest: Path | None, archive: Path | None) -> Manifest | None:
    """None when neither is given (verify then reads what restore left in the cache)."""
    if archive is not None:
        return ArchiveReader(archive).verify()
    if manifest is None:
        return None
    try:
        return Manifest.loads(manifest.read_bytes())
    except OSError as exc:
        raise BakeError(f"cannot read manifest {manifest}: {exc.strerror}") from None
    except ManifestError as exc:
        raise BakeError(f"{manifest}: {exc}") from None
