"""The permissions Warp gives what it creates in its cache, which bake's own files must match.

Warp 1.19 makes its directories with `mkdir` and its files with `open(..., "w")` (warp/_src/context.py,
build.py): 0o777 and 0o666 less the umask. A temporary directory or file (`mkdtemp`, `mkstemp`) is 0o700 or
0o600, which another user of a shared runner, or a container's non-root user, could not read once renamed.
"""

from __future__ import annotations

import os


def current_umask() -> int:
    """The process's umask (reading it means setting it: put back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def directory_mode() -> int:
    return 0o777 & ~current_umask()


def file_mode() -> int:
    return 0o666 & ~current_umask()
