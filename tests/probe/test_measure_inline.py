"""`measure` on small real Warp programs: what it records, and how it fails on bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import PYTHON, TWO_STAGE, write_app
from warp_fix.probe import BaselineFailed, ProbeError, measure


@pytest.fixture(scope="module")
def two_stage(tmp_path_factory):
    directory = tmp_path_factory.mktemp("two_stage")
    command = write_app(directory, TWO_STAGE)
    return directory, measure(command, directory, samples=1)


def test_records_both_builds_of_the_module_with_native_time(two_stage):
    _, report = two_stage
    builds = report.trace.builds
    assert [b.module for b in builds] == ["__main__", "__main__"]
    assert all(b.status == "compiled" and b.native_ms > 0 and b.block_dim == 1 for b in builds)
    assert builds[0].hash != builds[1].hash
    assert builds[1].kernels == ["scale", "shift"]


def test_build_site_is_the_launch_in_user_code(two_stage):
    _, report = two_stage
    assert [(b.site.file, b.site.line) for b in report.trace.builds] == [("app.py", 10), ("app.py", 17)]


def test_why_rebuilt_names_the_late_kernel_and_its_line(two_stage):
    _, report = two_stage
    (rebuild,) = report.rebuilds
    (reason,) = rebuild.reasons
    assert reason.kind == "kernel-added"
    assert "shift" in reason.detail
    assert (reason.site.file, reason.site.line) == ("app.py", 12)


def test_launches_carry_structure(two_stage):
    _, report = two_stage
    first = report.trace.launches[0]
    assert (first.function, first.dim, first.dtypes, first.device, first.adjoint) == (
        "scale",
        [8],
        ["array[float32,1]"],
        "cpu",
        False,
    )
    assert report.trace.launch_count == 2


def test_summary_counts_identities_source_and_warm_builds(two_stage):
    _, report = two_stage
    summary = report.summary
    assert summary.identities == 2
    assert summary.modules == 1
    assert summary.generated_source_bytes > 1000
    assert summary.warm_builds == 0
    assert summary.warm_module_ms.median < summary.cold_module_ms.median


def test_program_output_is_recorded_without_warp_noise(two_stage):
    _, report = two_stage
    assert report.output.head == "sum 24.0\n"
    assert report.output.deterministic is True
    profile = report.output.profile
    assert (profile.tokens(), profile.spreads, profile.runs, profile.text_difference) == (["24.0"], [], 2, "")


def test_nothing_is_written_into_the_project(two_stage):
    directory, _ = two_stage
    assert sorted(p.name for p in directory.iterdir()) == ["app.py"]


def test_report_round_trips_through_json(two_stage, tmp_path):
    from warp_fix.report import load_report

    _, report = two_stage
    report.save(tmp_path / "r.json")
    again = load_report(tmp_path / "r.json")
    assert again.trace.builds == report.trace.builds
    assert again.rebuilds == report.rebuilds
    assert again.summary == report.summary
    assert again.output == report.output


def test_command_not_found(tmp_path):
    with pytest.raises(ProbeError, match="command not found: no-such-tool"):
        measure(["no-such-tool"], tmp_path, samples=1)


def test_baseline_failure_is_reported_with_its_stderr(tmp_path):
    command = write_app(tmp_path, "import sys\nsys.exit('config file missing')\n")
    with pytest.raises(BaselineFailed, match=r"exit 1\): config file missing"):
        measure(command, tmp_path, samples=1)


def test_timeout_kills_the_command(tmp_path):
    command = write_app(tmp_path, "import time\ntime.sleep(60)\n")
    with pytest.raises(ProbeError, match="timed out"):
        measure(command, tmp_path, samples=1, timeout=1)


def test_warp_missing_in_the_target_interpreter(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    command = write_app(tmp_path, "import warp\n")
    command[0] = str(tmp_path / "venv" / "bin" / "python")
    with pytest.raises(ProbeError, match="Warp is not importable in the target interpreter"):
        measure(command, tmp_path, samples=1)


def test_a_command_that_never_imports_warp(tmp_path):
    command = write_app(tmp_path, "print('hello')\n")
    with pytest.raises(ProbeError, match="never imported warp"):
        measure(command, tmp_path, samples=1)


def test_no_launches_makes_the_workload_unverifiable(tmp_path):
    command = write_app(tmp_path, "import warp as wp\nprint(wp.config.version)\n")
    report = measure(command, tmp_path, samples=1)
    assert any("workload check is unverifiable" in w for w in report.warnings)


def test_some_failing_samples_are_counted_and_left_out(tmp_path):
    counter = tmp_path / "runs"
    command = write_app(
        tmp_path,
        f"""
        import pathlib, sys
        import warp as wp
        counter = pathlib.Path({str(counter)!r})
        runs = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(runs + 1))
        if runs == 2:
            sys.exit("flaky")
        print("ok")
        """,
    )
    report = measure(command, tmp_path, samples=2)
    assert [s.ok for s in report.samples] == [True, False]
    assert any("1 of 2 samples failed" in w for w in report.warnings)
    assert report.summary.cold_wall_ms.values == [report.samples[0].cold_wall_ms]


def test_large_output_is_streamed(tmp_path):
    command = write_app(
        tmp_path,
        """
        import sys
        import warp as wp
        line = "x" * 1023 + "\\n"
        for _ in range(50 * 1024):
            sys.stdout.write(line)
        """,
    )
    report = measure(command, tmp_path, samples=1)
    assert report.output.bytes >= 50 * 1024 * 1024
    assert len(report.output.head) == 64 * 1024


def test_nondeterministic_output_is_detected(tmp_path):
    command = write_app(tmp_path, "import time\nimport warp as wp\nprint(time.time_ns())\n")
    report = measure(command, tmp_path, samples=1)
    assert report.output.deterministic is False
    assert not report.output.text_varies and len(report.output.profile.spreads) == 1  # only the number moved


def test_tracer_chains_to_an_existing_sitecustomize(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import builtins\nbuiltins.CHAINED = True\n")
    command = write_app(
        tmp_path, "import builtins\nimport warp as wp\nprint(getattr(builtins, 'CHAINED', False))\n"
    )
    import os

    env = dict(os.environ, PYTHONPATH=str(site))
    report = measure(command, tmp_path, samples=1, env=env)
    assert report.output.head == "True\n"
    assert report.trace.warp_version


def test_python_dash_m_and_pytest_are_traced(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(TWO_STAGE)
    report = measure([PYTHON, "-m", "pkg"], tmp_path, samples=1)
    assert len(report.trace.builds) == 2
    (tmp_path / "test_app.py").write_text("def test_runs():\n    import pkg.__main__\n")
    report = measure(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_app.py"], tmp_path, samples=1
    )
    assert len(report.trace.builds) == 2


REPEATED = """
import warp as wp

@wp.kernel
def smooth(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 0.5 * a[i] + 0.25

a = wp.ones(4096, dtype=float, device="cpu")
for _ in range(5):
    wp.launch(smooth, dim=4096, inputs=[a], device="cpu")
print("sum", round(float(a.numpy().sum()), 3))
"""


def test_kernel_time_is_recorded_per_module_without_the_loading_launch(tmp_path):
    command = write_app(tmp_path, REPEATED)
    report = measure(command, tmp_path, samples=1, kernel_timing=True)
    (timed,) = report.warm_trace.kernel_times
    assert (timed.module, timed.launches) == ("__main__", 4)
    assert timed.ms > 0
    assert report.summary.kernel_ms.median == pytest.approx(timed.ms, abs=1e-3)


def test_kernel_time_is_off_unless_asked_for(two_stage):
    _, report = two_stage
    assert report.warm_trace.kernel_times == [] and report.summary.kernel_ms is None
    assert report.samples[0].kernel_ms is None
