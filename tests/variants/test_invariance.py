"""Same program, same verdict, on real runs: a fixed, seeded sample of (fixture, transformation) pairs.

Each pair measures and plans the fixture and its variant (one cold and one warm run each) and requires the same
structural verdict, and the same output and launches (the transformation preserved behaviour). The sample is
small so CI stays in its budget; benchmarks/invariance.py runs every pair (docs/variants.md).
"""

from __future__ import annotations

import random

import pytest

from tests.variants.catalogue import BY_NAME, TRANSFORMATIONS
from tests.variants.known import FIXED, KNOWN_DISAGREEMENTS, RULE_OF, one_per_rule
from tests.variants.runner import FIXTURES, Measured, compare, cpu_fixtures, measure_and_plan
from tests.variants.transform import Fixture, Variant

SEED = 44
SAMPLE_SIZE = 3


def seeded_sample() -> list[tuple[str, tuple[str, ...]]]:
    """SAMPLE_SIZE fixtures, each with the transformations in a seeded order: the test takes the first that
    applies (deciding that reads the fixture, which collection should not do for every test run)."""
    rng = random.Random(SEED)
    names = [t.NAME for t in TRANSFORMATIONS]
    return [(app, tuple(rng.sample(names, len(names)))) for app in sorted(rng.sample(cpu_fixtures(), SAMPLE_SIZE))]


def first_applicable(fixture: Fixture, order: tuple[str, ...]) -> str:
    return next(name for name in order if isinstance(BY_NAME[name].apply(fixture), Variant))


@pytest.fixture(scope="module")
def original_of(tmp_path_factory):
    measured: dict[str, Measured] = {}

    def get(app: str) -> Measured:
        if app not in measured:
            fixture = Fixture.load(FIXTURES / app)
            measured[app] = measure_and_plan(fixture, None, tmp_path_factory.mktemp(app) / "original")
        return measured[app]

    return get


@pytest.mark.slow
@pytest.mark.parametrize(("app", "order"), seeded_sample(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_variant_gets_the_fixtures_verdict(app, order, original_of, tmp_path):
    fixture = Fixture.load(FIXTURES / app)
    transformation = BY_NAME[first_applicable(fixture, order)]
    outcome = compare(original_of(app), fixture, transformation, tmp_path / "variant")
    assert not outcome.behaviour_changed, outcome.behaviour_changed
    assert outcome.differences == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("app", "transformation"),
    [
        *(pytest.param(*pair, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DISAGREEMENTS[pair]))
          for pair in one_per_rule()),
        *FIXED,
    ],
)
def test_a_disagreement_found_once_is_gone_and_a_known_one_still_there(app, transformation, original_of, tmp_path):
    """Pairs in FIXED disagreed until their rule was fixed; pairs still known are strict xfails."""
    outcome = compare(original_of(app), Fixture.load(FIXTURES / app), BY_NAME[transformation], tmp_path / "variant")
    assert not outcome.behaviour_changed, outcome.behaviour_changed
    assert outcome.differences == []


def test_every_known_disagreement_names_the_rule_that_misses_it():
    assert set(RULE_OF) == set(KNOWN_DISAGREEMENTS)
