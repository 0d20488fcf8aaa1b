"""Child processes warp-fix starts (the measured command, the project's tests) live and die as a group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path


def start_group(
    command: str | list[str], cwd: Path, env: Mapping[str, str], stderr: int = subprocess.PIPE
) -> subprocess.Popen:
    """Start a child in its own process group, fed no input, that dies with warp-fix; its output is piped.

    A string is a shell command line (the project's tests), a list an argv (the measured command). `stderr`:
    its own pipe, or `subprocess.STDOUT` to merge it into stdout.
    """
    return subprocess.Popen(
        command,
        shell=isinstance(command, str),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=die_with_parent,
    )


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
