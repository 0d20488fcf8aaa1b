"""Disagreements the generator found and that are not fixed yet: (fixture, transformation) -> why.

Each one is a real difference of verdict on a variant that does what its fixture does; the reason says which
rule misses the shape. tests/variants/test_invariance.py runs each as a strict xfail, so the day the rule is fixed
the test says to remove the entry; benchmarks/invariance.py marks them in its list (they still count against the
rate).
"""

from __future__ import annotations

KNOWN_DISAGREEMENTS: dict[tuple[str, str], str] = {
    ("calibration_script", "launch-through-helper"): (
        "unused-backward: scripts/calibrate.py launches its loss kernel under the tape through its own "
        "`_launch(*args, **kwargs)` helper; the repository's differentiation walk (warp_fix/scan/differentiation.py) "
        "counts the helper's `wp.launch(*args, **kwargs)` as a launch of an unknown kernel, so every module may be "
        "differentiated and beams.report's per-module fix (safe) folds into the entry-point one (consent)"
    ),
}
