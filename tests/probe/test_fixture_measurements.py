"""`measure` and `compare` on the fixture apps: the builds each mechanism causes, and why."""

from __future__ import annotations

from warp_fix.compare import IMPROVED, INCONCLUSIVE, INVALID, compare


def reasons(report):
    return [(reason.kind, reason.site.file if reason.site else None, reason.site.line if reason.site else None)
            for rebuild in report.rebuilds for reason in rebuild.reasons]


def test_late_options_rebuild_is_explained_with_the_line_that_set_them(measured):
    report = measured("late_module_options")
    builds = [b for b in report.trace.builds if b.module == "cloth.solver"]
    assert len(builds) == 2 and all(b.block_dim == 1 and b.native_ms > 0 for b in builds)
    assert ("option", "cloth/solver.py", 91) in reasons(report)
    assert "enable_backward: True -> False" in report.rebuilds[0].line()


def test_kernel_after_load_names_the_late_kernel(measured):
    report = measured("kernel_after_load")
    kinds = reasons(report)
    assert any(kind == "kernel-added" and file == "particles/sim.py" for kind, file, _ in kinds)


def test_late_overloads_name_the_new_instances(measured):
    report = measured("late_overloads")
    assert sum(kind == "generic-instance" for kind, _, _ in reasons(report)) >= 2


def test_cache_clear_shows_as_warm_builds(measured):
    report = measured("cache_discarded")
    assert report.summary.warm_builds >= 1
    assert [op.kind for op in report.trace.cache_ops] == ["clear_kernel_cache"]


def test_config_after_import_is_recorded_with_the_modules_it_missed(measured):
    report = measured("config_after_import")
    (change,) = [c for c in report.trace.option_changes if c.kind == "config"]
    assert change.values == {"enable_backward": False}
    assert change.modules_existing


def test_clean_app_builds_each_module_once(measured):
    report = measured("clean")
    assert report.rebuilds == []
    assert report.summary.warm_builds == 0


def test_compare_with_the_hand_fixed_variant_is_improved(measured):
    result = compare(measured("late_module_options"), measured("late_module_options_fixed"))
    assert result.verdict == IMPROVED
    assert result.structure["identities"] == (2, 1)


def test_compare_with_a_dropped_launch_is_invalid(measured):
    result = compare(measured("late_module_options"), measured("late_module_options_drops_launch"))
    assert result.verdict == INVALID
    assert any("launch" in reason for reason in result.reasons)


def test_compare_with_itself_is_inconclusive(measured):
    report = measured("late_module_options")
    assert compare(report, report).verdict == INCONCLUSIVE
