"""Robust statistics for samples: median, MAD and the noise band of WARP_FACTS.md."""

from __future__ import annotations

from collections.abc import Sequence

from warp_fix.report import Stat


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def mad(values: Sequence[float]) -> float:
    """Median absolute deviation (unscaled): robust to the odd slow sample."""
    if not values:
        return 0.0
    centre = median(values)
    return median([abs(v - centre) for v in values])


def stat(values: Sequence[float]) -> Stat:
    rounded = [round(v, 3) for v in values]
    return Stat(median=round(median(rounded), 3), mad=round(mad(rounded), 3), values=rounded)


def noise_band(baseline: Stat) -> float:
    """A difference smaller than this is inconclusive: max(1% of the median, 2 x MAD)."""
    return max(0.01 * baseline.median, 2.0 * baseline.mad)
