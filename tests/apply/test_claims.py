"""Claims match measurements: the noise band, renamed keys, timing that contradicts structure, compile
elapsed, totals, and the order apply tries fixes in. Pure functions over Reports built in code."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from codemods.specs import ARGS_TYPES
from warp_fix.apply import budget
from warp_fix.apply.arms import ArmsResult, ProbeClock, measure_interleaved
from warp_fix.apply.ledger import DROPPED, KEPT, Entry, Ledger, Numbers
from warp_fix.apply.loop import ApplySession
from warp_fix.apply.review import BranchLog, CommitRow
from warp_fix.apply.search import Search, changed_modules, search_order
from warp_fix.apply.trailers import Change, CommitTrailers
from warp_fix.compare import IMPROVED, INCONCLUSIVE, Comparison, TimingDelta, compare
from warp_fix.metrics import COLD_MODULE, COMPILE_ELAPSED, IDENTITIES, KERNEL, LTO_BUILDS
from warp_fix.model import SAFE, Fix, Plan
from warp_fix.probe.measure import compile_elapsed, timing_stats
from warp_fix.probe.stats import estimate_band, noise_band, stat
from warp_fix.report import (
    SCHEMA_VERSION,
    Launch,
    LoadCall,
    ModuleBuild,
    Output,
    Report,
    Sample,
    Stat,
    Summary,
    Trace,
)


def sample(
    cold: float,
    warm_builds: int = 0,
    warm_wall: float = 100.0,
    kernel_ms: float | None = None,
    cpu_ms: float | None = None,
    **structure,
) -> Sample:
    return Sample(
        index=0,
        ok=True,
        error=None,
        cold_wall_ms=cold + 500.0,
        warm_wall_ms=warm_wall,
        cold_module_ms=cold,
        warm_module_ms=0.0,
        native_compile_ms=cold / 2,
        cold_exit=0,
        warm_exit=0,
        stdout_sha256="sha",
        identities=structure.get("identities", 4),
        generated_source_bytes=structure.get("source", 40_000),
        lto_artifacts=0,
        warm_builds=warm_builds,
        kernel_key_uses=structure.get("key_uses", {}),
        kernel_ms=kernel_ms,
        cold_module_cpu_ms=cpu_ms,
    )


def report(
    *cold_ms: float,
    identities: int = 4,
    source: int = 40_000,
    kernel: str = "scale",
    key_uses: dict[str, int] | None = None,
    builds: list[tuple[str, str]] = (),
    warm_builds: int = 0,
    kernel_ms: Sequence[float] = (),
    cpu_ms: Sequence[float] = (),
) -> Report:
    """A report of one code state: one sample per cold time (and steady-state kernel time and the builds' CPU
    time, when given), a launch of `kernel`, the given builds."""
    kernel_times = list(kernel_ms) or [None] * len(cold_ms)
    cpu_times = list(cpu_ms) or [None] * len(cold_ms)
    samples = [
        sample(c, warm_builds, kernel_ms=k, cpu_ms=u, identities=identities, source=source, key_uses=key_uses or {})
        for c, k, u in zip(cold_ms, kernel_times, cpu_times, strict=True)
    ]
    summary = Summary(
        **timing_stats(samples),
        identities=identities,
        modules=1,
        generated_source_bytes=source,
        lto_artifacts=0,
        warm_builds=warm_builds,
        kernel_key_uses=key_uses or {},
    )
    launch = Launch(1, kernel, "scale", "app", [8], ["array[float32,1]"], "cpu", None, False, False, None)
    trace = Trace(
        builds=[
            ModuleBuild(i, 0.0, m, h, "cpu", None, "compiled", 1.0, 1.0, {}, [], [], None, None)
            for i, (m, h) in enumerate(builds)
        ],
        launches=[launch],
        launch_count=1,
        launch_digest="same",
    )
    return Report(
        SCHEMA_VERSION,
        ["python", "app.py"],
        "/p",
        None,
        "1.19.0",
        "cpu",
        samples,
        summary,
        trace,
        Trace(),
        [],
        Output("sha", "", 0, 0, True),
    )


# -- the same work ------------------------------------------------------------------------------------


def test_a_timing_win_between_runs_that_built_the_same_identities_is_noise():
    """A no-op edit: both states built the very same modules, so the cold runs did the same work."""
    same = [("sim", "a1"), ("io", "b2")]
    c = compare(report(4000.0, 4010.0, 3990.0, builds=same), report(3000.0, 3010.0, 2990.0, builds=same))
    assert c.timing[1].significant  # the band alone would call it a win
    assert c.verdict == INCONCLUSIVE
    assert "the same module identities, built the same way" in c.reasons[0]


def test_the_same_identities_loaded_in_parallel_are_other_work():
    """A preload builds the same modules, overlapped: compile elapsed may really drop."""
    same = [("sim", "a1"), ("io", "b2")]
    preloaded = report(3000.0, 3010.0, 2990.0, builds=same)
    preloaded.trace.load_calls = [LoadCall(0, "force_load", ["cuda:0"], ["sim", "io"], None, 2, None)]
    assert compare(report(4000.0, 4010.0, 3990.0, builds=same), preloaded).verdict == IMPROVED


# -- the noise band -------------------------------------------------------------------------------


def test_band_with_one_sample_per_arm_comes_from_the_baseline_runs():
    baseline = report(3993.0, 4131.0, 4472.0)
    c = compare(report(4131.0), report(4100.0), accepted_history=[baseline])
    cold = c.timing[0]
    assert cold.band >= (4472 - 3993) / 2  # not the 1% floor of a MAD of 0
    # the accepted arm's run joins the three earlier runs of its state (same module identities built)
    assert cold.band_how.startswith("from 4 runs of the accepted state so far and this candidate: spread 3993-4472 ms")
    assert not cold.significant and c.verdict == INCONCLUSIVE
    assert "spread 3993-4472 ms" in cold.line()


def test_band_is_never_tighter_than_half_the_spread_seen():
    assert noise_band(stat([900, 1000, 1000, 1000, 1300])) == 200  # MAD 0, spread 400
    # Two states at different medians scatter by the same ±4.8%: pooled relative to each median.
    band = estimate_band([[1000, 1100], [2000, 2200]], 2000.0, "the accepted state")
    assert round(band.value, 1) == round(2000 * 2 * 50 / 1050, 1)  # 2 x MAD of the pooled relative runs
    assert band.how.startswith("from 4 runs of the accepted state (2 code states): spread ±4.8% around each")
    assert "(widest 1000-1100 ms)" in band.how


def test_band_from_single_runs_says_it_is_only_the_floor():
    band = estimate_band([[1000.0], [1010.0]], 1000.0, "the two reports")
    assert band.value == 10.0
    assert band.how == "from 2 single runs of the two reports: no spread observed yet, the 1% floor"


def test_kernel_time_spreads_keep_their_digits():
    band = estimate_band([[7.11, 7.05, 7.13]], 7.11, "the accepted state")
    assert "spread 7.05-7.13 ms" in band.how


def test_compare_of_two_reports_takes_the_band_from_their_own_samples():
    c = compare(report(1000.0, 1100.0, 900.0), report(950.0, 960.0, 940.0))
    assert c.timing[0].band == 100.0
    assert c.timing[0].band_how == (
        "from 6 runs of the two reports (2 code states): spread ±10.0% around each one's median "
        "(widest 900-1100 ms); band = half the spread"
    )


# -- renamed kernel keys are not structure ------------------------------------------------------------

LONG, SHORT = "make_scale__locals__scale", "scale"


def test_source_shrink_that_renamed_keys_explain_is_not_structure():
    uses = 32
    shrink = (len(LONG) - len(SHORT)) * uses  # 640 bytes, 1.6% of the source: above the line-shift margin
    before = report(3466.0, kernel=LONG, key_uses={LONG: uses})
    after = report(3466.0, kernel=SHORT, source=40_000 - shrink, key_uses={SHORT: uses})
    c = compare(before, after)
    assert c.renames == [(LONG, SHORT)] and not c.structural_win
    assert c.verdict != IMPROVED
    assert any("-640 come from renamed kernel keys" in note for note in c.notes)


def test_source_shrink_beyond_the_renames_is_structure():
    before = report(3466.0, kernel=LONG, key_uses={LONG: 32})
    after = report(3400.0, kernel=SHORT, source=30_000, key_uses={SHORT: 32})
    assert compare(before, after).structural_win


def test_renames_without_counted_key_uses_prove_nothing_by_source_size():
    c = compare(report(3466.0, kernel=LONG), report(3466.0, kernel=SHORT, source=30_000))
    assert not c.structural_win
    assert any("uses not counted" in note for note in c.notes)


# -- timing that contradicts a structural claim -------------------------------------------------------


def test_structural_win_contradicted_by_timing_is_not_improved():
    baseline = report(3480.0, 3500.0)  # a machine that scatters ±10 ms
    c = compare(report(3492.0), report(4541.0, source=30_000), accepted_history=[baseline])
    assert c.structural_win and c.verdict == INCONCLUSIVE
    assert c.contradiction.startswith("timing contradicts the structural win: cold module work: 3492 -> 4541")
    assert budget.next_step(c, per_arm=1, budget=3).more  # more samples, up to --samples
    assert budget.next_step(c, per_arm=3, budget=3).more  # a structural fact takes five pairs to overturn
    step = budget.next_step(c, per_arm=5, budget=3)
    assert not step.more and "disagree" in step.why
    assert budget.effective_verdict(c, per_arm=3)[0] == INCONCLUSIVE
    assert not budget.decisive(c)


def test_a_slowdown_just_beyond_the_band_does_not_contradict_structure():
    """Backward off on a busy 2-core runner: +14% against a band of +-12% after three pairs is load, not a
    slower build of less code."""
    baseline = report(1950.0, 2050.0)  # the band: 100 ms
    c = compare(report(2000.0), report(2130.0, source=30_000), accepted_history=[baseline])
    assert c.timing[0].significant and c.timing[0].delta < 2 * c.timing[0].band
    assert c.verdict == IMPROVED and not c.contradiction and budget.decisive(c)
    assert any(note.startswith("timing slower by less than 2x the noise band") for note in c.notes)
    twice = compare(report(2000.0), report(2200.0, source=30_000), accepted_history=[baseline])
    assert twice.verdict == INCONCLUSIVE and twice.contradiction  # 2x the band: measured again, maybe dropped


def test_a_wall_clock_slowdown_the_builds_cpu_time_does_not_show_is_machine_load():
    """Two busy neighbours stretch the wall-clock module work; the compiling thread's CPU time stays put."""
    baseline = report(3480.0, 3500.0, cpu_ms=(1000.0, 1010.0))
    c = compare(
        report(3492.0, cpu_ms=(1005.0,)), report(4541.0, source=30_000, cpu_ms=(990.0,)), accepted_history=[baseline]
    )
    assert c.verdict == IMPROVED and not c.contradiction and budget.decisive(c)
    assert any(note.startswith("wall-clock slower but not the builds' CPU time") for note in c.notes)


def test_a_slowdown_the_cpu_time_shows_too_still_contradicts_structure():
    baseline = report(3480.0, 3500.0, cpu_ms=(1000.0, 1010.0))
    c = compare(
        report(3492.0, cpu_ms=(1005.0,)), report(4541.0, source=30_000, cpu_ms=(1400.0,)), accepted_history=[baseline]
    )
    assert c.verdict == INCONCLUSIVE and c.contradiction


def test_single_runs_with_no_spread_seen_cannot_contradict_structure():
    """Two one-sample reports show no noise at all: a slower run there is not evidence against fewer builds."""
    c = compare(report(3492.0), report(4541.0, source=30_000))
    assert c.verdict == IMPROVED and not c.contradiction
    assert any(note.startswith("timing disagrees from single runs") for note in c.notes)


def test_structural_win_with_worse_timing_inside_the_band_is_kept():
    baseline = report(3300.0, 3700.0)
    c = compare(report(3500.0), report(3600.0, source=30_000), accepted_history=[baseline])
    assert c.verdict == IMPROVED and not c.contradiction and budget.decisive(c)


def test_a_split_inside_the_band_says_its_structure_is_mixed_not_unchanged():
    """One module more and far less source (a split): timing decides, and the reason says why it was asked."""
    baseline = report(23_000.0, 37_000.0, identities=1)  # a loaded machine: ±23 %
    c = compare(
        report(29_137.0, identities=1), report(22_660.0, identities=2, source=30_000), accepted_history=[baseline]
    )
    assert c.structure_mixed and c.verdict == INCONCLUSIVE
    assert c.reasons == [f"structure mixed, so timing decides, and {c.timing[0].line()}"]


def split(kernel_after: list[float], cold_after: tuple[float, ...] = (22_660.0, 16_522.0, 23_765.0)) -> Comparison:
    """The f32 GEMM moved off MathDx on the H200: one module more, one LTO build less, start-up inside the band."""
    history = report(23_000.0, 37_000.0, identities=1, kernel_ms=[6.95, 6.97])
    before = report(29_137.0, 29_000.0, 29_300.0, identities=1, kernel_ms=[6.96, 6.95, 6.97])
    after = report(*cold_after, identities=2, source=30_000, kernel_ms=kernel_after)
    return compare(before, after, accepted_history=[history])


def test_kernels_faster_at_no_start_up_cost_win_a_fix_measured_both_ways():
    c = split(kernel_after=[5.72, 5.71, 5.73])
    assert c.verdict == INCONCLUSIVE  # start-up alone cannot tell
    won = budget.kernel_time_win(c, per_arm=3)
    assert won.startswith("kernels faster at no measured start-up cost: steady-state kernel time: 6.96 -> 5.72 ms")
    assert budget.kernel_time_win(c, per_arm=1) == ""  # a timing claim needs three per arm


def test_slower_kernels_or_a_slower_start_up_win_nothing():
    assert budget.kernel_time_win(split(kernel_after=[8.1, 8.0, 8.2]), per_arm=3) == ""
    slower_start = split(kernel_after=[5.72, 5.71, 5.73], cold_after=(61_000.0, 60_000.0, 62_000.0))
    assert slower_start.verdict != INCONCLUSIVE and budget.kernel_time_win(slower_start, per_arm=3) == ""


class ScriptedClock(ProbeClock):
    """Hands out prepared single-sample reports per arm instead of running a command."""

    def __init__(self, accepted: list[float], candidate: list[float]):
        super().__init__()
        self.script = {"accepted": list(accepted), "candidate": list(candidate)}

    def measure(self, command, cwd, samples, timeout, label, kernel_timing=False) -> Report:
        self.calls += 1
        cold = self.script[label].pop(0)
        return report(cold, source=40_000 if label == "accepted" else 30_000)


def interleave(clock: ProbeClock, samples: int, reuse: Report) -> ArmsResult:
    """apply's arms on a scripted clock under `--samples`, `reuse` standing for the accepted state's last
    measurement."""
    return measure_interleaved(
        [], Path("."), Path("."), lambda b, a: compare(b, a, accepted_history=[reuse]), samples, clock, reuse=reuse
    )


def test_contradiction_that_stands_after_more_samples_drops_the_fix():
    clock = ScriptedClock(
        accepted=[3490.0, 3500.0, 3510.0, 3495.0, 3505.0], candidate=[4541.0, 4500.0, 4520.0, 4510.0, 4530.0]
    )
    arms = interleave(clock, samples=3, reuse=report(3480.0, 3500.0))
    verdict, why = budget.effective_verdict(arms.comparison, arms.per_arm)
    assert arms.per_arm == 5 and verdict == INCONCLUSIVE and "disagree" in why
    assert "timing contradicts the structural win" in " ".join(arms.comparison.reasons)


def test_contradiction_that_more_samples_resolve_keeps_the_fix():
    clock = ScriptedClock(accepted=[3490.0, 3500.0], candidate=[4541.0, 3400.0, 3410.0])
    arms = interleave(clock, samples=3, reuse=report(3480.0, 3500.0))
    assert arms.per_arm == 2 and arms.comparison.verdict == IMPROVED


def test_under_samples_1_a_contradiction_is_still_measured_to_five_pairs_before_it_drops_the_win():
    """--samples 1 caps timing-only verdicts; it does not let a few slow runs overturn a structural fact."""
    clock = ScriptedClock(
        accepted=[3490.0, 3500.0, 3510.0, 3495.0, 3505.0], candidate=[4541.0, 4500.0, 4520.0, 4510.0, 4530.0]
    )
    arms = interleave(clock, samples=1, reuse=report(3480.0, 3500.0))
    verdict, why = budget.effective_verdict(arms.comparison, arms.per_arm)
    assert arms.per_arm == 5 and verdict == INCONCLUSIVE and "disagree after 5" in why


def test_two_slow_candidate_runs_then_three_fast_ones_keep_the_structural_win():
    """After three pairs the median still says slower (two of three candidate runs were slow), which under a
    three-pair rule dropped the fix; the five-pair median says faster, and the structural win stands."""
    clock = ScriptedClock(
        accepted=[3490.0, 3500.0, 3510.0, 3495.0, 3505.0], candidate=[4541.0, 4500.0, 3400.0, 3410.0, 3405.0]
    )
    arms = interleave(clock, samples=3, reuse=report(3480.0, 3500.0))
    assert arms.comparison.verdict == IMPROVED


def test_under_samples_1_one_slow_candidate_run_does_not_drop_a_structural_win():
    clock = ScriptedClock(accepted=[3490.0, 3500.0, 3505.0], candidate=[4541.0, 3400.0, 3410.0])
    arms = interleave(clock, samples=1, reuse=report(3480.0, 3500.0))
    assert arms.comparison.verdict == IMPROVED and arms.per_arm >= 2


class SameCodeClock(ScriptedClock):
    """Both arms build the same source: timing alone decides, so the reused measurement is replaced."""

    def measure(self, command, cwd, samples, timeout, label, kernel_timing=False) -> Report:
        self.calls += 1
        return report(self.script[label].pop(0))


def test_the_same_code_measured_far_apart_in_one_apply_says_the_machine_moved_with_both_figures():
    clock = SameCodeClock(accepted=[2500.0, 2510.0, 2505.0], candidate=[2490.0, 2500.0, 2495.0])
    arms = interleave(clock, samples=3, reuse=report(3480.0, 3500.0))
    drift = [n for n in arms.comparison.notes if "the machine's speed moved" in n]
    # judged on compile elapsed (the same identities were built), which the test's samples put 400 ms above
    assert len(drift) == 1 and "at 3890 ms of compile elapsed" in drift[0] and "at 2905 ms" in drift[0], drift


def test_the_same_code_measured_again_within_its_band_gets_no_drift_note():
    clock = SameCodeClock(accepted=[2500.0, 2510.0, 2505.0], candidate=[2490.0, 2500.0, 2495.0])
    arms = interleave(clock, samples=3, reuse=report(2500.0, 2506.0))
    assert not [n for n in arms.comparison.notes if "speed moved" in n], arms.comparison.notes


# -- compile elapsed --------------------------------------------------------------------------------


def test_compile_elapsed_is_na_when_the_warm_run_compiled():
    elapsed, why = compile_elapsed([sample(300.0, warm_builds=2, warm_wall=1665.0)])
    assert elapsed.values == [] and "warm run compiled too (2 builds)" in why
    c = compare(report(3000.0), report(2900.0, warm_builds=2))
    (line,) = [t.line() for t in c.timing if t.metric == "compile elapsed"]
    assert line.startswith("compile elapsed: n/a (after: the warm run compiled too") and "-" not in line.split("(")[0]
    assert c.judged_on == "cold module work"
    numbers = Numbers.of(c, per_arm=1, launch_count=1)
    assert "compile elapsed" not in numbers.summary() and numbers.timing_of(COMPILE_ELAPSED).pair() == "n/a"


def test_compile_elapsed_never_negative():
    elapsed, why = compile_elapsed([sample(10.0, warm_wall=900.0)])  # cold wall 510 < warm wall 900
    assert elapsed.values == [] and "not slower" in why
    ok, none = compile_elapsed([sample(300.0, warm_builds=1), sample(300.0)])
    assert ok.values == [700.0] and none == ""  # the sample whose warm run compiled is left out


# -- totals -----------------------------------------------------------------------------------------


def trailer_row(sha: str, **changes: tuple[float, float]) -> CommitRow:
    """A commit made by apply whose trailers record these changes, e.g. `identities=(8, 6)`."""
    by_field = {metric.field: metric for metric in (IDENTITIES, COLD_MODULE, KERNEL, LTO_BUILDS)}
    recorded = {by_field[name]: Change(*pair) for name, pair in changes.items()}
    return CommitRow(sha, "s", [], CommitTrailers("m", "F1", IMPROVED, 1, recorded))


def test_log_totals_are_apply_s_own_measurement_when_the_ledger_covers_the_commits():
    rows = [
        trailer_row("a1", cold_module_ms=(4131, 3900), identities=(8, 6)),
        trailer_row("b2", cold_module_ms=(3950, 3759), identities=(6, 5)),
    ]
    cold = TimingDelta(COLD_MODULE.label, Stat(4472.0, 9.0, [4472.0] * 3), Stat(4306.0, 9.0, [4306.0] * 3), -166, 40)
    total = Numbers(IMPROVED, [], {"identities": (8, 5)}, [cold], True, True, [], [], per_arm=3)
    log = BranchLog("wf", "base", "ledger", rows, total, ["a1", "b2"])
    assert log.totals() == {IDENTITIES: (8.0, 5.0), COLD_MODULE: (4472.0, 4306.0)}
    assert log.totals_source() == "measured by apply: branch head against its base, interleaved, n=3 per arm"
    stale = BranchLog("wf", "base", "ledger", rows, total, ["a1"])
    assert stale.totals()[COLD_MODULE] == (4131.0, 3709.0)
    assert "does not cover these commits" in stale.totals_source()


def test_log_totals_include_mathdx_lto_builds_and_kernel_time():
    """The MathDx and LTO fixes are kept on these numbers: the branch's totals show them too."""
    rows = [
        trailer_row("a1", lto_builds=(3, 2), kernel_ms=(1.84, 1.5), cold_module_ms=(9000, 7000)),
        trailer_row("b2", lto_builds=(2, 0), kernel_ms=(1.6, 1.2), cold_module_ms=(7100, 4000)),
    ]
    totals = BranchLog("wf", "base", "merge-base with main", rows).totals()
    assert totals[LTO_BUILDS] == (3, 0)  # a size: first before -> last after
    assert totals[KERNEL] == pytest.approx((1.84, 1.84 - 0.34 - 0.4))  # a timing: the per-commit deltas, summed
    assert totals[COLD_MODULE] == (9000, 9000 - 2000 - 3100)


# -- the search over fixes --------------------------------------------------------------------------


def fix(codemod: str, file: str = "sim.py", **args) -> Fix:
    """A fix of `codemod` in `file`; the arguments a test does not give are left empty."""
    args_type = ARGS_TYPES[codemod]
    empty = {f.name: [] for f in dataclasses.fields(args_type) if f.default is f.default_factory is dataclasses.MISSING}
    place = args_type(**{**empty, **({"file": file} if "file" in empty else {}), **args})
    return Fix("", codemod, codemod, "", SAFE, codemod, (place,), [file])


def test_search_order_splits_first_whatever_the_plan_order():
    plan = [
        fix("preload"),
        fix("register_overloads"),
        fix("module_options"),
        fix("merge_modules"),
        fix("hoist_options", "a.py"),
        fix("split_by_block_dim"),
        fix("hoist_options", "b.py"),
    ]
    order = [(f.codemod, f.files[0]) for f in search_order(plan)]
    assert order == [
        ("split_by_block_dim", "sim.py"),
        ("hoist_options", "a.py"),
        ("hoist_options", "b.py"),
        ("register_overloads", "sim.py"),
        ("merge_modules", "sim.py"),
        ("module_options", "sim.py"),
        ("preload", "sim.py"),
    ]


# Recorded from the block-size fixture: identities reached per set of kept fixes. Overloads on the unsplit
# module grow every block-size variant; on the split modules they remove the late generic rebuilds.
BLOCK_SIZES = {
    frozenset(): 8,
    frozenset({"register_overloads"}): 9,
    frozenset({"split_by_block_dim"}): 6,
    frozenset({"split_by_block_dim", "register_overloads"}): 5,
}
# Kernels added after the module loaded, and options set late: hoisting the options alone leaves the rebuild
# the late kernels cause; once the kernels are at module scope, it removes the last one.
LATE_KERNELS = {
    frozenset(): 6,
    frozenset({"hoist_options"}): 6,
    frozenset({"kernels_to_module_scope"}): 5,
    frozenset({"kernels_to_module_scope", "hoist_options"}): 4,
}


def state_report(identities: int, kept: frozenset[str]) -> Report:
    """Builds of the module `sim`, one per identity, with hashes named after the kept set."""
    tag = "-".join(sorted(kept)) or "base"
    return report(1000.0, identities=identities, builds=[("sim", f"{tag}{i}") for i in range(identities)])


def simulated_apply(plan_fixes: list[Fix], identities: dict[frozenset[str], int]) -> tuple[list[Entry], int]:
    """The real search loop (ApplySession._work_through) over recorded outcomes: a fix is kept when it
    lowers the identities of the accepted state; the planner proposes every fix not kept yet."""
    kept: set[str] = set()
    session = ApplySession.__new__(ApplySession)
    session.ledger = Ledger("wf", "base", None, [], "", "")
    session.workspace = SimpleNamespace(candidate=Path("."))
    session.command = []
    session.say = lambda _text: None
    session.accepted_report = state_report(identities[frozenset()], frozenset())

    def planner(_report, _root, _command) -> Plan:
        return Plan([], [dataclasses.replace(f) for f in plan_fixes if f.codemod not in kept])

    def consider(candidate: Fix, retry_of: str = "") -> Entry:
        better = identities[frozenset(kept | {candidate.codemod})] < identities[frozenset(kept)]
        entry = Entry(candidate.id, candidate.slug, "", SAFE, KEPT if better else DROPPED, "", list(candidate.files))
        entry.retry_of = retry_of
        if better:
            kept.add(candidate.codemod or "")
            session.accepted_report = state_report(identities[frozenset(kept)], frozenset(kept))
        return entry

    session.planner = planner
    session._consider = consider
    session._work_through(Plan([], [dataclasses.replace(f) for f in plan_fixes]))
    return session.ledger.entries, identities[frozenset(kept)]


def test_apply_reaches_the_fewest_identities_whatever_the_plan_order():
    overloads, split = fix("register_overloads", kernel="k"), fix("split_by_block_dim", groups=[])
    for plan in ([overloads, split], [split, overloads]):
        entries, reached = simulated_apply(plan, BLOCK_SIZES)
        assert reached == 5
        assert [(e.slug, e.outcome) for e in entries] == [("split_by_block_dim", KEPT), ("register_overloads", KEPT)]


def test_dropped_fix_is_retried_once_after_a_kept_fix_changed_its_module():
    hoist, move = fix("hoist_options", function="setup"), fix("kernels_to_module_scope", factory="make")
    entries, reached = simulated_apply([hoist, move], LATE_KERNELS)
    assert reached == 4
    assert [(e.fix_id, e.slug, e.outcome, e.retry_of) for e in entries] == [
        ("F1", "hoist_options", DROPPED, ""),
        ("F2", "kernels_to_module_scope", KEPT, ""),
        ("F3", "hoist_options", KEPT, "F1"),
    ]


def test_a_dropped_fix_is_not_retried_when_the_kept_fix_left_its_module_alone():
    hoist, move = fix("hoist_options", "other.py", function="setup"), fix("kernels_to_module_scope", factory="make")
    entries, _ = simulated_apply([hoist, move], LATE_KERNELS)  # the kept fix changes `sim`, not `other`
    assert [(e.slug, e.outcome) for e in entries] == [("hoist_options", DROPPED), ("kernels_to_module_scope", KEPT)]


def test_a_fix_is_retried_at_most_once():
    hoist = dataclasses.replace(fix("hoist_options", "other.py", function="setup"), id="F1")
    search = Search.of([hoist])
    search.record(search.next(), dropped=True)
    assert search.after_kept([hoist], {"other"}, []) == ["F1"]  # the kept fix changed module `other`
    again = search.next()
    assert again is hoist and search.retry_of(again) == "F1"
    search.record(again, dropped=True)
    assert search.after_kept([hoist], {"other"}, []) == [] and search.next() is None


def test_changed_modules_are_those_built_with_other_identities():
    before = report(1.0, builds=[("a", "1"), ("b", "2")])
    after = report(1.0, builds=[("a", "1"), ("b", "3"), ("c", "4")])
    assert changed_modules(before, after) == {"b", "c"}


def test_fixes_keep_the_plan_ids_in_try_order():
    overloads = dataclasses.replace(fix("register_overloads", kernel="k"), id="F1")
    split = dataclasses.replace(fix("split_by_block_dim", groups=[]), id="F2")
    entries, _ = simulated_apply([overloads, split], BLOCK_SIZES)
    assert [(e.fix_id, e.slug) for e in entries] == [("F2", "split_by_block_dim"), ("F1", "register_overloads")]


def test_the_stop_reason_says_what_timing_showed_beside_structure():
    """A structural verdict never says timing 'confirms' a slower run: it names what timing showed."""
    baseline = report(3300.0, 3700.0)
    slower = compare(report(3500.0), report(3600.0, source=30_000), accepted_history=[baseline])
    faster = compare(report(3500.0), report(3400.0, source=30_000), accepted_history=[baseline])
    why = budget.next_step(slower, per_arm=1, budget=3).why
    assert why.endswith("cold module work is slower, inside its noise band")
    assert budget.next_step(faster, per_arm=1, budget=3).why.endswith("cold module work agrees")


def test_a_warm_only_win_is_judged_on_the_warm_run_not_on_the_unchanged_cold_run():
    """Keeping the cache removes the second start's build; the cold run is the same by design, so a slower
    cold sample (the helper_cache_dir case: 1680 -> 1920 ms) does not contradict it: warm module work does."""
    before, after = report(1680.0, warm_builds=1), report(1920.0, warm_builds=0)
    before.summary.warm_module_ms = Stat(2400.0, 0.0, [2400.0])
    after.summary.warm_module_ms = Stat(0.0, 0.0, [0.0])
    c = compare(before, after, accepted_history=[report(1680.0, 1819.0, warm_builds=1)])
    assert c.verdict == IMPROVED and c.judged_on == "warm module work" and not c.contradiction
