"""Child processes warp-fix starts (the measured command, the project's tests) live and die as a group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess


def die_with_parent() -> None:
    """Linux `preexec_fn`: the child is killed if warp-fix itself is killed (SIGKILL leaves no orphan)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def kill_group(proc: subprocess.Popen) -> None:
    """Kill the child's whole process group (it was started with `start_new_session=True`) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
