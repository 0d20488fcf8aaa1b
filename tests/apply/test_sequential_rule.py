"""The sampling rule's error rates, by simulation through compare() and the rule itself (no Warp run).

benchmarks/sequential_rule.py prints the whole table (docs/apply.md quotes it); these are its promises.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sequential_rule.py"
spec = importlib.util.spec_from_file_location("sequential_rule", SCRIPT)
rule = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = rule  # its dataclasses look their module up there
spec.loader.exec_module(rule)


def test_a_fix_with_no_effect_is_rarely_kept_at_any_noise():
    for sigma in (0.03, 0.10, 0.25):
        assert rule.simulate(sigma, 0.0, trials=200, budget=5, seed=7)["kept"] <= 0.05, sigma


def test_an_effect_of_three_bands_or_more_is_mostly_decided_at_two_per_arm():
    row = rule.simulate(0.03, -0.15, trials=200, budget=5, seed=7)  # about 4 bands
    assert row["bands"] >= 3 and row["kept"] == 1.0 and row["within_2"] >= 0.9
    row = rule.simulate(0.10, -0.40, trials=200, budget=5, seed=7)  # about 3 bands
    assert row["bands"] >= 3 and row["kept"] >= 0.99 and row["within_2"] >= 0.8


def test_a_real_slowdown_is_never_kept():
    for sigma in (0.03, 0.10, 0.25):
        assert rule.simulate(sigma, 0.15, trials=200, budget=5, seed=7)["kept"] <= 0.01, sigma
