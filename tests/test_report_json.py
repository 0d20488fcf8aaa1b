"""A saved report stays proportionate: launches that repeat are one record with their positions, and files
written before that (schema 1, one record per launch) still load to the same launches."""

from __future__ import annotations

import dataclasses
import json

from tests.test_check import make_report
from warp_fix.report import Launch, Site, load_report

SITE = Site("sim/step.py", 12, "step", ("sim/step.py:30:run", "sim/__main__.py:5:main"))


def looped_launches(steps: int) -> list[Launch]:
    """A time loop: four kernels launched in turn, `steps` times."""
    kernels = ("integrate", "collide", "solve", "update")
    return [
        Launch(4 * step + index + 1, name, name, "sim.step", [1024], ["array[vec3f,1]", "float32"], "cpu", None,
               False, False, SITE)
        for step in range(steps)
        for index, name in enumerate(kernels)
    ]


def test_repeated_launches_are_saved_once_each_and_load_in_run_order(tmp_path):
    report = make_report()
    report.trace.launches = looped_launches(500)
    report.warm_trace.launches = looped_launches(500)
    report.save(tmp_path / "r.json")

    data = json.loads((tmp_path / "r.json").read_text())
    assert len(data["launches"]) == 4 and len(data["trace"]["launches"]) == 4
    assert data["launches"][0]["seq"][:3] == [1, 5, 9]
    assert (tmp_path / "r.json").stat().st_size < 60_000  # one record per launch took ~1.3 MB
    again = load_report(tmp_path / "r.json")
    assert again.trace.launches == report.trace.launches
    assert again.warm_trace.launches == report.warm_trace.launches


def test_a_schema_1_report_still_loads(tmp_path):
    report = make_report()
    report.trace.launches = looped_launches(3)
    data = dataclasses.asdict(report)
    data["schema_version"] = 1
    data["launches"] = data["trace"]["launches"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert load_report(tmp_path / "old.json").trace.launches == report.trace.launches
