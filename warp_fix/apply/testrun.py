"""The project's tests, run through the shell in a worktree: the gate every candidate must pass."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

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
    """Run `command` in its own process group; the whole group is killed on timeout or Ctrl-C."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, code = proc.communicate()[0], None
    except BaseException:
        _kill(proc)
        raise
    text = out.decode("utf-8", "replace")
    if code is None:
        text += f"\n(timed out after {timeout:g} s)"
    return TestRun(command, code == 0, code, round(time.perf_counter() - start, 2), text[-TAIL_CHARS:])


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
