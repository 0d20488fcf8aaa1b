"""The sampling rule's error rates and cost, by simulation of timing-decided fixes (no Warp run).

    python benchmarks/sequential_rule.py [--trials 400] [--budget 5] [--seed 1]

Each trial is one fix whose structure does not change, so timing alone decides: the accepted state and the
candidate are sampled A, B, A, B... with multiplicative log-normal noise of spread `sigma` (the spreads
recorded on our machines: 3% quiet, 10% shared, 25% loaded), the candidate's true effect a fraction of the
median, and apply's baseline (2 runs) reused as the first side without the fix and kept in the noise band's
history. The arms are apply's own `measure_interleaved` with a simulated probe: every pair goes through
`compare()` and the rule in `warp_fix/apply/budget.py`, exactly as apply runs them. Printed per (sigma,
effect): how often the fix is kept (IMPROVED) or called a regression, the mean pairs per arm spent, and how
often it was decided within 2.
An effect of 0 measures the false-verdict rate; effects of one or more bands measure the power ("x band": the
effect over the median noise band the rule saw at 2 pairs per arm).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from warp_fix.apply.arms import ProbeClock, measure_interleaved
from warp_fix.apply.budget import BASELINE_SAMPLES, effective_verdict
from warp_fix.compare import IMPROVED, REGRESSED, compare
from warp_fix.probe.measure import timing_stats
from warp_fix.report import SCHEMA_VERSION, Launch, Output, Report, Sample, Summary, Trace

BASE_MS = 2000.0
SIGMAS = (0.03, 0.10, 0.25)
EFFECTS = (0.0, -0.05, -0.15, -0.40, 0.15)  # relative change of the candidate's median (negative: faster)


def synthetic_report(cold_ms: list[float]) -> Report:
    """One code state measured once per value: cold module work only, the same single launch every time."""
    samples = [
        Sample(i, True, None, c + 500.0, 600.0, c, 0.0, c / 2, 0, 0, "sha", 4, 40_000, 0, 0)
        for i, c in enumerate(cold_ms)
    ]
    summary = Summary(**timing_stats(samples), identities=4, modules=1, generated_source_bytes=40_000,
                      lto_artifacts=0, warm_builds=0)
    launch = Launch(1, "scale", "scale", "app", [8], ["array[float32,1]"], "cpu", None, False, False, None)
    trace = Trace(launches=[launch], launch_count=1, launch_digest="same")
    return Report(SCHEMA_VERSION, ["python", "app.py"], "/p", None, "1.19.0", "cpu", samples, summary, trace,
                  Trace(), [], Output("sha", "", 0, 0, True))


@dataclass
class Outcome:
    verdict: str
    per_arm: int
    band_at_2: float | None  # the noise band the rule saw at 2 pairs per arm (ms), if it got there


class SimulatedClock(ProbeClock):
    """apply's probe, simulated: each measurement of the code without the fix or with it is one cold run drawn
    with the arm's true scale and the noise."""

    def __init__(self, run, effect: float):
        super().__init__()
        self.run, self.effect = run, effect

    def measure(self, command, cwd, samples, timeout, label, kernel_timing=False) -> Report:
        self.calls += 1
        return synthetic_report([self.run(1.0 + (self.effect if label == "candidate" else 0.0))])


def one_fix(rng: random.Random, sigma: float, effect: float, budget: int) -> Outcome:
    """apply's arms for one timing-decided fix (`measure_interleaved`, as apply calls it): the baseline reused as
    the first side without the fix (and replaced by a fresh run once timing decides), then interleaved pairs."""

    def run(scale: float) -> float:
        return BASE_MS * scale * rng.lognormvariate(0.0, sigma)

    baseline = synthetic_report([run(1.0) for _ in range(BASELINE_SAMPLES)])
    bands: list[float] = []

    def judge(before: Report, after: Report):
        comparison = compare(before, after, accepted_history=[baseline])
        if len(after.samples) == 2:
            bands.append(next(t.band for t in comparison.timing if t.metric == comparison.judged_on))
        return comparison

    arms = measure_interleaved([], Path("."), Path("."), judge, budget, SimulatedClock(run, effect), reuse=baseline)
    verdict = effective_verdict(arms.comparison, arms.per_arm)[0]
    return Outcome(verdict, arms.per_arm, bands[-1] if bands else None)


def simulate(sigma: float, effect: float, trials: int, budget: int, seed: int) -> dict[str, float]:
    rng = random.Random(f"{seed}-{sigma}-{effect}")
    outcomes = [one_fix(rng, sigma, effect, budget) for _ in range(trials)]
    bands = [o.band_at_2 for o in outcomes if o.band_at_2]
    return {
        "bands": abs(effect) * BASE_MS / statistics.median(bands) if bands else float("nan"),
        "kept": sum(o.verdict == IMPROVED for o in outcomes) / trials,
        "regressed": sum(o.verdict == REGRESSED for o in outcomes) / trials,
        "per_arm": statistics.mean(o.per_arm for o in outcomes),
        "within_2": sum(o.per_arm <= 2 for o in outcomes) / trials,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--budget", type=int, default=5, help="--samples: the most pairs per arm")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.trials} simulated fixes per row, --samples {args.budget}, baseline of {BASELINE_SAMPLES} runs")
    heads = ("noise", "effect", "x band", "kept", "regressed", "pairs/arm", "decided by 2")
    print(" ".join(f"{head:>{width}}" for head, width in zip(heads, (6, 7, 7, 6, 10, 10, 13))))
    for sigma in SIGMAS:
        for effect in EFFECTS:
            r = simulate(sigma, effect, args.trials, args.budget, args.seed)
            print(
                f"{sigma:6.0%} {effect:+7.0%} {r['bands']:7.1f} {r['kept']:6.1%} {r['regressed']:10.1%} "
                f"{r['per_arm']:10.2f} {r['within_2']:13.1%}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
