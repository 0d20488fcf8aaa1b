"""A kernel named from Python's salted hash(): the probe's two processes build its module under two hashes."""

from __future__ import annotations

import os

from tests.conftest import FIXTURES, PYTHON
from warp_fix.model import ADVISORY
from warp_fix.probe import measure

APP = "salted_kernel_names"


def test_a_module_hashed_differently_in_two_processes_is_found_with_its_line(plan_of):
    plan = plan_of(APP)
    finding = next(f for f in plan.findings if f.slug == "process-hash")
    assert finding.status == "fired", finding.reason
    (drift,) = finding.facts.drifts
    assert drift.module == "shading.curves" and drift.cold_hash != drift.warm_hash
    assert drift.generated_line > 0 and drift.cold_text != drift.warm_text
    assert drift.kernel.startswith("curve_") and drift.kernel in drift.cold_text
    assert drift.site is not None and drift.site.file.endswith("shading/curves.py")
    (fix,) = [f for f in plan.fixes if f.slug == "process-hash"]
    assert fix.safety == ADVISORY and fix.codemod is None
    assert fix.lines == [f"shading/curves.py:{drift.site.line}"]


def test_a_pinned_hash_seed_is_the_production_setting_and_drifts_nothing():
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    report = measure([PYTHON, "-m", "shading"], FIXTURES / APP, samples=1, env=env)
    assert report.hash_drifts == []
    assert report.summary.warm_builds == 0
