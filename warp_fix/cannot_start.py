"""Tell a command that never started (not found, no such script or module) from one that ran and failed.

Both end with a non-zero exit, but they need different advice: a failing program or test suite is the
user's to fix or to skip, while a missing runner (`python -m pytest` without pytest installed) or a
mistyped script is bad input. Only the last line of output is read, so a traceback that merely ends in
an ImportError inside the user's code still counts as "ran and failed".

    >>> cannot_start(1, "/venv/bin/python: No module named pytest\\n")
    '/venv/bin/python: No module named pytest'
    >>> cannot_start(127, "sh: 1: pytset: not found\\n")
    'sh: 1: pytset: not found'
    >>> cannot_start(1, "ModuleNotFoundError: No module named 'scipy'\\n") is None
    True
"""

from __future__ import annotations

import re

SHELL_NOT_FOUND = 127  # POSIX shells: command not found
SHELL_NOT_EXECUTABLE = 126

# What CPython itself prints, before running any user code, when `python X.py` or `python -m X` has no X.
_PYTHON_DID_NOT_START = re.compile(
    r"^\S*python[\w.]*: (No module named \S+|can't open file .*|Error while finding module specification for .*)$"
)


def cannot_start(exit_code: int | None, output: str) -> str | None:
    """The line saying why the command never started, or None when it started (and maybe failed)."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if exit_code in (SHELL_NOT_FOUND, SHELL_NOT_EXECUTABLE):
        return last or f"exit {exit_code}: the shell could not find or run the command"
    if exit_code and _PYTHON_DID_NOT_START.match(last):
        return last
    return None
