"""The probe: run the user's command cold and warm in private caches and record what Warp built."""

from warp_fix.probe.measure import BaselineFailed, SampleStarted, measure
from warp_fix.probe.runner import ProbeError

__all__ = ["BaselineFailed", "ProbeError", "SampleStarted", "measure"]
