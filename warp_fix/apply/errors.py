"""Errors apply raises; the CLI maps them to exit codes (usage: 2, failing baseline: 1)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from warp_fix.probe import BaselineFailed

if TYPE_CHECKING:
    from warp_fix.apply.ledger import Ledger


class ApplyError(Exception):
    """A precondition does not hold; one line that says what to do. Exit 2."""


class BaselineTestsFailed(BaselineFailed):
    """The project's tests fail before any change: no fix could ever pass them. Exit 1."""

    def __init__(self, command: str, exit_code: int | None, output_tail: str):
        Exception.__init__(
            self,
            f"the tests fail before any change (`{command}` exited {exit_code}): fix them or pass --test",
        )
        self.command = command
        self.exit_code = exit_code
        self.stderr_tail = output_tail


class ApplyInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM/SIGHUP) after cleanup, carrying what the run left: kept commits stay on the branch."""

    def __init__(self, ledger: Ledger, ledger_files: tuple[Path, Path] | None):
        super().__init__("interrupted")
        self.ledger = ledger
        self.ledger_files = ledger_files
