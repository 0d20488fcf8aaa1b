"""A commit body says a repeated fact once: six kernels whose option moved alike, many output lines alike."""

from __future__ import annotations

from warp_fix.apply.commit import _measurements
from warp_fix.apply.ledger import Numbers
from warp_fix.compare import OptionDrift, _grouped


def test_kernels_whose_option_moved_alike_are_one_group() -> None:
    drift = [OptionDrift(k, "enable_backward", True, False, True) for k in ("kick", "drift", "apply_bounds")]
    drift.append(OptionDrift("shift", "fast_math", False, True, False))
    assert _grouped(drift) == {
        ("enable_backward", "True", "False", True): ["kick", "drift", "apply_bounds"],
        ("fast_math", "False", "True", False): ["shift"],
    }


def test_past_two_output_lines_the_rest_are_counted() -> None:
    rules = [f"line {i} 'step took {i}.0 ms': ignored (varied 1 .. 9 between baseline runs)" for i in range(1, 5)]
    numbers = Numbers(
        verdict="IMPROVED", reasons=[], structure={}, timing=[], workload_same=True, output_same=True, renames=[],
        notes=[], output_detail="within learned tolerance", output_rules=rules, per_arm=1, launch_count=3,
    )
    body = _measurements(numbers)
    assert "line 1 'step took 1.0 ms'" in body and "line 2 " in body and "line 3 " not in body
    assert "- output: 2 more lines like these (the ledger lists each)" in body
