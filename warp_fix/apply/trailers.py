"""The `Warp-Fix-*` commit trailers: what a kept fix records for machines, written and read by one codec.

apply writes them into each commit (`git interpret-trailers` reads them too); `warp-fix log` reads them back
to show and total the measured changes, from the commits alone when no ledger covers them.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field

from warp_fix.metrics import TRAILED, Metric

PREFIX = "Warp-Fix-"
NOT_APPLICABLE = "n/a"
ARROW = " -> "
SAMPLES = " per arm"
INTERLEAVED = ", interleaved"
REUSED = ", earlier runs reused for the code without the fix"
_BY_TRAILER = {metric.trailer: metric for metric in TRAILED}


@dataclass(frozen=True)
class Change:
    before: float
    after: float


@dataclass(frozen=True)
class CommitTrailers:
    """A kept fix as its commit records it: which fix, its verdict, and each metric measured before -> after."""

    mechanism: str
    fix: str
    verdict: str
    per_arm: int
    changes: dict[Metric, Change | None] = field(default_factory=dict)  # None: measured, but n/a here
    output: str = ""  # the output verdict in brief: "identical", "within learned tolerance"
    side_by_side: bool = True  # False: the code without the fix was its earlier runs, reused

    def text(self, metric: Metric) -> str:
        """The metric as its trailer writes it: "4 -> 3", "n/a", or "" when the commit does not record it."""
        if metric not in self.changes:
            return ""
        change = self.changes[metric]
        return NOT_APPLICABLE if change is None else metric.format(change.before) + ARROW + metric.format(change.after)


class TrailerCodec:
    """Encodes a CommitTrailers to trailer lines and decodes them back: the one place that knows their text."""

    @staticmethod
    def fields(record: CommitTrailers) -> dict[str, str]:
        """Trailer key (without the prefix) -> value, in the order the commit lists them."""
        values = {"Mechanism": record.mechanism, "Fix": record.fix, "Verdict": record.verdict}
        values |= {metric.trailer: record.text(metric) for metric in TRAILED if metric in record.changes}
        values["Samples"] = f"{record.per_arm}{SAMPLES}{INTERLEAVED if record.side_by_side else REUSED}"
        if record.output:
            values["Output"] = record.output
        return values

    @classmethod
    def encode(cls, record: CommitTrailers) -> str:
        return "\n".join(f"{PREFIX}{key}: {value}" for key, value in cls.fields(record).items())

    @staticmethod
    def decode(lines: str) -> CommitTrailers | None:
        """The record in a commit's trailer lines; None for a commit apply did not make (no mechanism).

        A value that does not read (a hand-edited trailer) is left out rather than failing `log`.
        """
        values = {}
        for line in lines.splitlines():
            key, sep, value = line.partition(":")
            if sep and key.startswith(PREFIX):
                values[key.removeprefix(PREFIX)] = value.strip()
        if "Mechanism" not in values:
            return None
        changes = {}
        for key, value in values.items():
            if key in _BY_TRAILER:
                with suppress(ValueError):
                    changes[_BY_TRAILER[key]] = _change(value)
        return CommitTrailers(
            mechanism=values["Mechanism"],
            fix=values.get("Fix", ""),
            verdict=values.get("Verdict", ""),
            per_arm=_per_arm(values.get("Samples", "")),
            changes=changes,
            output=values.get("Output", ""),
            side_by_side=not values.get("Samples", "").endswith(REUSED),
        )


def _change(value: str) -> Change | None:
    """A trailer's `before -> after`, or None for n/a; ValueError when it does not read."""
    if value == NOT_APPLICABLE:
        return None
    before, arrow, after = value.partition(ARROW)
    if not arrow:
        raise ValueError(f"not before -> after: {value!r}")
    return Change(float(before), float(after))


def _per_arm(value: str) -> int:
    try:
        return int(value.partition(SAMPLES)[0])
    except ValueError:
        return 0
