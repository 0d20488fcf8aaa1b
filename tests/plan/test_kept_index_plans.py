"""Same report, same plan: planning from the kept source index (cold, then reused) gives the plan a fresh scan gives."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from warp_fix.plan import make_plan
from warp_fix.scan import KeptIndex, scan_repository

FIXTURE_NAMES = ["composite", "late_module_options", "unique_on_stable", "calibration_script", "factory_in_loop"]


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_the_kept_index_gives_the_plan_a_fresh_scan_gives(measured, tmp_path, name):
    report = measured(name)
    root = FIXTURES / name
    fresh = make_plan(report, root, index=scan_repository(root)).to_json()
    store = tmp_path / "source-index.json"
    written = KeptIndex.at(store)
    assert make_plan(report, root, index=scan_repository(root, kept=written)).to_json() == fresh
    reused = KeptIndex.at(store)
    assert make_plan(report, root, index=scan_repository(root, kept=reused)).to_json() == fresh
    assert written.read > 0 and reused.read == 0 and reused.reused == written.read
