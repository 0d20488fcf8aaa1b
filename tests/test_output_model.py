"""The output model on recorded outputs: exact, tolerant and ignored numbers, and text that must not move."""

from __future__ import annotations

import pytest

from warp_fix.apply import ApplyError, build_request
from warp_fix.output_model import OutputModelError, check, learn
from warp_fix.probe.output import OutputDigest, merge_profiles
from warp_fix.report import Output

# Four baseline runs (two cold+warm pairs): an exact count, a float32 sum moving in its last digits, a timing.
BASELINE = [
    b"elements 100000\nsum 5234.1294\nstep took 3512.20 ms\n",
    b"elements 100000\nsum 5234.1302\nstep took 1.83 ms\n",
    b"elements 100000\nsum 5234.1289\nstep took 3498.71 ms\n",
    b"elements 100000\nsum 5234.1297\nstep took 1.79 ms\n",
]


def output_of(*runs: bytes) -> Output:
    digests = []
    for run in runs:
        digest = OutputDigest()
        digest.feed(run)
        digest.close()
        digests.append(digest)
    profile = merge_profiles([d.profile() for d in digests], [d.head for d in digests])
    return Output(
        digests[0].sha256, digests[0].head, digests[0].bytes, 0, len({d.sha256 for d in digests}) == 1, profile
    )


def candidate(elements: str = "100000", total: str = "5234.1299", took: str = "2.10", word: str = "sum") -> Output:
    text = f"elements {elements}\n{word} {total}\nstep took {took} ms\n".encode()
    return output_of(text, text.replace(took.encode(), b"1.95"))


@pytest.fixture(scope="module")
def model():
    return learn(output_of(*BASELINE))


def test_the_model_sorts_numbers_into_exact_tolerant_and_ignored(model):
    assert (model.exact, len(model.tolerant), len(model.ignored), model.runs) == (1, 1, 1, 4)
    sum_rule = model.tolerant[0]
    assert sum_rule.line == 2 and sum_rule.value == 5234.1294
    assert sum_rule.tolerance == pytest.approx(10 * 0.0008, rel=1e-6)
    assert model.ignored[0].text == "step took 3512.20 ms"
    assert model.record().summary == (
        "3 numbers over 4 baseline runs: 1 exact, 1 tolerant (learned), 1 ignored (timings)"
    )


def test_identical_output_of_a_deterministic_program_is_identical():
    text = b"elements 100000\nsum 5234.1294\n"
    verdict = check(learn(output_of(text, text)), output_of(text, text))
    assert (verdict.same, verdict.detail) == (True, "identical")


def test_numbers_inside_their_tolerance_and_any_timing_pass(model):
    verdict = check(model, candidate(total="5234.1330", took="987654.32"))
    assert verdict.same is True
    assert verdict.detail == (
        "within learned tolerance (1 numbers tolerant, 1 timings ignored: e.g. line 'step took 3512.20 ms')"
    )
    assert any("ignored" in rule for rule in verdict.rules)


def test_a_number_beyond_its_tolerance_is_named_with_its_line(model):
    verdict = check(model, candidate(total="5234.2294"))
    assert verdict.same is False
    assert verdict.detail.startswith(
        "printed number changed beyond its tolerance on line 2: 'sum 5234.1294' -> 'sum 5234.2294'"
    )


def test_an_exact_number_must_stay_identical(model):
    verdict = check(model, candidate(elements="100001"))
    assert verdict.same is False and "exact in every baseline run" in verdict.detail


def test_changed_text_is_named_by_its_first_line(model):
    verdict = check(model, candidate(word="total"))
    assert verdict.same is False
    assert verdict.detail == "output text changed: line 2: 'sum 5234.1294' vs 'total 5234.1299'"


def test_a_candidate_whose_own_text_varies_is_refused(model):
    varying = output_of(b"elements 100000\nsum 5234.1294\nstep took 2 ms\n", b"elements 100000\nsum 5234.1294\n")
    assert check(model, varying).same is False


def test_a_baseline_whose_text_varies_teaches_nothing():
    with pytest.raises(OutputModelError, match="line 1: 'seed alpha' vs 'seed beta'"):
        learn(output_of(b"seed alpha\n", b"seed beta\n"))


def test_an_override_holds_every_number_to_it_and_still_ignores_timings():
    model = learn(output_of(*BASELINE), override=1e-4)
    assert (model.exact, len(model.tolerant), len(model.ignored)) == (1, 1, 1)
    assert check(model, candidate(elements="100005", took="5.0")).same is True  # 5e-5 relative
    assert check(model, candidate(elements="100050")).same is False  # 5e-4 relative


@pytest.mark.parametrize("value", [-1e-6, 1.0, float("nan")])
def test_an_output_tolerance_outside_0_to_1_is_refused(tmp_path, value):
    with pytest.raises(ApplyError, match="--output-tolerance is a relative tolerance in \\[0, 1\\)"):
        build_request(command=["python", "app.py"], cwd=tmp_path, branch="wf/x", output_tolerance=value)


def test_a_progress_line_redrawn_with_carriage_returns_is_one_entry_shown_as_a_terminal_leaves_it():
    runs = [
        f"\r[###---] 1/2  step_time={a} ms  eta={b}s\r[######] 2/2  step_time={c} ms  eta=0s\nsum 12\n".encode()
        for a, b, c in (("14151.5", "28", "211.1"), ("555.6", "1", "231.8"), ("13990.2", "27", "201.1"),
                        ("560.1", "1", "225.0"))
    ]
    model = learn(output_of(*runs))
    (entry,) = model.describe()
    assert entry == (
        "line 1 '[######] 2/2  step_time=211.1 ms  eta=0s': 3 numbers ignored "
        "(varied 555.6 .. 14151.5, 1 .. 28, 201.1 .. 231.8 between baseline runs)"
    )
