"""Changes to this process's environment that undo themselves."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def prepended(variable: str, folder: str) -> Iterator[None]:
    """`folder` first on the search path `variable` (`PATH`, `PYTHONPATH`) while inside, for the processes started
    there; the variable is as it was afterwards, unset again if it was unset."""
    previous = os.environ.get(variable)
    os.environ[variable] = os.pathsep.join([folder, *([previous] if previous else [])])
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = previous
