"""A copy of the cache for `bake verify` to run on, so that the guard does not change what it guards.

A verify whose run compiles writes the new entries into the cache it ran on; the next verify would then
find them and pass. So the run gets a copy: hard links beside the real cache (cheap, and safe because
Warp never writes into an existing file: it builds in a folder of its own and renames), plain copies
where links cannot be made (another file system). The copy is removed after the run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from warp_fix.bake.errors import BakeError


@contextmanager
def scratch_cache(root: Path) -> Iterator[Path]:
    """Yield a WARP_CACHE_PATH under which `<root.name>` holds what the versioned cache root `root` holds."""
    base = _scratch_folder(root.parent)
    try:
        if root.is_dir():
            shutil.copytree(root, base / root.name, symlinks=True, copy_function=_link_or_copy)
        else:
            (base / root.name).mkdir()
        yield base
    except OSError as exc:
        raise BakeError(f"cannot copy the cache {root} to verify on: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _scratch_folder(near: Path) -> Path:
    """Beside the cache, where hard links work; the temp folder when the cache's folder is not writable."""
    for parent in (near, None):
        try:
            if parent is not None and not parent.is_dir():
                continue
            return Path(tempfile.mkdtemp(prefix=".warp-fix-verify-", dir=parent))
        except OSError:
            continue
    raise BakeError(f"cannot make a scratch copy of the cache beside {near} or in {tempfile.gettempdir()}")


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
