"""Robust statistics for samples: median, MAD and the noise band of docs/compile-model.md (measurement rules)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from warp_fix.report import Stat
from warp_fix.wording import counted

BAND_FLOOR = 0.01  # a difference under 1% of the median is never called significant


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
    """A difference smaller than this is inconclusive: max(1% of the median, 2 x MAD, half the spread).

    Half the spread (max - min) / 2 keeps the band from being tighter than what the samples themselves
    showed, which matters with two or three samples, where the MAD can be far below the real scatter.
    """
    spread = (max(baseline.values) - min(baseline.values)) / 2.0 if baseline.values else 0.0
    return max(BAND_FLOOR * baseline.median, 2.0 * baseline.mad, spread)


@dataclass(frozen=True)
class Band:
    """A noise band and how it was estimated, so a verdict can say what its "±" rests on."""

    value: float
    how: str


def estimate_band(groups: Sequence[Sequence[float]], centre: float, source: str) -> Band:
    """The noise band around `centre` from every run observed, grouped by the code state they measured.

    Each group holds repeated runs of one state; its runs are taken relative to the group's own median, so
    runs of earlier states (other code, other medians) still tell how much this machine scatters. The band
    is max(1% of `centre`, 2 x the pooled relative MAD, half the pooled relative spread) x `centre`: never
    tighter than the spread seen. `source` names what the runs were ("runs of the accepted state").
    """
    relative: list[float] = []
    ranges: list[tuple[float, float]] = []
    for group in groups:
        values = list(group)
        centre_g = median(values)
        if len(values) < 2 or centre_g <= 0:
            continue
        relative += [v / centre_g - 1.0 for v in values]
        ranges.append((min(values), max(values)))
    runs = sum(len(g) for g in groups)
    if not relative:
        value = BAND_FLOOR * centre
        return Band(value, f"from {counted(runs, 'single run')} of {source}: no spread observed yet, the 1% floor")
    half_spread = (max(relative) - min(relative)) / 2.0
    fraction = max(BAND_FLOOR, 2.0 * mad(relative), half_spread)
    low, high = max(ranges, key=lambda r: r[1] / r[0] if r[0] > 0 else 0.0)
    if len(ranges) == 1:
        spread_text = f"spread {_ms(low)}-{_ms(high)} ms"
    else:
        spread_text = f"spread ±{100.0 * half_spread:.1f}% around each one's median (widest {_ms(low)}-{_ms(high)} ms)"
    rule = "the 1% floor" if fraction == BAND_FLOOR else ("half the spread" if fraction == half_spread else "2 x MAD")
    states = f" ({len(ranges)} code states)" if len(ranges) > 1 else ""
    return Band(fraction * centre, f"from {len(relative)} runs of {source}{states}: {spread_text}; band = {rule}")


def _ms(value: float) -> str:
    """Whole milliseconds for build times, three significant digits for kernel times (7.11, not 7)."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"
