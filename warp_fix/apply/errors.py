"""Errors apply raises; the CLI maps them to exit codes (usage: 2, failing baseline: 1)."""

from __future__ import annotations

from warp_fix.probe import BaselineFailed


class ApplyError(Exception):
    """A precondition does not hold; one line that says what to do. Exit 2."""


class BaselineTestsFailed(BaselineFailed):
    """The project's tests fail before any change: no fix could ever pass them. Exit 1."""

    def __init__(self, command: str, exit_code: int | None, output_tail: str):
        Exception.__init__(
            self,
            f"the tests fail before any change (`{command}` exited {exit_code}): fix them or pass --test",
        )
        self.exit_code = exit_code
        self.stderr_tail = output_tail
