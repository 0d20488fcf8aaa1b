"""ApplyStep: where a running apply stands, for a progress display beside its printed lines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ApplyStep:
    """One line apply printed, with the counts a progress bar shows.

    fixes_done of fixes_planned: the fixes tried so far, of those known now (the plan is made again after each
    kept fix, so the total can move). runs: the probe runs taken so far, each one cold+warm sample of the
    command; per_arm: the most samples one arm of a comparison may take (`--samples`).

    >>> ApplyStep("  run 2 with the fix", 1, 4, 7, 3).position()
    'fix 2 of 4 · 7 probe runs · at most 3 per arm'
    """

    text: str
    fixes_done: int
    fixes_planned: int
    runs: int
    per_arm: int

    def position(self) -> str:
        runs = f"{self.runs} probe run{'s' if self.runs != 1 else ''} · at most {self.per_arm} per arm"
        if not self.fixes_planned:
            return runs
        return f"fix {min(self.fixes_done + 1, self.fixes_planned)} of {self.fixes_planned} · {runs}"


StepSink = Callable[[ApplyStep], None]
