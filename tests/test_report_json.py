"""A saved report stays proportionate: launches that repeat are one record with their positions, and files
written before that (schema 1, one record per launch) still load to the same launches."""

from __future__ import annotations

import dataclasses
import json

from tests.test_check import make_report
from warp_fix.report import Launch, RebuildReason, Site, load_report

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


def test_rebuild_reasons_of_older_reports_get_their_typed_fields_from_the_detail():
    """Reports written before RebuildReason had typed fields still tell mechanisms the kernel, setter and symbol."""
    old = [
        ("kernel-added", "kernel 'damp' added after the previous build (defined inside a function)", "kernel", "damp"),
        ("generic-instance", "new generic instance scale[a1f8_f8] by a launch", "kernel", "scale"),
        ("option", "option fast_math: False -> True (set by wp.config)", "set_by", "config"),
        ("option", "option max_unroll: 16 -> 4 (set by wp.set_module_options)", "set_by", "set_module_options"),
        ("option", "option enable_backward: False -> True (Warp's default)", "set_by", "default"),
        ("cache-cleared", "MathDx LTO dot_16 compiled again (9 ms): clear_lto_cache() ran", "lto_symbol", "dot_16"),
        ("cache-cleared", "same identity compiled again: clear_kernel_cache() emptied the cache", "lto_symbol", ""),
    ]
    for kind, detail, name, value in old:
        reason = RebuildReason.from_json({"kind": kind, "detail": detail, "site": None})
        assert getattr(reason, name) == value, detail
    written = dataclasses.asdict(RebuildReason("option", "option x: 1 -> 2 (set by wp.config)", None, set_by=""))
    assert RebuildReason.from_json(written).set_by == "", "a report with the fields is read as written"


def test_a_sites_stack_reads_as_sites():
    site = Site("a.py", 3, "f", ("pkg/b.py:12:make", "c.py:40:<module>"))
    assert site.callers() == (Site("pkg/b.py", 12, "make"), Site("c.py", 40, "<module>"))
