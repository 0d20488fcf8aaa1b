"""The project's tests, run through the shell in a worktree: the gate every candidate must pass."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from warp_fix.process_group import kill_group, start_group

TAIL_CHARS = 2000


@dataclass
class TestRun:
    __test__ = False  # not a pytest test class

    command: str
    passed: bool
    exit_code: int | None  # None: timed out
    seconds: float
    tail: str  # the end of stdout+stderr, for the ledger when it fails


def run_tests(command: str, cwd: Path, timeout: float | None = None) -> TestRun:
    """Run `command` in its own process group; the group is killed on timeout, Ctrl-C or warp-fix's death."""
    start = time.perf_counter()
    proc = start_group(command, cwd, {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, code = proc.communicate()[0], None
    except BaseException:
        kill_group(proc)
        raise
    text = out.decode("utf-8", "replace")
    if code is None:
        text += f"\n(timed out after {timeout:g} s)"
    return TestRun(command, code == 0, code, round(time.perf_counter() - start, 2), text[-TAIL_CHARS:])
