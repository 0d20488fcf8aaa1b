"""plan_of(fixture): the plan of a fixture app's real run, measured and planned once per test session."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from warp_fix.plan import make_plan


@pytest.fixture(scope="session")
def plan_of(measured):
    plans = {}

    def get(name: str):
        if name not in plans:
            plans[name] = make_plan(measured(name), FIXTURES / name)
        return plans[name]

    return get
