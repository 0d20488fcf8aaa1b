"""warp-fix check: the verdict as pure functions over Reports built in code, then one real run end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from warp_fix.check import check_reports, result_lines
from warp_fix.report import (
    SCHEMA_VERSION,
    Output,
    Rebuild,
    RebuildReason,
    Report,
    Site,
    Stat,
    Summary,
    Trace,
    load_report,
)

PYTHON = sys.executable


def stat(*values: float) -> Stat:
    ordered = sorted(values)
    middle = ordered[len(ordered) // 2]
    return Stat(median=middle, mad=0.0 if len(values) < 2 else 5.0, values=list(values))


def make_report(
    identities: int = 2,
    source_bytes: int = 10_000,
    lto: int = 0,
    warm_builds: int = 0,
    cold_ms: tuple[float, ...] = (1000.0,),
    rebuilds: list[Rebuild] | None = None,
    launches: int = 4,
    successful: bool = True,
) -> Report:
    summary = Summary(
        cold_module_ms=stat(*cold_ms),
        native_compile_ms=stat(*cold_ms),
        cold_wall_ms=stat(*cold_ms),
        warm_wall_ms=stat(100.0),
        compile_elapsed_ms=stat(*cold_ms),
        warm_module_ms=stat(0.0),
        identities=identities,
        modules=identities,
        generated_source_bytes=source_bytes,
        lto_artifacts=lto,
        warm_builds=warm_builds,
    )
    return Report(
        schema_version=SCHEMA_VERSION,
        command=["python", "app.py"],
        cwd="/project",
        label=None,
        warp_version="1.19.0",
        backend="cpu",
        samples=[],
        summary=summary if successful else None,
        trace=Trace(launch_count=launches, launch_digest=f"digest-{launches}"),
        warm_trace=Trace(),
        rebuilds=rebuilds or [],
        output=Output("sha", "", 0, 0, True),
    )


LATE_KERNEL = Rebuild(
    module="app",
    device="cpu",
    from_hash="1111111aaaa",
    to_hash="2222222bbbb",
    build_seq=7,
    module_ms=250.0,
    reasons=[RebuildReason("kernel-added", "kernel late added", Site("app.py", 12, "<module>"))],
)


def test_identical_structure_passes():
    result = check_reports(make_report(), make_report())
    assert result.passed and result.exit_code == 0
    assert result.grew == [] and result.shrank == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("identities", 3), ("source_bytes", 12_000), ("lto", 1), ("warm_builds", 1)],
)
def test_each_structure_metric_that_grows_fails(field, value):
    result = check_reports(make_report(), make_report(**{field: value}))
    assert not result.passed and result.exit_code == 1
    assert len(result.grew) == 1


def test_growth_is_printed_with_the_why_rebuilt_lines():
    result = check_reports(make_report(), make_report(identities=3, rebuilds=[LATE_KERNEL]))
    lines = result_lines(result, "warp-fix.json")
    assert lines[0] == "warp-fix check: FAILED against warp-fix.json"
    assert "  grew: compiled module identities: 2 -> 3 (+1)" in lines
    assert "why rebuilt (this run):" in lines
    assert "  app 1111111 -> 2222222: kernel late added (app.py:12 in <module>)" in lines


def test_shrinking_passes_and_suggests_locking_the_gain_in():
    result = check_reports(make_report(identities=3), make_report(identities=2))
    assert result.passed and [c.metric for c in result.shrank] == ["identities"]
    assert any("--update" in line for line in result_lines(result, "b.json"))


def test_timing_is_ignored_unless_asked_for():
    slower = make_report(cold_ms=(5000.0,))
    assert check_reports(make_report(), slower).passed
    assert not check_reports(make_report(), slower, timing=True).passed


def test_timing_inside_the_noise_band_passes():
    baseline = make_report(cold_ms=(990.0, 1000.0, 1010.0))  # median 1000, MAD 5: band 10 ms
    assert check_reports(baseline, make_report(cold_ms=(1005.0, 1008.0, 1009.0)), timing=True).passed
    result = check_reports(baseline, make_report(cold_ms=(1100.0, 1100.0, 1100.0)), timing=True)
    assert [c.metric for c in result.grew] == ["cold_module_ms"]
    assert "noise band ±10" in result.grew[0].line()
    assert result.notes == []  # three samples each: no warning about the band


def test_timing_with_one_sample_warns_about_the_band():
    result = check_reports(make_report(), make_report(), timing=True)
    assert any("--samples 3" in note for note in result.notes)


def test_a_changed_workload_is_noted_not_excused():
    result = check_reports(make_report(), make_report(identities=3, launches=5))
    assert not result.passed
    assert any("workload changed" in note for note in result.notes)


def test_a_report_without_a_successful_sample_fails_with_the_reason():
    result = check_reports(make_report(successful=False), make_report())
    assert not result.passed
    assert result.problems == ["the baseline report has no successful sample: rewrite it with --update"]


def test_json_form_is_serialisable_and_says_passed():
    data = json.loads(json.dumps(check_reports(make_report(), make_report(identities=3)).to_json()))
    assert data["passed"] is False and data["grew"][0]["metric"] == "identities"


APP = """
    import warp as wp

    wp.config.quiet = True

    @wp.kernel
    def scale(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] * 2.0

    a = wp.ones(8, dtype=float, device="cpu")
    wp.launch(scale, dim=8, inputs=[a], device="cpu")
    {late}
    print(a.numpy().sum())
"""
LATE = """
    @wp.kernel
    def shift(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] + 1.0

    wp.launch(shift, dim=8, inputs=[a], device="cpu")
"""


def run_check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "warp_fix", "check", *args, "--", PYTHON, "app.py"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def write_app(directory: Path, late: str = "") -> None:
    late_code = textwrap.indent(textwrap.dedent(late), "    ").strip("\n")
    (directory / "app.py").write_text(textwrap.dedent(APP.format(late=late_code.lstrip())))


@pytest.mark.slow
def test_check_end_to_end_on_a_real_warp_program(tmp_path):
    write_app(tmp_path)
    created = run_check(tmp_path, "--baseline", "wf.json", "--update")
    assert created.returncode == 0, created.stderr
    assert load_report(tmp_path / "wf.json").summary.identities == 1

    same = run_check(tmp_path, "--baseline", "wf.json", "--json", "result.json")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "warp-fix check: passed" in same.stdout
    assert json.loads((tmp_path / "result.json").read_text())["passed"] is True

    write_app(tmp_path, LATE)  # a kernel defined after its module loaded: a second build of the module
    grown = run_check(tmp_path, "--baseline", "wf.json")
    assert grown.returncode == 1, grown.stdout + grown.stderr
    assert "grew: compiled module identities: 1 -> 2" in grown.stdout
    assert "why rebuilt (this run):" in grown.stdout
    assert "shift" in grown.stdout.split("why rebuilt (this run):")[1]
    assert "Traceback" not in grown.stderr


def test_a_missing_baseline_is_a_one_line_usage_error(tmp_path):
    proc = run_check(tmp_path, "--baseline", "missing.json")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert "--update" in proc.stderr
