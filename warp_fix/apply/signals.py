"""SIGTERM and SIGHUP end apply like Ctrl-C does, so its cleanup runs (SIGKILL cannot be caught)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def termination_interrupts() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in _SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def shielded_from_interrupts() -> Iterator[None]:
    """Cleanup runs to the end: a second Ctrl-C must not leave a half-removed worktree behind."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, *_SIGNALS)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
